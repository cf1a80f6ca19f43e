/**
 * The single place that loads `@peculiar/x509`.
 *
 * Why this wrapper: the library resolves its algorithm services through `tsyringe`, which refuses to load unless
 * the `Reflect.getMetadata` polyfill is installed first. ES modules evaluate their imports in source order, so
 * importing `reflect-metadata` on the line before guarantees that, whichever module of `src/pki` loads first.
 * Every other file of `src/pki` imports `x509` from here, never from the package directly.
 *
 * The crypto provider is set to Node's WebCrypto explicitly (it is also `globalThis.crypto` on Node ≥ 20), so
 * signing and verification always run in Node's native code.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };
