/**
 * Key generation and key-type policy.
 *
 * Keys are generated and stored with `node:crypto` (native, fast RSA generation, PKCS#8 PEM on disk) and only
 * converted to WebCrypto `CryptoKey`s at the moment `@peculiar/x509` needs to sign with them.
 */
import { createPrivateKey, createPublicKey, generateKeyPair as generateKeyPairCb, webcrypto } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { PkiError } from './errors.js';

const generateKeyPairAsync = promisify(generateKeyPairCb);

/** The key types this module generates. */
export type KeyType = 'ec-p256' | 'ec-p384' | 'rsa-2048' | 'rsa-3072' | 'rsa-4096';

/** All {@link KeyType} values, e.g. for validating a config or CLI option. */
export const KEY_TYPES: readonly KeyType[] = ['ec-p256', 'ec-p384', 'rsa-2048', 'rsa-3072', 'rsa-4096'];

/** What a key is, as far as certificate policy cares. */
export type KeyDescription =
  | { readonly kind: 'rsa'; readonly bits: number }
  | { readonly kind: 'ec'; readonly curve: 'P-256' | 'P-384' | 'P-521' }
  | { readonly kind: 'other'; readonly type: string };

/** JWS algorithms the module signs and verifies with. */
export type JwsAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

/** A freshly generated key pair. */
export interface GeneratedKeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

/** Generates a key pair of `type` with Node's native implementation. */
export async function generateKeyPair(type: KeyType): Promise<GeneratedKeyPair> {
  switch (type) {
    case 'ec-p256':
      return generateKeyPairAsync('ec', { namedCurve: 'P-256' });
    case 'ec-p384':
      return generateKeyPairAsync('ec', { namedCurve: 'P-384' });
    case 'rsa-2048':
      return generateKeyPairAsync('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
    case 'rsa-3072':
      return generateKeyPairAsync('rsa', { modulusLength: 3072, publicExponent: 0x10001 });
    case 'rsa-4096':
      return generateKeyPairAsync('rsa', { modulusLength: 4096, publicExponent: 0x10001 });
    default:
      throw new PkiError('invalid-argument', `unknown key type ${String(type)}`);
  }
}

const CURVES: Record<string, 'P-256' | 'P-384' | 'P-521'> = {
  prime256v1: 'P-256',
  'P-256': 'P-256',
  secp384r1: 'P-384',
  'P-384': 'P-384',
  secp521r1: 'P-521',
  'P-521': 'P-521',
};

/** Describes a public or private key (algorithm and size). */
export function describeKey(key: KeyObject): KeyDescription {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') return { kind: 'rsa', bits: details.modulusLength ?? 0 };
  if (key.asymmetricKeyType === 'ec') {
    const curve = CURVES[details.namedCurve ?? ''];
    if (curve !== undefined) return { kind: 'ec', curve };
    return { kind: 'other', type: `ec-${details.namedCurve ?? 'unknown'}` };
  }
  return { kind: 'other', type: key.asymmetricKeyType ?? key.type };
}

/** A short human-readable name of a key, e.g. `rsa-2048` or `ec-P-256`. */
export function keyLabel(desc: KeyDescription): string {
  if (desc.kind === 'rsa') return `rsa-${desc.bits}`;
  if (desc.kind === 'ec') return `ec-${desc.curve}`;
  return desc.type;
}

/**
 * Accepts the keys the controller is willing to certify: RSA of at least 2048 bits and EC on the NIST curves
 * P-256, P-384 and P-521 (what the reference's Go stack and the OpenZiti SDKs generate).
 * @throws PkiError `unsupported-key` otherwise.
 */
export function assertAcceptableKey(key: KeyObject): KeyDescription {
  const desc = describeKey(key);
  if (desc.kind === 'rsa' && desc.bits >= 2048) return desc;
  if (desc.kind === 'ec') return desc;
  throw new PkiError(
    'unsupported-key',
    `unsupported key ${keyLabel(desc)}: expected RSA of at least 2048 bits or EC P-256/P-384/P-521`,
  );
}

/** The JWS algorithm for a signing key: RS256 for RSA, ES256/ES384/ES512 by EC curve (as the reference). */
export function jwsAlgorithmFor(key: KeyObject): JwsAlgorithm {
  const desc = assertAcceptableKey(key);
  if (desc.kind === 'rsa') return 'RS256';
  if (desc.kind === 'ec') return desc.curve === 'P-256' ? 'ES256' : desc.curve === 'P-384' ? 'ES384' : 'ES512';
  throw new PkiError('unsupported-key', 'unsupported signing key');
}

/** A private key ready for WebCrypto signing, with the algorithm parameters `@peculiar/x509` expects. */
export interface WebSigningKey {
  readonly key: webcrypto.CryptoKey;
  /** Passed as `signingAlgorithm`; fixes the hash (SHA-256 for RSA and P-256, SHA-384 for P-384, SHA-512 for P-521). */
  readonly algorithm: { name: string; hash: string };
}

/** Converts a `node:crypto` private key into a non-extractable WebCrypto signing key. */
export async function toWebSigningKey(privateKey: KeyObject): Promise<WebSigningKey> {
  const desc = assertAcceptableKey(privateKey);
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  if (desc.kind === 'rsa') {
    const key = await webcrypto.subtle.importKey(
      'pkcs8',
      pkcs8,
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    return { key, algorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } };
  }
  if (desc.kind === 'ec') {
    const hash = desc.curve === 'P-256' ? 'SHA-256' : desc.curve === 'P-384' ? 'SHA-384' : 'SHA-512';
    const key = await webcrypto.subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: desc.curve }, false, [
      'sign',
    ]);
    return { key, algorithm: { name: 'ECDSA', hash } };
  }
  throw new PkiError('unsupported-key', 'unsupported signing key');
}

/** Serialises a private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). */
export function privateKeyToPem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** The SubjectPublicKeyInfo DER of a public (or private) key. */
export function publicKeySpkiDer(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ format: 'der', type: 'spki' });
}

/**
 * Parses a private key PEM (PKCS#8, PKCS#1 or SEC1).
 * @throws PkiError `not-pem` when no key can be read from it.
 */
export function parsePrivateKeyPem(pem: string | KeyObject): KeyObject {
  if (typeof pem !== 'string') return pem;
  try {
    return createPrivateKey(pem);
  } catch (cause) {
    throw new PkiError('not-pem', 'could not read a private key from the PEM text', { cause });
  }
}

/** True when `privateKey` is the private half of `publicKey`. */
export function keysMatch(privateKey: KeyObject, publicKey: KeyObject): boolean {
  return publicKeySpkiDer(privateKey).equals(publicKeySpkiDer(publicKey));
}
