/** The authenticator methods, one module each, by id. */
import { certMethod } from './cert.js';
import type { AuthenticatorMethodModule } from './method.js';
import { updbMethod } from './updb.js';

export const AUTHENTICATOR_METHODS: Readonly<Record<string, AuthenticatorMethodModule>> = {
  updb: updbMethod,
  cert: certMethod,
};

/** The module of authenticator method `id`, if there is one. */
export const authenticatorMethod = (id: unknown): AuthenticatorMethodModule | undefined =>
  typeof id === 'string' && Object.hasOwn(AUTHENTICATOR_METHODS, id) ? AUTHENTICATOR_METHODS[id] : undefined;
