/** Identity actions beyond CRUD: disable and enable (parity: docs/reference-notes.md §10.4). */
import { iso, withDb, type Ctx } from '../../ctx.js';
import { resetIdentityFailedAttempts } from '../../../store/authenticators.js';
import { withTx } from '../../../store/db.js';
import { setIdentityDisabled } from '../../../store/identities.js';
import { getRow } from '../../crud.js';
import { DomainError } from '../../errors.js';
import { identities } from '../../resources/identity.js';
import { findRowById } from '../../../store/crud.js';
import { recordEntityChange } from '../../events/entity-change.js';
import { deleteIdentityApiSessions } from '../api-session/api-session.js';

/** Disables for `durationMinutes` (0 or less: indefinitely) and ends the identity's API sessions. */
export async function disableIdentity(ctx: Ctx, id: string, durationMinutes: number): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const row = await getRow(tctx, identities, id);
    // The default admin cannot be locked out by another admin (or by itself): it is the way back in.
    if (row.isDefaultAdmin)
      throw new DomainError('ENTITY_CAN_NOT_BE_UPDATED', {
        urlVars: { id },
        cause: { message: 'the default admin cannot be disabled' },
      });
    const now = ctx.now();
    const until = durationMinutes > 0 ? iso(new Date(now.getTime() + durationMinutes * 60_000)) : null;
    await setIdentityDisabled(trx, id, { disabledAt: iso(now), disabledUntil: until }, iso(now));
    await deleteIdentityApiSessions(tctx, id);
    await recordEntityChange(tctx, identities, id, 'updated', row, await findRowById(trx, identities, id));
  });
}

export async function enableIdentity(ctx: Ctx, id: string): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const row = await getRow(tctx, identities, id);
    await setIdentityDisabled(trx, id, { disabledAt: null, disabledUntil: null }, iso(ctx.now()));
    await resetIdentityFailedAttempts(trx, id);
    await recordEntityChange(tctx, identities, id, 'updated', row, await findRowById(trx, identities, id));
  });
}
