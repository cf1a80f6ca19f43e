/** Whether the store answers a trivial query within `timeoutMs` (`GET /health`); never throws. */
import { storeKind, type StoreKind } from '../store/dialect.js';
import { pingStore } from '../store/health.js';
import type { Ctx } from './ctx.js';

/** Which engine the store runs on (`/health` says it). */
export const storeKindOf = (ctx: Ctx): StoreKind => storeKind(ctx.db);

export async function storeAnswers(ctx: Ctx, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  // SQLite's store has one connection: a long transaction makes the ping wait, and waiting is not answering.
  // PostgreSQL's pool answers unless the server is down, unreachable, refusing connections or saturated.
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([pingStore(ctx.db).then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
