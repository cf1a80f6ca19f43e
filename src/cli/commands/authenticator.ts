/** `edgectl authenticator …`: the generic verbs over the authenticators resource definition. */
import type { Command } from 'commander';
import { registerEntity } from '../crud.js';
import { authenticatorSpec } from '../entities/authenticator.js';
import type { CliIo } from '../io.js';

export function registerAuthenticator(program: Command, io: CliIo): void {
  registerEntity(program, io, authenticatorSpec);
}
