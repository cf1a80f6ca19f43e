/**
 * `edgectl context list|use|delete`: the saved logins by name (docs/decisions.md, CLI contexts). parity: the
 * reference keeps logins by name and `ziti edge use NAME` sets the default one (docs/reference-notes.md §11).
 * Listings never show tokens or keys: the config file is the only place they live.
 */
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { col, formatOf, outputOption, printListAs, type Rec } from '../output.js';
import { checkContextName, SessionStore } from '../session-store.js';

const EXAMPLES = `
Examples:
  edgectl login https://127.0.0.1:1280 -u admin              # context "default" (or the current one)
  edgectl login --identity laptop.json --context laptop      # a second login, the admin's is kept
  edgectl context list
  edgectl context use laptop                                 # later commands run as laptop
  edgectl --context default identity list                    # one command in another context
  EDGECTL_CONTEXT=laptop edgectl client services
  edgectl context delete laptop                              # forget it here (\`logout --context laptop\` also ends it)`;

const COLUMNS = [
  col('CURRENT', 'current'),
  col('NAME', 'name'),
  col('URL', 'url'),
  col('USER', 'username'),
  col('METHOD', 'method'),
  col('LOGGED IN', 'loginTime'),
];

export function registerContext(program: Command, io: CliIo): void {
  const noun = program
    .command('context')
    .alias('contexts')
    .description('list, choose and forget saved logins (contexts)')
    .addHelpText('after', EXAMPLES);

  noun
    .command('list')
    .alias('ls')
    .description('list the saved logins; * marks the current context')
    .addOption(outputOption())
    .option('-j, --json', 'alias of -o json')
    .addHelpText('after', '\nExamples:\n  edgectl context list\n  edgectl context list -o json')
    .action(async (opts: { output?: string; json?: boolean }) => {
      const format = formatOf(opts);
      const store = new SessionStore(io.env);
      const current = store.currentName();
      const data: Rec[] = Object.entries(store.all())
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, l]) => ({
          id: name,
          name,
          current: format === 'table' || format === 'wide' ? (name === current ? '*' : '') : name === current,
          url: l.url,
          username: l.username,
          method: l.oidc ? `${l.method ?? 'password'} (oidc)` : (l.method ?? 'password'),
          loginTime: l.loginTime,
          ...(l.identityFile ? { identityFile: l.identityFile } : {}),
        }));
      await printListAs(io, format, COLUMNS, {
        data,
        meta: { pagination: { limit: data.length, offset: 0, totalCount: data.length } },
      });
    });

  noun
    .command('use')
    .description('make a saved login the current context')
    .argument('<name>', 'context name (see `edgectl context list`)')
    .addHelpText('after', '\nExample:\n  edgectl context use laptop')
    .action((name: string) => {
      const store = new SessionStore(io.env);
      store.use(checkContextName(name));
      io.out(`current context: ${name}`);
    });

  noun
    .command('delete')
    .alias('rm')
    .description(
      'forget a saved login on this machine (its session stays open on the controller until it expires; `logout` ends it)',
    )
    .argument('<name>', 'context name')
    .addHelpText('after', '\nExample:\n  edgectl context delete laptop')
    .action((name: string) => {
      const store = new SessionStore(io.env);
      store.remove(checkContextName(name));
      io.out(`deleted context ${name}`);
    });
}
