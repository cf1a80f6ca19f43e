/**
 * The default admin: created once on an empty store, with `isAdmin` and `isDefaultAdmin` and a password
 * authenticator (parity: docs/reference-notes.md §5.6). It can never be deleted.
 */
import { withTx } from '../../store/db.js';
import { createEntity } from '../crud.js';
import { withDb, type Ctx } from '../ctx.js';
import { authenticators } from '../resources/authenticator.js';
import { identities } from '../resources/identity.js';

export async function hasDefaultAdmin(ctx: Ctx): Promise<boolean> {
  const row = await ctx.db.selectFrom('identities').select('id').where('isDefaultAdmin', '=', 1).executeTakeFirst();
  return row !== undefined;
}

export async function createDefaultAdmin(ctx: Ctx, username: string, password: string, name = 'Default Admin'): Promise<string> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const id = await createEntity(tctx, identities, { name, type: 'User', isAdmin: true }, { isDefaultAdmin: true });
    await createEntity(tctx, authenticators, { identityId: id, method: 'updb', username, password });
    return id;
  });
}
