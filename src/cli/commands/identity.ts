/**
 * `edgectl identity …`: the generic verbs plus `disable` and `enable`
 * (parity: controller-behaviours.md §10.4; a disable also ends the identity's API sessions).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { requireApi } from '../api.js';
import { registerEntity, resolveEntityId } from '../crud.js';
import { identitySpec } from '../entities/identity.js';
import type { CliIo } from '../io.js';
import { printJson } from '../output.js';

const minutes = (raw: string): number => {
  if (!/^\d+$/.test(raw.trim())) throw new InvalidArgumentError('expected a whole number of minutes');
  return Number(raw);
};

export function registerIdentity(program: Command, io: CliIo): void {
  const noun = registerEntity(program, io, identitySpec);
  noun
    .command('disable')
    .description('disable an identity: it can no longer authenticate and its API sessions end')
    .argument('id|name', "the identity's id or name")
    .option('--duration-minutes <n>', 'disable for this many minutes (0 or absent: until enabled again)', minutes)
    .option('-j, --json', 'print the JSON response body')
    .action(async (idOrName: string, opts: { durationMinutes?: number; json?: boolean }) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, identitySpec, idOrName);
      const res = await api.call('POST', `/identities/${encodeURIComponent(id)}/disable`, { durationMinutes: opts.durationMinutes ?? 0 });
      if (opts.json) printJson(io, res);
      else io.out(`disabled identity ${id}${opts.durationMinutes ? ` for ${opts.durationMinutes} minutes` : ''}`);
    });
  noun
    .command('enable')
    .description('enable a disabled identity (also clears its failed password attempts)')
    .argument('id|name', "the identity's id or name")
    .option('-j, --json', 'print the JSON response body')
    .action(async (idOrName: string, opts: { json?: boolean }) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, identitySpec, idOrName);
      const res = await api.call('POST', `/identities/${encodeURIComponent(id)}/enable`);
      if (opts.json) printJson(io, res);
      else io.out(`enabled identity ${id}`);
    });
}
