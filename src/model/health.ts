/** Whether the store answers a trivial query within `timeoutMs` (`GET /health`); never throws. */
import { pingStore } from '../store/health.js';
import type { Ctx } from './ctx.js';

export async function storeAnswers(ctx: Ctx, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  // The store has one connection: a long transaction makes the ping wait, and waiting is not answering.
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
