/**
 * `edgectl events list [FILTER] [--since …]`: the recorded events (GET /events), newest first, online or on a
 * stopped controller's store (`--data-dir`, `--db`) like every admin command.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { listOptions, printPage, type ListOptions } from '../crud.js';
import { CliError, type CliIo } from '../io.js';
import { at, type Column } from '../output.js';
import { parseSince } from '../../model/events/since.js';

const COLUMNS: readonly Column[] = [
  { header: 'TIME', value: (r) => r.timestamp },
  { header: 'EVENT', value: (r) => `${String(r.namespace)}.${String(r.eventType ?? r.event_type ?? '')}` },
  {
    header: 'ACTOR',
    value: (r) => at(r, 'metadata.author.name') ?? r.identity_id ?? r.username ?? at(r, 'metadata.source.type'),
  },
  { header: 'SOURCE', value: (r) => at(r, 'metadata.source.remoteAddr') ?? r.remote_address ?? r.ip_address },
  { header: 'RESOURCE', value: (r) => (r.entityType ? `${String(r.entityType)}/${String(r.entityId)}` : '') },
  {
    header: 'CHANGED',
    value: (r) => (r.changes && typeof r.changes === 'object' ? Object.keys(r.changes).join(',') : ''),
  },
];

export function registerEvents(program: Command, io: CliIo): void {
  const noun = program
    .command('events')
    .alias('event')
    .description('recorded events: changes, authentications, API sessions (Management API /events)');
  const cmd = noun
    .command('list')
    .alias('ls')
    .description('list events, newest first, optionally filtered (ZitiQL over namespace, eventType, actorId, …)')
    .argument('[filter]', 'filter expression')
    .option('--since <when>', 'only events from this time on: an ISO time or a duration back from now (90m, 24h, 7d)')
    .addHelpText(
      'after',
      `\nExamples:\n  edgectl events list --since 1h\n  edgectl events list 'entityType = "service-policies" and entityId = "ID"'\n  edgectl events list 'namespace = "authentication" and eventType = "fail"' --since 7d -o json\n  edgectl events list --data-dir /var/lib/edgectl   # a stopped controller's store`,
    );
  listOptions(cmd).action(async (filterArg: string | undefined, opts: ListOptions & { since?: string }) => {
    let filter = filterArg ?? opts.filter;
    if (filterArg !== undefined && opts.filter !== undefined)
      throw new CliError('error: give the filter either as an argument or with --filter, not both', 2);
    if (opts.since !== undefined) {
      let since: string;
      try {
        since = parseSince(opts.since, new Date());
      } catch (e) {
        throw new CliError(`error: --since: ${(e as Error).message}`, 2);
      }
      const bound = `timestamp >= datetime(${since})`;
      filter = filter?.trim() ? `(${filter}) and ${bound}` : bound;
    }
    const { filter: _f, since: _s, ...rest } = opts;
    await printPage(io, requireApi(io), '/events', COLUMNS, filter, rest);
  });
}
