/**
 * `edgectl events list [FILTER] [--since …]`: the recorded events (GET /events), newest first, online or on a
 * stopped controller's store (`--data-dir`, `--db`) like every admin command. `edgectl events tail`: follows
 * them live (GET /events/stream), one JSON object a line with `-o json`, a table row each otherwise,
 * reconnecting with `Last-Event-ID` when the connection drops.
 */
import { Option, type Command } from 'commander';
import { requireApi } from '../api.js';
import { listOptions, printPage, type ListOptions } from '../crud.js';
import { CliError, type CliIo } from '../io.js';
import { at, cell, type Column, type Rec } from '../output.js';
import { parseSince } from '../../model/events/since.js';
import { clientCertificateOf } from '../session-store.js';
import { followStream } from '../transport/sse.js';

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

  noun
    .command('tail')
    .description('follow events live as they are recorded (Management API /events/stream), until interrupted')
    .option(
      '--type <type...>',
      'only these: a namespace (entityChange, authentication, apiSession, eventSink) or namespace.eventType',
    )
    .addOption(
      new Option('-o, --output <format>', 'table (a row per event) or json (one event a line)').choices([
        'table',
        'json',
      ]),
    )
    .option('-j, --json', 'same as -o json')
    .option('--count <n>', 'exit after this many events', (v) => {
      if (!/^[1-9]\d*$/.test(v)) throw new CliError('error: --count must be a positive whole number', 2);
      return Number(v);
    })
    .addHelpText(
      'after',
      `\nExamples:\n  edgectl events tail\n  edgectl events tail --type authentication.fail --type entityChange -o json | jq .\n  edgectl events tail --type apiSession --count 1`,
    )
    .action(async (opts: { type?: string[]; output?: string; json?: boolean; count?: number }) => {
      if (io.dataDir !== undefined)
        throw new CliError('error: `events tail` follows a running controller; on a stopped one use `events list`', 2);
      const json = opts.json === true || opts.output === 'json';
      if (opts.json && opts.output === 'table') throw new CliError('error: --json and -o table disagree: give one', 2);
      const api = requireApi(io);
      const login = api.login;
      const query = (opts.type ?? []).map((t) => `type=${encodeURIComponent(t)}`).join('&');
      let left = opts.count ?? Infinity;
      if (!json) io.out(COLUMNS.map((c) => c.header).join('  '));
      await followStream(
        { url: login.url, ca: login.caCert, token: login.token, clientCert: clientCertificateOf(login) },
        `/events/stream${query ? `?${query}` : ''}`,
        {
          onEvent(e) {
            if (json) io.out(e.data);
            else {
              let rec: Rec;
              try {
                rec = JSON.parse(e.data) as Rec;
              } catch {
                return;
              }
              io.out(COLUMNS.map((c) => cell(c.value(rec))).join('  '));
            }
            return --left > 0;
          },
          onReconnect: (reason) => io.err(`(${reason}; reconnecting)`),
        },
      );
    });
}
