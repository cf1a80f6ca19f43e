/**
 * Self-service on the caller's own authenticators: changing the username or password needs the current
 * password (parity: docs/reference-notes.md §5.2; a wrong one is 401 UNAUTHORIZED naming currentPassword).
 */
import { withTx } from '../../../store/db.js';
import { findRowById, updateRow } from '../../../store/crud.js';
import { recordEntityChange } from '../../events/entity-change.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError, fieldError, notFound } from '../../errors.js';
import { verifyPassword } from '../../password.js';
import { getRow } from '../../crud.js';
import { authenticators } from '../../resources/authenticator.js';
import { hashForIdentity } from '../hooks/authenticator.js';
import { recordFailedAttempt, reserveAttempt } from './password-attempts.js';

export interface OwnAuthenticatorChange {
  username?: string | null;
  password?: string | null;
  currentPassword: string;
  tags?: Record<string, unknown> | null;
}

const wrongCurrentPassword = (id: string) =>
  new DomainError('UNAUTHORIZED', {
    cause: { field: 'currentPassword', reason: 'the current password is not correct', value: '******' },
    urlVars: { id },
  });

/**
 * The current password is checked like a login (password-attempts.ts): the attempt is counted atomically, a
 * wrong one counts toward the policy's lockout and a right one resets the count. Argon2id (checking the current
 * password, hashing the new one) runs outside the transaction, which only writes.
 */
export async function updateOwnAuthenticator(
  ctx: Ctx,
  identityId: string,
  id: string,
  body: OwnAuthenticatorChange,
  mode: 'update' | 'patch',
): Promise<void> {
  const row = await getRow(ctx, authenticators, id).catch(() => null);
  if (!row || row.identityId !== identityId) throw notFound(id, 'authenticator');
  if (row.method !== 'updb') throw new DomainError('CAN_NOT_UPDATE_AUTHENTICATOR', { urlVars: { id } });
  const values: Record<string, unknown> = { updatedAt: iso(ctx.now()) };
  if (typeof body.username === 'string') {
    if (body.username.length < 4 || body.username.length > 100)
      throw fieldError('username', 'username must be 4 to 100 characters', body.username);
    values.username = body.username;
  }

  const reservation = await reserveAttempt(ctx, { authenticatorId: id, identityId }, 'change');
  const verified = await verifyPassword(
    reservation.ok ? (row.passwordHash ?? '') : undefined,
    body.currentPassword,
    ctx.settings.passwordCost,
  );
  if (!reservation.ok) throw wrongCurrentPassword(id);
  if (!verified) {
    await recordFailedAttempt(ctx, reservation);
    throw wrongCurrentPassword(id);
  }
  if (typeof body.password === 'string') values.passwordHash = await hashForIdentity(ctx, identityId, body.password);
  if (body.tags !== undefined) values.tags = body.tags ?? {};
  else if (mode === 'update') values.tags = {};
  values.failedAttempts = 0;

  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const current = await getRow(tctx, authenticators, id).catch(() => null);
    if (!current || current.identityId !== identityId) throw notFound(id, 'authenticator');
    // The password checked above must still be the current one (another change may have landed meanwhile).
    if (current.passwordHash !== row.passwordHash) throw wrongCurrentPassword(id);
    await updateRow(trx, authenticators, id, values);
    await recordEntityChange(tctx, authenticators, id, 'updated', current, await findRowById(trx, authenticators, id));
  });
}
