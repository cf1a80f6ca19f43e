/**
 * `updb`: username and password. The password is checked against the identity's auth-policy rules and hashed
 * with Argon2id before the write's transaction opens; it is never stored or rendered as such.
 */
import { identityAuthPolicyId, isDefaultAdminIdentity } from '../../store/identities.js';
import type { Ctx } from '../ctx.js';
import { DomainError, fieldError } from '../errors.js';
import { checkPasswordRules, hashPassword } from '../password.js';
import { policyForIdentity } from '../services/hooks/auth-policy.js';
import type { AuthenticatorMethodModule } from './method.js';

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
  return hashPassword(password, ctx.db, ctx.settings.passwordCost);
}

export const updbMethod: AuthenticatorMethodModule = {
  id: 'updb',
  async beforeTx(ctx, body, identityId) {
    if (typeof body.password !== 'string') return undefined;
    return { passwordHash: await hashForIdentity(ctx, identityId, body.password) };
  },
  async prepare(_ctx, out, mode, _existing, pre) {
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
  },
  // The default admin keeps its password authenticator: without it nobody could log in to recover.
  async beforeDelete(ctx, row) {
    if (await isDefaultAdminIdentity(ctx.db, String(row.identityId)))
      throw new DomainError('ENTITY_CAN_NOT_BE_DELETED', { urlVars: { id: String(row.id) } });
  },
};
