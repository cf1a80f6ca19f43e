/**
 * `edgectl identity …`: the generic verbs plus `disable` and `enable` (parity: docs/reference-notes.md §10.4; a
 * disable also ends the identity's API sessions), and on `create` the enrollment JWTs asked for with `--ott`,
 * `--ottca CA` or `--updb USERNAME`: written to `--jwt-out FILE` (0600) or printed (parity: `ziti edge create
 * identity -o FILE`); with `--json`, the printed answer's `data.enrollment.<method>.jwt`.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { registerEntity, resolveEntityId, type CreatedContext, type EntitySpec } from '../crud.js';
import { identitySpec } from '../entities/identity.js';
import { CliError, type CliIo } from '../io.js';
import { emitJwts, identityJwts } from '../jwt-output.js';
import { jwtOutOption, minutes } from '../options.js';
import { formatOf, isScriptFormat, printAnswerAs, writeOutputOption, type Rec } from '../output.js';

/** The enrollment methods a create body asks for. */
function requestedMethods(body: Rec): string[] {
  const e = (body.enrollment ?? {}) as Rec;
  const out: string[] = [];
  if (e.ott === true) out.push('ott');
  if (typeof e.ottca === 'string') out.push('ottca');
  if (typeof e.updb === 'string') out.push('updb');
  return out;
}

const createExtras: EntitySpec['createExtras'] = {
  options(cmd) {
    cmd.addOption(jwtOutOption());
    cmd.addHelpText(
      'after',
      '\nEnrollment: --ott (or --ottca CA) and/or --updb USERNAME create the enrollments with the identity; their JWTs are\n' +
        'printed, or written to --jwt-out FILE (mode 0600; with two JWTs, FILE with .ott/.updb before its extension).\n' +
        "Hand the JWT to the identity's owner, who runs `edgectl enroll FILE --out IDENTITY_FILE`.",
    );
  },
  check(opts, body) {
    if (opts.jwtOut !== undefined && requestedMethods(body).length === 0) {
      throw new CliError('error: --jwt-out needs an enrollment: add --ott, --ottca CA or --updb USERNAME', 2);
    }
  },
  async after({ api, io, id, opts, body }: CreatedContext) {
    const methods = requestedMethods(body);
    if (methods.length === 0) return;
    const record = (await api.call<{ data: Rec }>('GET', `/identities/${encodeURIComponent(id)}`)).data;
    const jwtOut = opts.jwtOut as string | undefined;
    emitJwts(io, identityJwts(record, methods), jwtOut, opts.json === true);
    // `--json` answers carry the enrollments (with their JWTs) as the identity record shows them, unless
    // `--jwt-out` wrote the JWTs to a file: then they stay out of the output.
    if (jwtOut === undefined) return { enrollment: record.enrollment };
  },
};

export function registerIdentity(program: Command, io: CliIo): void {
  const noun = registerEntity(program, io, { ...identitySpec, createExtras });
  noun
    .command('mfa-remove')
    .description("remove an identity's MFA enrollment (admin; no code needed), e.g. for a lost device")
    .argument('id|name', "the identity's id or name")
    .action(async (idOrName: string) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, identitySpec, idOrName);
      await api.call('DELETE', `/identities/${encodeURIComponent(id)}/mfa`);
      io.out(`removed the MFA enrollment of identity ${id}`);
    });
  noun
    .command('disable')
    .description('disable an identity: it can no longer authenticate and its API sessions end')
    .argument('id|name', "the identity's id or name")
    .option('--duration-minutes <n>', 'disable for this many minutes (0 or absent: until enabled again)', minutes)
    .addOption(writeOutputOption())
    .option('-j, --json', 'same as -o json')
    .action(async (idOrName: string, opts: { durationMinutes?: number; json?: boolean; output?: string }) => {
      const format = formatOf(opts);
      const api = requireApi(io);
      const id = await resolveEntityId(api, identitySpec, idOrName);
      const res = await api.call('POST', `/identities/${encodeURIComponent(id)}/disable`, {
        durationMinutes: opts.durationMinutes ?? 0,
      });
      if (isScriptFormat(format)) await printAnswerAs(io, format, res, [id]);
      else io.out(`disabled identity ${id}${opts.durationMinutes ? ` for ${opts.durationMinutes} minutes` : ''}`);
    });
  noun
    .command('enable')
    .description('enable a disabled identity (also clears its failed password attempts)')
    .argument('id|name', "the identity's id or name")
    .addOption(writeOutputOption())
    .option('-j, --json', 'same as -o json')
    .action(async (idOrName: string, opts: { json?: boolean; output?: string }) => {
      const format = formatOf(opts);
      const api = requireApi(io);
      const id = await resolveEntityId(api, identitySpec, idOrName);
      const res = await api.call('POST', `/identities/${encodeURIComponent(id)}/enable`);
      if (isScriptFormat(format)) await printAnswerAs(io, format, res, [id]);
      else io.out(`enabled identity ${id}`);
    });
  noun
    .command('trace')
    .description("turn an identity's data-flow tracing on for a while (it ends by itself), or off with --disable")
    .argument('id|name', "the identity's id or name")
    .option('--duration <duration>', 'how long, as a Go duration (30s, 10m, 1h30m)', '10m')
    .option('--trace-id <id>', 'the trace id (default: the controller makes one)')
    .option('--channel <name>', 'a channel to trace (repeatable)', (v: string, all: string[]) => [...all, v], [])
    .option('--disable', 'turn tracing off')
    .addOption(writeOutputOption())
    .option('-j, --json', 'same as -o json')
    .action(
      async (
        idOrName: string,
        opts: {
          duration: string;
          traceId?: string;
          channel: string[];
          disable?: boolean;
          json?: boolean;
          output?: string;
        },
      ) => {
        const format = formatOf(opts);
        const api = requireApi(io);
        const id = await resolveEntityId(api, identitySpec, idOrName);
        const body = opts.disable
          ? { enabled: false }
          : {
              enabled: true,
              duration: opts.duration,
              ...(opts.traceId !== undefined ? { traceId: opts.traceId } : {}),
              channels: opts.channel,
            };
        const res = await api.call<{ data: { enabled?: boolean; traceId?: string; until?: string } }>(
          'PUT',
          `/identities/${encodeURIComponent(id)}/trace`,
          body,
        );
        if (isScriptFormat(format)) await printAnswerAs(io, format, res, [id]);
        else if (!res.data.enabled) io.out(`tracing of identity ${id} is off`);
        else io.out(`tracing identity ${id} until ${res.data.until} (trace id ${res.data.traceId})`);
      },
    );
}
