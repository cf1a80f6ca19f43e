/**
 * `edgectl whoami`: who the saved session of the context in use belongs to, asked of the controller
 * (`GET /current-identity`, served on both APIs), so an expired session or a non-admin shows at once.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import type { CliIo } from '../io.js';
import { formatOf, outputOption, printRecordAs, type Rec } from '../output.js';
import { SessionStore } from '../session-store.js';

export function registerWhoami(program: Command, io: CliIo): void {
  program
    .command('whoami')
    .description('show the identity, controller and context the saved session belongs to')
    .addOption(outputOption())
    .option('-j, --json', 'alias of -o json')
    .addHelpText('after', '\nExamples:\n  edgectl whoami\n  edgectl --context laptop whoami -o json')
    .action(async (opts: { output?: string; json?: boolean }) => {
      const format = formatOf(opts);
      const api = requireApi(io);
      const body = await api.call<{ data: Rec }>('GET', '/current-identity');
      if (format === 'json' || format === 'yaml' || format === 'id') {
        await printRecordAs(io, format, body);
        return;
      }
      const d = body.data;
      await printRecordAs(io, format, {
        data: {
          context: new SessionStore(io.env).contextName(),
          controller: api.login.url,
          identity: d.name,
          id: d.id,
          type: (d.type as Rec | undefined)?.name ?? d.typeId,
          isAdmin: d.isAdmin,
          login: api.login.method ?? 'password',
          loggedInAt: api.login.loginTime,
        },
      });
    });
}
