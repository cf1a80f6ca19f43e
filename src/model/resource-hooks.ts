/**
 * Where the generic CRUD finds a resource's hooks: by resource name, in the table of the model's services
 * (`services/hooks/index.ts`). The definitions stay pure data, cheap to import (the CLI reads them on every
 * start); the hooks, which reach the store, the PKI and Argon2id, load on the first write or read that needs them.
 * A dynamic import because the hooks themselves use the generic CRUD (an identity creates its enrollments).
 */
import type { ResourceDef, ResourceHooks } from './resource.js';

let table: Readonly<Record<string, ResourceHooks>> | undefined;

const NONE: ResourceHooks = {};

/** The hooks of `def` (none for a resource without behaviour of its own). */
export async function hooksOf(def: Pick<ResourceDef, 'name'>): Promise<ResourceHooks> {
  table ??= (await import('./services/hooks/index.js')).RESOURCE_HOOKS;
  return table[def.name] ?? NONE;
}
