/** `updb`: a one-time token to set a password, for a username no authenticator or other enrollment uses (§7.2). */
import { authenticatorHasUsername } from '../../store/authenticators.js';
import { updbEnrollmentHasUsername } from '../../store/enrollments.js';
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import type { EnrollmentMethodModule } from './method.js';

async function checkUsername(ctx: Ctx, username: unknown): Promise<string> {
  if (typeof username !== 'string' || username === '')
    throw fieldError('username', 'username is required for updb', username ?? null);
  if (username.length < 4 || username.length > 100)
    throw fieldError('username', 'username must be 4 to 100 characters', username);
  const [auth, enrollment] = await Promise.all([
    authenticatorHasUsername(ctx.db, username),
    updbEnrollmentHasUsername(ctx.db, username),
  ]);
  if (auth || enrollment) throw fieldError('username', 'username must be unique', username);
  return username;
}

export const updbMethod: EnrollmentMethodModule = {
  id: 'updb',
  authenticator: 'updb',
  async prepareCreate(ctx, out) {
    out.username = await checkUsername(ctx, out.username);
    out.caId = null;
  },
};
