/**
 * `edgectl version`: the CLI's version and, when logged in, the controller's (`GET /version`), so a mismatch
 * between the two is visible in one command.
 */
import { isSea } from 'node:sea';
import { type Command, Option } from 'commander';
import { VERSION } from '../../version.js';
import { apiFor } from '../api.js';
import type { CliIo } from '../io.js';
import { formatOf, isScriptFormat, OUTPUT_FORMATS, printAnswerAs } from '../output.js';
import { SessionStore } from '../session-store.js';
import { HttpTransport } from '../transport/http.js';

interface VersionData {
  version?: string;
  revision?: string;
  buildDate?: string;
  runtimeVersion?: string;
  apiVersions?: Record<string, { v1?: { version?: string } }>;
}

export function registerVersion(program: Command, io: CliIo): void {
  program
    .command('version')
    .description("print the CLI's version and, when logged in, the controller's")
    .addOption(
      new Option(
        '-o, --output <format>',
        'table (text for people), json or yaml ({cli, controller}; controller is the /version response body), id (the CLI version alone)',
      ).choices(OUTPUT_FORMATS as unknown as string[]),
    )
    .option('-j, --json', 'same as -o json')
    .action(async (opts: { json?: boolean; output?: string }) => {
      const format = formatOf(opts);
      const login = new SessionStore(io.env).current();
      // /version is anonymous, so no token is sent: the version still shows when the session has expired.
      const controller = () =>
        apiFor(login!, new HttpTransport({ url: login!.url, ca: login!.caCert })).call<{ data: VersionData }>(
          'GET',
          '/version',
        );
      if (format === 'id') {
        // Nothing here has an id: `-o id` is the one bare value a script wants, the CLI's version (no request).
        io.out(VERSION);
        return;
      }
      if (isScriptFormat(format)) {
        await printAnswerAs(io, format, { cli: VERSION, controller: login ? await controller() : null });
        return;
      }
      // The one-file binary (README.md, "The one-file binary") says so, with the Node it carries.
      io.out(`edgectl CLI: v${VERSION}${isSea() ? ` (one-file binary, Node ${process.version})` : ''}`);
      if (!login) {
        io.out('controller:  not logged in');
        return;
      }
      const d = (await controller()).data;
      const api = d.apiVersions?.['edge-management']?.v1?.version;
      io.out(
        `controller:  ${d.version ?? '?'} at ${login.url}${api ? ` (management API ${api})` : ''}${d.runtimeVersion ? `, ${d.runtimeVersion}` : ''}`,
      );
    });
}
