/** `edgectl api-session list|show|delete`: the API serves no create or update for sessions. */
import type { Command } from 'commander';
import { registerEntity } from '../crud.js';
import { apiSessionSpec } from '../entities/api-session.js';
import type { CliIo } from '../io.js';

export function registerApiSession(program: Command, io: CliIo): void {
  registerEntity(program, io, apiSessionSpec);
}
