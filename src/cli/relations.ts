/**
 * Sub-collections: `edgectl <noun> <segment> ID|NAME [filter]` lists what a record relates to through policies
 * (`identity services alice`: the services alice may use; `service-policy identities web-dial`: the identities
 * that policy selects), from the Management API's `/<collection>/{id}/<segment>` listings
 * (src/daemon/routes/related.ts). One implementation, driven by the table below; paging, `--filter` and `--json`
 * are those of `list` (parity: `ziti edge list identities services <id>`, docs/reference-notes.md §11).
 */
import type { Command } from 'commander';
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

export interface Relation {
  parent: EntitySpec;
  child: EntitySpec;
  /** What the listing shows, after "list the …": e.g. `services the identity may dial or bind`. */
  description: string;
  /** Path segment and command name (default: the child's collection name). */
  segment?: string;
}

const rel = (parent: EntitySpec, child: EntitySpec, description: string): Relation => ({ parent, child, description });

export const RELATIONS: readonly Relation[] = [
  rel(identitySpec, serviceSpec, 'services the identity may dial or bind (through service policies)'),
  rel(identitySpec, edgeRouterSpec, 'edge routers the identity may connect to (through edge router policies)'),
  rel(identitySpec, servicePolicySpec, 'service policies that select the identity'),
  rel(identitySpec, edgeRouterPolicySpec, 'edge router policies that select the identity'),
  rel(serviceSpec, identitySpec, 'identities that may dial or bind the service'),
  rel(serviceSpec, edgeRouterSpec, 'edge routers that may carry the service (through service edge router policies)'),
  rel(serviceSpec, configSpec, 'configs of the service'),
  rel(serviceSpec, servicePolicySpec, 'service policies that select the service'),
  rel(serviceSpec, serviceEdgeRouterPolicySpec, 'service edge router policies that select the service'),
  rel(edgeRouterSpec, identitySpec, 'identities that may connect to the edge router'),
  rel(edgeRouterSpec, serviceSpec, 'services the edge router may carry'),
  rel(edgeRouterSpec, edgeRouterPolicySpec, 'edge router policies that select the edge router'),
  rel(edgeRouterSpec, serviceEdgeRouterPolicySpec, 'service edge router policies that select the edge router'),
  rel(servicePolicySpec, identitySpec, 'identities the service policy selects'),
  rel(servicePolicySpec, serviceSpec, 'services the service policy selects'),
  rel(servicePolicySpec, postureCheckSpec, 'posture checks the service policy selects'),
  rel(edgeRouterPolicySpec, identitySpec, 'identities the edge router policy selects'),
  rel(edgeRouterPolicySpec, edgeRouterSpec, 'edge routers the edge router policy selects'),
  rel(serviceEdgeRouterPolicySpec, serviceSpec, 'services the service edge router policy selects'),
  rel(serviceEdgeRouterPolicySpec, edgeRouterSpec, 'edge routers the service edge router policy selects'),
  rel(configTypeSpec, configSpec, 'configs of the config type'),
];

/** Adds the sub-collection commands to the nouns already registered on `program`. */
export function registerRelations(program: Command, io: CliIo, relations: readonly Relation[] = RELATIONS): void {
  for (const r of relations) {
    const noun = program.commands.find((c) => c.name() === r.parent.noun);
    if (!noun) throw new Error(`relation ${r.parent.noun} → ${r.child.def.name}: no command ${r.parent.noun}`);
    const segment = r.segment ?? r.child.def.name;
    const cmd = noun
      .command(segment)
      .description(`list the ${r.description}, optionally filtered`)
      .argument('id|name', `the ${r.parent.def.label}'s id or name`)
      .argument('[filter]', 'filter expression');
    listOptions(cmd).action(async (idOrName: string, filterArg: string | undefined, opts: ListOptions) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, r.parent, idOrName);
      await printPage(
        io,
        api,
        `/${r.parent.def.name}/${encodeURIComponent(id)}/${segment}`,
        r.child.columns,
        filterArg,
        opts,
      );
    });
  }
}
