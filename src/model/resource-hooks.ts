/**
 * Where the generic CRUD finds a resource's hooks: by resource name, in the table the context carries
 * (`ctx.hooks`, the model's table being `services/hooks/index.ts`). Whoever builds a Ctx (the daemon, the
 * offline CLI, tests) passes the table, so the definitions stay pure data, cheap to import (the CLI reads them on
 * every start), and the generic CRUD never imports the hooks, which use it themselves.
 */
import type { Ctx, ResourceHooks } from './ctx.js';
import type { ResourceDef } from './resource.js';
import type { RecordOf } from './resource-record.js';

const NONE: ResourceHooks = {};

/**
 * A resource's hooks, typed with its records: the generic CRUD calls them with rows it read by this definition
 * only (the table registers them under `def.name`).
 */
export const hooksFor = <D extends ResourceDef>(_def: D, hooks: ResourceHooks<RecordOf<D>>): ResourceHooks => hooks;

/** The hooks of `def` (none for a resource without behaviour of its own). */
export function hooksOf(ctx: Pick<Ctx, 'hooks'>, def: Pick<ResourceDef, 'name'>): ResourceHooks {
  return ctx.hooks[def.name] ?? NONE;
}
