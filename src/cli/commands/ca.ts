/**
 * `edgectl ca …`: third-party certificate authorities (docs/reference-notes.md §7.5). The generic verbs over the
 * CA resource definition (`create NAME PEM_FILE [--auth] [--autoca] [--ottca] [-a roles] [--identity-name-format F]`,
 * list, show, update, delete), plus `verify CA --cert FILE` (proof of possession: a certificate whose CN is the
 * CA's verification token, signed by the CA) and `jwt CA [--out FILE]` (the CA's enrollment JWT).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { registerEntity, resolveEntityId } from '../crud.js';
import { caSpec } from '../entities/ca.js';
import { writePrivateFile } from '../identity-file.js';
import { CliError, type CliIo } from '../io.js';
import { jsonOption } from '../options.js';
import { formatOf, isScriptFormat, printAnswerAs, writeOutputOption, type Rec } from '../output.js';

export function registerCa(program: Command, io: CliIo): void {
  const noun = registerEntity(program, io, {
    ...caSpec,
    createExtras: {
      options() {},
      async after({ api, io: out, id, opts }) {
        if (opts.json) return;
        const ca = (await api.call<{ data: Rec }>('GET', `/cas/${encodeURIComponent(id)}`)).data;
        if (typeof ca.verificationToken === 'string' && ca.isVerified !== true) {
          out.out(`verification token: ${ca.verificationToken}`);
          out.out(
            `verify the CA with a certificate it signed whose common name is that token: edgectl ca verify ${id} --cert FILE`,
          );
        }
      },
    },
  });

  noun
    .command('verify')
    .description('verify a CA: upload a certificate it signed whose common name (CN) is its verification token')
    .argument('ca', "the CA's id or name")
    .requiredOption('--cert <file>', 'the verification certificate (PEM)')
    .addOption(writeOutputOption())
    .addOption(jsonOption())
    .action(async (idOrName: string, opts: { cert: string; json?: boolean; output?: string }) => {
      const format = formatOf(opts);
      let pem: string;
      try {
        pem = readFileSync(opts.cert, 'utf8');
      } catch (e) {
        throw new CliError(`error: cannot read --cert ${opts.cert}: ${(e as Error).message}`, 2);
      }
      const api = requireApi(io);
      const id = await resolveEntityId(api, caSpec, idOrName);
      const res = await api.call('POST', `/cas/${encodeURIComponent(id)}/verify`, pem, { contentType: 'text/plain' });
      if (isScriptFormat(format)) await printAnswerAs(io, format, res, [id]);
      else io.out(`verified ca ${id}`);
    });

  noun
    .command('jwt')
    .description("print the CA's enrollment JWT (or write it to --out)")
    .argument('ca', "the CA's id or name")
    .option('-o, --out <file>', 'write the JWT to this file (mode 0600)')
    .action(async (idOrName: string, opts: { out?: string }) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, caSpec, idOrName);
      const jwt = await api.call<unknown>('GET', `/cas/${encodeURIComponent(id)}/jwt`, undefined, {
        accept: 'application/jwt',
      });
      if (typeof jwt !== 'string' || jwt.trim() === '')
        throw new CliError('error: the controller answered without a JWT', 1);
      if (opts.out === undefined) {
        io.out(jwt.trim());
        return;
      }
      try {
        writePrivateFile(opts.out, jwt.trim() + '\n');
      } catch (e) {
        throw new CliError(`error: cannot write ${opts.out}: ${(e as Error).message}`, 1);
      }
      io.out(`wrote the JWT of ca ${id} to ${opts.out}`);
    });
}
