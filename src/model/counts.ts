/** How many records a resource has (the `/summary` listing). */
import { countRows } from '../store/counts.js';
import type { Ctx } from './ctx.js';
import type { ResourceDef } from './resource.js';

export const countEntities = (ctx: Ctx, def: ResourceDef): Promise<number> => countRows(ctx.db, def.table);
