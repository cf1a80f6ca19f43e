/**
 * Authenticators (parity: §10.5): at most one per method per identity. What each method checks, stores and
 * shows is its module in src/model/authenticators; this dispatches on `method` (the stored one after create).
 */
import { deleteOidcSessionsOfAuthenticator } from '../../../store/oidc.js';
import { authenticatorIdOf, authenticatorOwner } from '../../../store/authenticators.js';
import { identityExists } from '../../../store/identities.js';
import { authenticatorMethod } from '../../authenticators/index.js';
import type { Ctx } from '../../ctx.js';
import { DomainError, fieldError } from '../../errors.js';
import { attachRefs, IDENTITY_REF } from '../../refs.js';
import type { Input, ResourceHooks, Row, WriteMode } from '../../resource.js';

export { hashForIdentity, hashUnderPolicy } from '../../authenticators/updb.js';

/**
 * Before the write's transaction: the method's work outside it (a password's hash, `pre.passwordHash`).
 * Nothing when the write names no existing identity or method; `prepare` refuses it.
 */
async function beforeTx(ctx: Ctx, body: Input, mode: WriteMode, id?: string): Promise<Row | undefined> {
  const target =
    mode === 'create'
      ? { identityId: body.identityId, method: body.method }
      : id === undefined
        ? undefined
        : await authenticatorOwner(ctx.db, id);
  const method = authenticatorMethod(target?.method);
  if (!method?.beforeTx || typeof target?.identityId !== 'string') return undefined;
  if (!(await identityExists(ctx.db, target.identityId))) return undefined;
  return method.beforeTx(ctx, body, target.identityId);
}

async function prepare(ctx: Ctx, input: Input, mode: WriteMode, existing?: Row, pre?: Row): Promise<Input> {
  const out = { ...input };
  const methodId = mode === 'create' ? out.method : existing?.method;
  const method = authenticatorMethod(methodId);
  if (mode === 'create') {
    if (typeof out.identityId !== 'string' || !(await identityExists(ctx.db, out.identityId)))
      throw fieldError('identityId', 'no identity found with the given id', out.identityId);
    if (!method) throw fieldError('method', 'method must be one of updb, cert', methodId);
    if ((await authenticatorIdOf(ctx.db, out.identityId, method.id)) !== undefined)
      throw new DomainError('MAX_AUTHENTICATOR_METHODS_REACHED', {
        cause: { field: 'method', reason: 'identity already has an authenticator of this method', value: method.id },
      });
  }
  if (!method) throw new Error(`authenticator ${String(existing?.id)} has an unknown method`);
  await method.prepare(ctx, out, mode, existing, pre);
  return out;
}

export const authenticatorHooks: ResourceHooks = {
  beforeTx,
  prepare,
  async decorate(ctx, rows) {
    await attachRefs(ctx, rows, IDENTITY_REF);
    for (const r of rows) authenticatorMethod(r.method)?.decorate?.(r);
  },
  async beforeDelete(ctx, row) {
    await authenticatorMethod(row.method)?.beforeDelete?.(ctx, row);
    // Tokens of OIDC logins made with it stop at once: their API sessions end (docs/decisions.md, "OIDC login").
    await deleteOidcSessionsOfAuthenticator(ctx.db, String(row.id));
  },
};
