/**
 * Authenticators: the credentials of an identity, at most one per method (parity: §10.5). Passwords are
 * hashed with Argon2id under the identity's auth-policy rules and never rendered.
 */
import { Type } from '../schema-type.js';
import { authenticatorIdOf, authenticatorOwner } from '../../store/authenticators.js';
import { identityAuthPolicyId, identityExists, isDefaultAdminIdentity } from '../../store/identities.js';
import type { Ctx } from '../ctx.js';
import { DomainError, fieldError } from '../errors.js';
import { checkPasswordRules, hashPassword } from '../password.js';
import { attachRefs, IDENTITY_REF } from '../refs.js';
import type { Input, ResourceDef, Row, WriteMode } from '../resource.js';
import { PasswordSchema, UsernameSchema } from '../schemas.js';
import { policyForIdentity } from './auth-policy.js';
import { certAuthenticatorFromPem } from '../services/cert-authenticator.js';

/**
 * Hashes a new password after checking it against the rules of the identity's auth policy. Outside any
 * transaction only (hashPassword refuses one): callers hash first, then open their transaction.
 */
export async function hashForIdentity(
  ctx: Ctx,
  identityId: string,
  password: string,
  field = 'password',
): Promise<string> {
  return hashUnderPolicy(ctx, await identityAuthPolicyId(ctx.db, identityId), password, field);
}

/** As {@link hashForIdentity}, for an identity not stored yet that will have auth policy `authPolicyId`. */
export async function hashUnderPolicy(
  ctx: Ctx,
  authPolicyId: string | undefined,
  password: string,
  field = 'password',
): Promise<string> {
  const policy = await policyForIdentity(ctx.db, authPolicyId);
  checkPasswordRules(field, password, policy.primary.updb);
  return hashPassword(password, ctx.db);
}

/**
 * Before the write's transaction: the hash of a new password of a password authenticator (`pre.passwordHash`).
 * Nothing when the write sets no password or cannot be one of a password authenticator; `prepare` refuses it.
 */
async function beforeTx(ctx: Ctx, body: Input, mode: WriteMode, id?: string): Promise<Row | undefined> {
  if (typeof body.password !== 'string') return undefined;
  const target =
    mode === 'create'
      ? { identityId: body.identityId, method: body.method }
      : id === undefined
        ? undefined
        : await authenticatorOwner(ctx.db, id);
  if (target?.method !== 'updb' || typeof target.identityId !== 'string') return undefined;
  if (!(await identityExists(ctx.db, target.identityId))) return undefined;
  return { passwordHash: await hashForIdentity(ctx, target.identityId, body.password) };
}

async function prepare(ctx: Ctx, input: Input, mode: WriteMode, existing?: Row, pre?: Row): Promise<Input> {
  const out = { ...input };
  const method = (mode === 'create' ? out.method : existing?.method) as string;
  if (mode === 'create') {
    if (typeof out.identityId !== 'string' || !(await identityExists(ctx.db, out.identityId)))
      throw fieldError('identityId', 'no identity found with the given id', out.identityId);
    if (method !== 'updb' && method !== 'cert') throw fieldError('method', 'method must be one of updb, cert', method);
    if ((await authenticatorIdOf(ctx.db, out.identityId, method)) !== undefined)
      throw new DomainError('MAX_AUTHENTICATOR_METHODS_REACHED', {
        cause: { field: 'method', reason: 'identity already has an authenticator of this method', value: method },
      });
  }
  if (method === 'updb') {
    if (mode === 'create') {
      if (typeof out.username !== 'string' || typeof out.password !== 'string') {
        throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', {
          cause: { field: 'username', reason: 'username and password are required for updb', value: null },
        });
      }
      if (out.username.length < 4 || out.username.length > 100)
        throw fieldError('username', 'username must be 4 to 100 characters', out.username);
    }
    if (out.certPem !== undefined && out.certPem !== null) {
      throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', {
        cause: { field: 'certPem', reason: 'certPem does not apply to updb', value: null },
      });
    }
    if (out.username === null) delete out.username;
    if (typeof out.password === 'string') {
      // Hashed by beforeTx, before this transaction opened (a caller with its own transaction passes it in).
      if (typeof pre?.passwordHash !== 'string')
        throw new Error('a new password must be hashed before the transaction opens');
      out.passwordHash = pre.passwordHash;
      out.failedAttempts = 0;
    }
    delete out.password;
  } else {
    if (mode !== 'create')
      throw new DomainError('CAN_NOT_UPDATE_AUTHENTICATOR', { urlVars: { id: existing?.id as string } });
    if (out.username !== undefined || out.password !== undefined) {
      throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', {
        cause: { field: 'username', reason: 'username and password do not apply to cert', value: null },
      });
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
    // The certificate `extend` issued, waiting for `extend-verify` (services/cert-extension.ts).
    unverifiedCertPem: { schema: Type.String(), storage: 'text', hidden: true },
    unverifiedFingerprint: { schema: Type.String(), storage: 'text', hidden: true },
  },
  extraFields: { identity: { kind: 'scalar', type: 'string', column: 'identityId' } },
  hooks: {
    beforeTx,
    prepare,
    decorate,
    // The default admin keeps its password authenticator: without it nobody could log in to recover.
    async beforeDelete(ctx, row) {
      if (row.method !== 'updb') return;
      if (await isDefaultAdminIdentity(ctx.db, row.identityId as string))
        throw new DomainError('ENTITY_CAN_NOT_BE_DELETED', { urlVars: { id: row.id as string } });
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
