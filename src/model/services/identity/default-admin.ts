/**
 * The default admin: created once on an empty store, with `isAdmin` and `isDefaultAdmin` and a password
 * authenticator (parity: docs/reference-notes.md §5.6). It can never be deleted.
 */
import { withTx } from '../../../store/db.js';
import { defaultAdminExists } from '../../../store/identities.js';
import { createEntity } from '../../crud.js';
import { withDb, type Ctx } from '../../ctx.js';
import { authenticators } from '../../resources/authenticator.js';
import { hashUnderPolicy } from '../hooks/authenticator.js';
import { identities } from '../../resources/identity.js';

export const hasDefaultAdmin = (ctx: Ctx): Promise<boolean> => defaultAdminExists(ctx.db);

/**
 * Creates the default admin unless one exists, answering its id, or undefined when there was one already:
 * controllers sharing a store may start together, and the check inside the write transaction (which they take
 * in turns) lets exactly one of them create it.
 */
export async function createDefaultAdmin(
  ctx: Ctx,
  username: string,
  password: string,
  name = 'Default Admin',
): Promise<string | undefined> {
  // Hashed before the transaction (no Argon2id inside one), under the `default` policy the new admin gets.
  const pre = { passwordHash: await hashUnderPolicy(ctx, 'default', password) };
  return withTx(ctx.db, async (trx) => {
    if (await defaultAdminExists(trx)) return undefined;
    const tctx = withDb(ctx, trx);
    const id = await createEntity(tctx, identities, { name, type: 'User', isAdmin: true }, { isDefaultAdmin: true });
    await createEntity(tctx, authenticators, { identityId: id, method: 'updb', username, password }, {}, pre);
    return id;
  });
}
