/**
 * `edgectl client …`: the logged-in identity's own view, over the Client API (`/edge/client/v1`), for a device
 * logged in with `edgectl login --identity FILE`: the services it may use (with permissions and configs), its
 * sessions, session create, and the edge routers it may connect through (docs/reference-notes.md §4.5, §4.7).
 * Admins may use it too (to see the network as a client would).
 */
import type { Command } from 'commander';
import { requireClientApi, type Api } from '../api.js';
import { listOptions, printPage, type ListOptions } from '../crud.js';
import { CliError, type CliIo } from '../io.js';
import { col, formatOf, outputOption, printRecordAs, type Column, type Rec } from '../output.js';
import { zitiString, type ListEnvelope } from '../resolve.js';

const SERVICE_COLUMNS: Column[] = [
  col('ID', 'id'),
  col('NAME', 'name'),
  col('PERMISSIONS', 'permissions'),
  { header: 'CONFIGS', value: (r) => Object.keys((r.config as Rec | undefined) ?? {}) },
  col('ENCRYPTION', 'encryptionRequired'),
];

const SESSION_COLUMNS: Column[] = [
  col('ID', 'id'),
  col('SERVICE', 'service'),
  col('TYPE', 'type'),
  col('CREATED', 'createdAt'),
];

const ROUTER_COLUMNS: Column[] = [
  col('ID', 'id'),
  col('NAME', 'name'),
  col('ONLINE', 'isOnline'),
  col('HOSTNAME', 'hostname'),
  col('PROTOCOLS', 'supportedProtocols'),
];

const q = (s: string) => JSON.stringify(s);

/** A service the identity may use, by id or name (names are unique; an id is tried first). */
async function serviceIdOf(api: Api, idOrName: string): Promise<string> {
  for (const field of ['id', 'name']) {
    const res = await api.call<ListEnvelope>(
      'GET',
      `/services?filter=${encodeURIComponent(`${field} = ${zitiString(idOrName)}`)}&limit=2`,
    );
    const hit = res.data?.[0];
    if (hit && typeof hit.id === 'string') return hit.id;
  }
  throw new CliError(
    `error: no service ${q(idOrName)} that ${api.login.username} may use (see \`edgectl client services\`)`,
    1,
  );
}

export function registerClient(program: Command, io: CliIo): void {
  const client = program
    .command('client')
    .description("the logged-in identity's own view (Client API): its services, sessions and edge routers")
    .addHelpText(
      'after',
      `
Examples:
  edgectl login --identity laptop.json --context laptop
  edgectl --context laptop client services
  edgectl --context laptop client session create crm          # a Dial session; --bind to host the service
  edgectl --context laptop client sessions -o yaml
  edgectl --context laptop client edge-routers`,
    );

  const services = client
    .command('services')
    .description('list the services this identity may use, with its permissions (Dial, Bind) and the configs it gets')
    .argument('[filter]', 'filter expression, e.g. \'name contains "crm"\'')
    .option(
      '--config-types <types>',
      'config types whose configs to include (comma-separated names or ids; default all)',
      'all',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  edgectl client services\n  edgectl client services \'name = "crm"\' -o json\n  edgectl client services --config-types intercept.v1 -o yaml',
    );
  listOptions(services).action(async (filterArg: string | undefined, opts: ListOptions & { configTypes: string }) => {
    const types = opts.configTypes
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean)
      .map((t) => `configTypes=${encodeURIComponent(t)}`)
      .join('&');
    await printPage(io, requireClientApi(io), `/services${types ? `?${types}` : ''}`, SERVICE_COLUMNS, filterArg, opts);
  });

  const sessions = client
    .command('sessions')
    .description("list this identity's sessions (one per service and type it dialled or bound)")
    .argument('[filter]', 'filter expression')
    .addHelpText('after', '\nExamples:\n  edgectl client sessions\n  edgectl client sessions -o id');
  listOptions(sessions).action(async (filterArg: string | undefined, opts: ListOptions) => {
    await printPage(io, requireClientApi(io), '/sessions', SESSION_COLUMNS, filterArg, opts);
  });

  const session = client
    .command('session')
    .description('create a session for a service (what a device does before it dials or hosts it)');
  session
    .command('create')
    .description(
      'create a Dial session for a service (or a Bind session with --bind); an existing one is answered again',
    )
    .argument('<service>', 'the service id or name')
    .option('--bind', 'a Bind session (to host the service) instead of Dial')
    .addOption(outputOption())
    .option('-j, --json', 'alias of -o json')
    .addHelpText(
      'after',
      '\nExamples:\n  edgectl client session create crm\n  edgectl client session create crm --bind -o json',
    )
    .action(async (service: string, opts: { bind?: boolean; output?: string; json?: boolean }) => {
      const format = formatOf(opts);
      const api = requireClientApi(io);
      const serviceId = await serviceIdOf(api, service);
      const type = opts.bind ? 'Bind' : 'Dial';
      const body = await api.call<{ data: Rec }>('POST', '/sessions', { serviceId, type });
      if (format === 'table' || format === 'wide')
        io.out(`${type} session ${String(body.data.id)} for service ${service}`);
      else await printRecordAs(io, format, body);
    });

  const routers = client
    .command('edge-routers')
    .alias('ers')
    .description('list the edge routers this identity may connect through')
    .argument('[filter]', 'filter expression')
    .addHelpText('after', '\nExamples:\n  edgectl client edge-routers\n  edgectl client edge-routers -o wide');
  listOptions(routers).action(async (filterArg: string | undefined, opts: ListOptions) => {
    await printPage(io, requireClientApi(io), '/current-identity/edge-routers', ROUTER_COLUMNS, filterArg, opts);
  });
}
