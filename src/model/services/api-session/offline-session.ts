/**
 * The principal of offline CLI commands (`--data-dir`): a real API session of the default admin, opened when the
 * command starts and deleted when it ends, so the in-process requests pass the same authorisation as any
 * other (docs/decisions.md, "Offline CLI").
 */
import { defaultAdminLogin } from '../../../store/maintenance.js';
import type { Ctx } from '../../ctx.js';
import { deleteApiSessionsByIds } from '../../../store/api-sessions.js';
import { createApiSession } from './api-session.js';

/** What the API session of an offline command records as its address. */
export const OFFLINE_ADDRESS = 'offline';

export async function openDefaultAdminSession(ctx: Ctx): Promise<{ id: string; token: string }> {
  const login = await defaultAdminLogin(ctx.db);
  if (!login) throw new Error('the store has no default admin with an authenticator: start the controller once');
  const id = await createApiSession(ctx, { ...login, ipAddress: OFFLINE_ADDRESS, configTypes: [] });
  return { id, token: ctx.tokens.token('api-session', id) };
}

/** Ends it without an event, as it began: the offline CLI's changes name it as their source instead. */
export async function closeDefaultAdminSession(ctx: Ctx, id: string): Promise<void> {
  await deleteApiSessionsByIds(ctx.db, [id]);
}
