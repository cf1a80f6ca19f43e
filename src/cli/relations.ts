/**
 * Sub-collections: `edgectl <noun> <segment> ID|NAME [filter]` lists what a record relates to through policies
 * (`identity services alice`: the services alice may use; `service-policy identities web-dial`: the identities
 * that policy selects), from the Management API's `/<collection>/{id}/<segment>` listings
 * (src/daemon/routes/related.ts). One implementation, driven by the table below; paging, `--filter` and `--json`
 * are those of `list` (parity: `ziti edge list identities services <id>`, docs/reference-notes.md §11). The table
 * is the model's (src/model/relations.ts), the one the daemon serves.
 */
import type { Command } from 'commander';
import { RELATIONS, type Relation } from '../model/relations.js';
import { requireApi } from './api.js';
import { listOptions, printPage, resolveEntityId, type EntitySpec, type ListOptions } from './crud.js';
import { configSpec } from './entities/config.js';
import { configTypeSpec } from './entities/config-type.js';
import { identitySpec } from './entities/identity.js';
import {
  edgeRouterPolicySpec,
  postureCheckSpec,
  serviceEdgeRouterPolicySpec,
  servicePolicySpec,
} from './entities/policy.js';
import { edgeRouterSpec } from './entities/router.js';
import { serviceSpec } from './entities/service.js';
import type { CliIo } from './io.js';

/** The CLI's entity of each collection a relation names (its noun, columns and name resolution). */
const SPECS: readonly EntitySpec[] = [
  identitySpec,
  serviceSpec,
  edgeRouterSpec,
  configSpec,
  configTypeSpec,
  servicePolicySpec,
  edgeRouterPolicySpec,
  serviceEdgeRouterPolicySpec,
  postureCheckSpec,
];

function specOf(collection: string): EntitySpec {
  const spec = SPECS.find((s) => s.def.name === collection);
  if (!spec) throw new Error(`no CLI entity for /${collection}`);
  return spec;
}

/** Adds the sub-collection commands to the nouns already registered on `program`. */
export function registerRelations(
  program: Command,
  io: CliIo,
  relations: readonly Relation[] = RELATIONS,
  /** Only some commands are registered (the one a command line runs): relations of others are left out. */
  partial = false,
): void {
  for (const r of relations) {
    const parent = specOf(r.parent.name);
    const child = specOf(r.child.name);
    const noun = program.commands.find((c) => c.name() === parent.noun);
    if (!noun && partial) continue;
    if (!noun) throw new Error(`relation ${parent.noun} → ${r.child.name}: no command ${parent.noun}`);
    const segment = r.segment;
    const cmd = noun
      .command(segment)
      .description(`list the ${r.description}, optionally filtered`)
      .argument('id|name', `the ${r.parent.label}'s id or name`)
      .argument('[filter]', 'filter expression');
    listOptions(cmd).action(async (idOrName: string, filterArg: string | undefined, opts: ListOptions) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, parent, idOrName);
      await printPage(
        io,
        api,
        `/${r.parent.name}/${encodeURIComponent(id)}/${segment}`,
        child.columns,
        filterArg,
        opts,
      );
    });
  }
}
