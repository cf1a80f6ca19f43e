/** `edgectl jwt-signer …`: the generic verbs over the external-jwt-signers resource definition. */
import type { Command } from 'commander';
import { registerEntity } from '../crud.js';
import { jwtSignerSpec } from '../entities/jwt-signer.js';
import type { CliIo } from '../io.js';

export function registerJwtSigner(program: Command, io: CliIo): void {
  registerEntity(program, io, jwtSignerSpec);
}
