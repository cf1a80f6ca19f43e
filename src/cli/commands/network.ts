/**
 * The nouns of the network model whose commands are the generic verbs alone: config types, configs, services
 * and the three policy kinds (their specs say the rest: positional arguments, flags, `@name` in roles).
 */
import type { Command } from 'commander';
import { registerEntity } from '../crud.js';
import { configSpec } from '../entities/config.js';
import { configTypeSpec } from '../entities/config-type.js';
import { edgeRouterPolicySpec, serviceEdgeRouterPolicySpec, servicePolicySpec } from '../entities/policy.js';
import { serviceSpec } from '../entities/service.js';
import type { CliIo } from '../io.js';

export function registerNetwork(program: Command, io: CliIo): void {
  for (const spec of [
    configTypeSpec,
    configSpec,
    serviceSpec,
    servicePolicySpec,
    edgeRouterPolicySpec,
    serviceEdgeRouterPolicySpec,
  ])
    registerEntity(program, io, spec);
}
