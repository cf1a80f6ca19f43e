/** `edgectl auth-policy …`: the generic verbs over the auth-policies resource definition. */
import type { Command } from 'commander';
import { registerEntity } from '../crud.js';
import { authPolicySpec } from '../entities/auth-policy.js';
import type { CliIo } from '../io.js';

export function registerAuthPolicy(program: Command, io: CliIo): void {
  registerEntity(program, io, authPolicySpec);
}
