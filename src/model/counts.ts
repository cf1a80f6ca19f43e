/** How many records a resource has (the `/summary` listing). */
import { countRows } from '../store/counts.js';
import type { Ctx } from './ctx.js';
import type { ResourceDef } from './resource.js';

export const countEntities = (ctx: Ctx, def: ResourceDef): Promise<number> => countRows(ctx.db, def.table);

/** The records of several tables together (a `/summary` count that spans stores, e.g. edge and transit routers). */
export async function countTables(ctx: Ctx, tables: readonly string[]): Promise<number> {
  let n = 0;
  for (const table of tables) n += await countRows(ctx.db, table);
  return n;
}

/** API sessions and sessions in the store right now (metrics gauges; expired ones go at the next sweep). */
export async function liveSessionCounts(ctx: Ctx): Promise<{ apiSessions: number; sessions: number }> {
  return { apiSessions: await countRows(ctx.db, 'api_sessions'), sessions: await countRows(ctx.db, 'sessions') };
}
