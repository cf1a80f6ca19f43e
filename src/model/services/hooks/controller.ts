/** Controllers: `isOnline` from the heartbeat (services/controller/registry.ts). */
import type { Ctx } from '../../ctx.js';
import type { ResourceHooks, Row } from '../../resource.js';
import { isControllerOnline } from '../controller/registry.js';

export const controllerHooks: ResourceHooks = {
  decorate(ctx: Ctx, rows: Row[]): void {
    const now = ctx.now();
    for (const row of rows) row.isOnline = isControllerOnline(row, now);
  },
};
