/**
 * Turning an authenticator back into an enrollment (parity: docs/reference-notes.md §7.2): an admin's way to
 * let a user who lost a key or password enroll again. The authenticator is deleted and an enrollment of the
 * matching method created in one transaction: `updb` → `updb` with the same username, a network-issued `cert`
 * → `ott`, a `cert` issued through a registered CA → `ottca` for that CA.
 */
import { deleteAuthenticatorRow } from '../../../store/authenticators.js';
import { caExists } from '../../../store/cas.js';
import { withTx } from '../../../store/db.js';
import { createEntity, getRow } from '../../crud.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { authenticators } from '../../resources/authenticator.js';
import { enrollments } from '../../resources/enrollment.js';
import { futureDate } from '../../enrollments/credentials.js';
import { recordRowChange, rowBefore } from '../../events/operation-events.js';

/** Returns the new enrollment's id. */
export async function reEnrollAuthenticator(ctx: Ctx, id: string, expiresAtValue: unknown): Promise<string> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const row = await getRow(tctx, authenticators, id);
    const expiresAt = iso(futureDate(ctx, 'expiresAt', expiresAtValue));
    const { identityId } = row;
    let body: Record<string, unknown>;
    if (row.method === 'updb') {
      body = { method: 'updb', username: row.username };
    } else {
      const caId = row.caId !== null && (await caExists(trx, row.caId)) ? row.caId : undefined;
      body = caId ? { method: 'ottca', caId } : { method: 'ott' };
    }
    const before = await rowBefore(tctx, authenticators, id);
    await deleteAuthenticatorRow(trx, id);
    await recordRowChange(tctx, authenticators, id, 'deleted', 'authenticator-re-enrolled', before);
    return createEntity(tctx, enrollments, { ...body, identityId, expiresAt });
  });
}
