/**
 * Authenticators: the credentials of an identity, at most one per method (parity: §10.5). Passwords are
 * hashed with Argon2id under the identity's auth-policy rules and never rendered.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { PasswordSchema, UsernameSchema } from '../schemas.js';

export const authenticators = defineResource({
  name: 'authenticators',
  label: 'authenticator',
  table: 'authenticators',
  schemaName: 'authenticator',
  props: {
    identityId: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    method: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    username: {
      schema: UsernameSchema,
      storage: 'text',
      create: 'optional',
      update: 'required',
      patch: true,
      filter: true,
    },
    password: {
      schema: PasswordSchema,
      storage: 'text',
      virtual: true,
      create: 'optional',
      update: 'required',
      patch: true,
    },
    certPem: { schema: Type.String(), storage: 'text', create: 'optional', filter: true },
    fingerprint: { schema: Type.String(), storage: 'text', filter: true },
    passwordHash: { schema: Type.String(), storage: 'text', hidden: true },
    failedAttempts: { schema: Type.Integer(), storage: 'int', hidden: true, default: 0 },
    caId: { schema: Type.String(), storage: 'text', hidden: true },
    // The certificate `extend` issued, waiting for `extend-verify` (services/authentication/cert-extension.ts).
    unverifiedCertPem: { schema: Type.String(), storage: 'text', hidden: true },
    unverifiedFingerprint: { schema: Type.String(), storage: 'text', hidden: true },
    // An administrator's request that the certificate be extended (`request-extend`); cleared by extend-verify.
    isExtendRequested: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
    isKeyRollRequested: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
    extendRequestedAt: { schema: Type.String(), storage: 'datetime', filter: true },
    lastExtendRolledKeys: { schema: Type.Boolean(), storage: 'bool' },
  },
  extraFields: { identity: { kind: 'scalar', type: 'string', column: 'identityId' } },
  ops: {
    list: 'listAuthenticators',
    create: 'createAuthenticator',
    detail: 'detailAuthenticator',
    update: 'updateAuthenticator',
    patch: 'patchAuthenticator',
    delete: 'deleteAuthenticator',
  },
  envelopes: { list: 'listAuthenticatorsEnvelope', detail: 'detailAuthenticatorEnvelope' },
});
