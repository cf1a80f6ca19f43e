/**
 * Authenticators: the credentials of an identity, at most one per method (parity: §10.5). Passwords are
 * hashed with Argon2id under the identity's auth-policy rules and never rendered.
 */
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../ctx.js';
import { DomainError, fieldError } from '../errors.js';
import { checkPasswordRules, hashPassword } from '../password.js';
import { attachRefs, IDENTITY_REF } from '../refs.js';
import type { Input, ResourceDef, Row } from '../resource.js';
import { PasswordSchema, UsernameSchema } from '../schemas.js';
import { policyForIdentity } from './auth-policy.js';
import { certAuthenticatorFromPem } from '../services/cert-authenticator.js';

/** Hashes a new password after checking it against the rules of the identity's auth policy. */
export async function hashForIdentity(ctx: Ctx, identityId: string, password: string, field = 'password'): Promise<string> {
  const identity = await ctx.db.selectFrom('identities').select('authPolicyId').where('id', '=', identityId).executeTakeFirst();
  const policy = await policyForIdentity(ctx.db, identity?.authPolicyId);
  checkPasswordRules(field, password, policy.primary.updb);
  return hashPassword(password);
}

async function prepare(ctx: Ctx, input: Input, mode: 'create' | 'update' | 'patch', existing?: Row): Promise<Input> {
  const out = { ...input };
  const method = (mode === 'create' ? out.method : existing?.method) as string;
  if (mode === 'create') {
    const identity = await ctx.db.selectFrom('identities').select('id').where('id', '=', out.identityId as string).executeTakeFirst();
    if (!identity) throw fieldError('identityId', 'no identity found with the given id', out.identityId);
    if (method !== 'updb' && method !== 'cert') throw fieldError('method', 'method must be one of updb, cert', method);
    const taken = await ctx.db
      .selectFrom('authenticators')
      .select('id')
      .where('identityId', '=', out.identityId as string)
      .where('method', '=', method)
      .executeTakeFirst();
    if (taken) throw new DomainError('MAX_AUTHENTICATOR_METHODS_REACHED', { cause: { field: 'method', reason: 'identity already has an authenticator of this method', value: method } });
  }
  if (method === 'updb') {
    if (mode === 'create') {
      if (typeof out.username !== 'string' || typeof out.password !== 'string') {
        throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', { cause: { field: 'username', reason: 'username and password are required for updb', value: null } });
      }
      if (out.username.length < 4 || out.username.length > 100) throw fieldError('username', 'username must be 4 to 100 characters', out.username);
    }
    if (out.certPem !== undefined && out.certPem !== null) {
      throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', { cause: { field: 'certPem', reason: 'certPem does not apply to updb', value: null } });
    }
    if (out.username === null) delete out.username;
    if (typeof out.password === 'string') {
      const identityId = (out.identityId ?? existing?.identityId) as string;
      out.passwordHash = await hashForIdentity(ctx, identityId, out.password);
      out.failedAttempts = 0;
    }
    delete out.password;
  } else {
    if (mode !== 'create') throw new DomainError('CAN_NOT_UPDATE_AUTHENTICATOR', { urlVars: { id: existing?.id as string } });
    if (out.username !== undefined || out.password !== undefined) {
      throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', { cause: { field: 'username', reason: 'username and password do not apply to cert', value: null } });
    }
    // Certificate authenticators from a PEM are checked against the trusted CAs (one cert, chains, unused).
    Object.assign(out, await certAuthenticatorFromPem(ctx, out.certPem));
  }
  return out;
}

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, IDENTITY_REF);
  for (const r of rows) {
    r.isIssuedByNetwork = r.method === 'cert' ? !r.caId : undefined;
  }
}

export const authenticators: ResourceDef = {
  name: 'authenticators',
  label: 'authenticator',
  table: 'authenticators',
  schemaName: 'authenticator',
  props: {
    identityId: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    method: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    username: { schema: UsernameSchema, storage: 'text', create: 'optional', update: 'required', patch: true, filter: true },
    password: { schema: PasswordSchema, storage: 'text', virtual: true, create: 'optional', update: 'required', patch: true },
    certPem: { schema: Type.String(), storage: 'text', create: 'optional', filter: true },
    fingerprint: { schema: Type.String(), storage: 'text', filter: true },
    passwordHash: { schema: Type.String(), storage: 'text', hidden: true },
    failedAttempts: { schema: Type.Integer(), storage: 'int', hidden: true, default: 0 },
    caId: { schema: Type.String(), storage: 'text', hidden: true },
    // The certificate `extend` issued, waiting for `extend-verify` (services/cert-extension.ts).
    unverifiedCertPem: { schema: Type.String(), storage: 'text', hidden: true },
    unverifiedFingerprint: { schema: Type.String(), storage: 'text', hidden: true },
  },
  extraFields: { identity: { kind: 'scalar', type: 'string', column: 'identityId' } },
  hooks: {
    prepare,
    decorate,
    // The default admin keeps its password authenticator: without it nobody could log in to recover.
    async beforeDelete(ctx, row) {
      if (row.method !== 'updb') return;
      const owner = await ctx.db.selectFrom('identities').select('isDefaultAdmin').where('id', '=', row.identityId as string).executeTakeFirst();
      if (owner?.isDefaultAdmin) throw new DomainError('ENTITY_CAN_NOT_BE_DELETED', { urlVars: { id: row.id as string } });
    },
  },
  ops: {
    list: 'listAuthenticators',
    create: 'createAuthenticator',
    detail: 'detailAuthenticator',
    update: 'updateAuthenticator',
    patch: 'patchAuthenticator',
    delete: 'deleteAuthenticator',
  },
  envelopes: { list: 'listAuthenticatorsEnvelope', detail: 'detailAuthenticatorEnvelope' },
};
