/**
 * Self-service on the caller's own authenticators: changing the username or password needs the current
 * password (parity: docs/reference-notes.md §5.2; a wrong one is 401 UNAUTHORIZED naming currentPassword).
 */
import { withTx } from '../../store/db.js';
import { updateRow } from '../../store/crud.js';
import { iso, withDb, type Ctx } from '../ctx.js';
import { DomainError, fieldError, notFound } from '../errors.js';
import { verifyPassword } from '../password.js';
import { getRow } from '../crud.js';
import { authenticators, hashForIdentity } from '../resources/authenticator.js';

export interface OwnAuthenticatorChange {
  username?: string | null;
  password?: string | null;
  currentPassword: string;
  tags?: Record<string, unknown> | null;
}

export async function updateOwnAuthenticator(
  ctx: Ctx,
  identityId: string,
  id: string,
  body: OwnAuthenticatorChange,
  mode: 'update' | 'patch',
): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const row = await getRow(tctx, authenticators, id).catch(() => null);
    if (!row || row.identityId !== identityId) throw notFound(id, 'authenticator');
    if (row.method !== 'updb') throw new DomainError('CAN_NOT_UPDATE_AUTHENTICATOR', { urlVars: { id } });
    if (!(await verifyPassword(row.passwordHash as string, body.currentPassword))) {
      throw new DomainError('UNAUTHORIZED', {
        cause: { field: 'currentPassword', reason: 'the current password is not correct', value: '******' },
        urlVars: { id },
      });
    }
    const values: Record<string, unknown> = { updatedAt: iso(ctx.now()) };
    if (typeof body.username === 'string') {
      if (body.username.length < 4 || body.username.length > 100) throw fieldError('username', 'username must be 4 to 100 characters', body.username);
      values.username = body.username;
    }
    if (typeof body.password === 'string') {
      values.passwordHash = await hashForIdentity(tctx, identityId, body.password);
      values.failedAttempts = 0;
    }
    if (body.tags !== undefined) values.tags = body.tags ?? {};
    else if (mode === 'update') values.tags = {};
    await updateRow(trx, authenticators, id, values);
  });
}
