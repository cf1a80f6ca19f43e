/**
 * `edgectl enrollment list|show|delete` (generic verbs over the enrollment resource definition), plus
 * `create IDENTITY --method ott|ottca|updb` and `refresh ID`, whose expiry is given as a duration
 * (parity: `ziti edge create enrollment`, 30 minutes by default, docs/reference-notes.md §7.2). `refresh` without
 * a duration gives the enrollment the span it had (an identity's enrollment keeps the controller's configured
 * duration instead of being cut to 30 minutes). Both print the enrollment's JWT or write it to `--jwt-out FILE`;
 * with `--json` the printed answer carries the JWT (unless `--jwt-out` took it).
 */
import { Option, type Command } from 'commander';
import { requireApi, type Api } from '../api.js';
import { registerEntity, resolveEntityId } from '../crud.js';
import { cas } from '../entities/ca.js';
import { enrollmentSpec } from '../entities/enrollment.js';
import { identitySpec } from '../entities/identity.js';
import { CliError, type CliIo } from '../io.js';
import { emitJwts } from '../jwt-output.js';
import { durationOption, expiresIn, jsonOption, jwtOutOption, positiveMinutes } from '../options.js';
import { formatOf, isScriptFormat, printAnswerAs, writeOutputOption, type Rec } from '../output.js';
import { resolveId } from '../resolve.js';

interface CreateOptions {
  method: 'ott' | 'ottca' | 'updb';
  username?: string;
  ca?: string;
  durationMinutes?: number;
  jwtOut?: string;
  json?: boolean;
  output?: string;
}

/** Fetches an enrollment, prints or writes its JWT, and returns the record. */
export async function emitEnrollmentJwt(
  api: Api,
  io: CliIo,
  enrollmentId: string,
  jwtOut: string | undefined,
  quiet: boolean,
): Promise<Rec> {
  const e = (await api.call<{ data: Rec }>('GET', `/enrollments/${encodeURIComponent(enrollmentId)}`)).data;
  if (typeof e.jwt !== 'string') throw new CliError(`error: enrollment ${enrollmentId} has no JWT`, 1);
  emitJwts(
    io,
    [{ method: String(e.method), jwt: e.jwt, ...(typeof e.expiresAt === 'string' ? { expiresAt: e.expiresAt } : {}) }],
    jwtOut,
    quiet,
  );
  return e;
}

/**
 * The `--json` answer of a create or refresh: the API's answer, plus the enrollment's `jwt` and `expiresAt`
 * unless `--jwt-out` wrote the JWT to a file (a script asking for JSON gets the JWT it asked for).
 */
function withJwt(res: { data?: Rec }, enrollment: Rec, jwtOut: string | undefined): Rec {
  if (jwtOut !== undefined) return res;
  return { ...res, data: { ...(res.data ?? {}), jwt: enrollment.jwt, expiresAt: enrollment.expiresAt } };
}

/**
 * The span an enrollment was last given, in ms: from its last write (its creation or last refresh) to its
 * expiry. Undefined when the record does not say (then the CLI default applies).
 */
export function enrollmentSpanMs(e: Rec): number | undefined {
  const from = Date.parse(String(e.updatedAt ?? e.createdAt));
  const to = Date.parse(String(e.expiresAt));
  const span = to - from;
  return Number.isFinite(span) && span >= 60_000 ? span : undefined;
}

export function registerEnrollment(program: Command, io: CliIo): void {
  const noun = registerEntity(program, io, enrollmentSpec);

  noun
    .command('create')
    .description('create an enrollment for an identity and print its JWT (or write it to --jwt-out)')
    .argument('identity', "the identity's id or name")
    .addOption(
      new Option('-m, --method <method>', 'enrollment method').choices(['ott', 'ottca', 'updb']).makeOptionMandatory(),
    )
    .option('-u, --username <username>', 'updb: the username the identity will log in with')
    .option('--ca <ca>', 'ottca: the CA (id or name) that issues the certificate')
    .addOption(durationOption('the enrollment'))
    .addOption(jwtOutOption())
    .addOption(writeOutputOption())
    .addOption(jsonOption())
    .action(async (identity: string, opts: CreateOptions) => {
      const format = formatOf(opts);
      const script = isScriptFormat(format) ? format : undefined;
      if (opts.method === 'updb' && opts.username === undefined)
        throw new CliError('error: --method updb needs --username USERNAME', 2);
      if (opts.method !== 'updb' && opts.username !== undefined)
        throw new CliError('error: --username is only for --method updb', 2);
      if (opts.method === 'ottca' && opts.ca === undefined)
        throw new CliError('error: --method ottca needs --ca CA', 2);
      if (opts.method !== 'ottca' && opts.ca !== undefined)
        throw new CliError('error: --ca is only for --method ottca', 2);
      const api = requireApi(io);
      const body: Rec = {
        identityId: await resolveEntityId(api, identitySpec, identity),
        method: opts.method,
        expiresAt: expiresIn(opts.durationMinutes),
      };
      if (opts.username !== undefined) body.username = opts.username;
      if (opts.ca !== undefined) body.caId = await resolveId(api, cas, opts.ca);
      const res = await api.call<{ data: { id: string } }>('POST', '/enrollments', body);
      if (!script) io.out(`created enrollment ${res.data.id}`);
      const e = await emitEnrollmentJwt(api, io, res.data.id, opts.jwtOut, script !== undefined);
      if (script) await printAnswerAs(io, script, withJwt(res, e, opts.jwtOut));
    });

  noun
    .command('refresh')
    .description('give an enrollment (expired or not) a new expiry and a new JWT for the same token')
    .argument('id', "the enrollment's id")
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  edgectl enrollment refresh 3xK9pQ --jwt-out laptop.jwt          # same span as before\n' +
        '  edgectl enrollment refresh 3xK9pQ --duration-minutes 1440 --json',
    )
    .addOption(
      new Option(
        '--duration-minutes <n>',
        'the enrollment expires after this many minutes (default: the span it was given at creation or its last refresh)',
      ).argParser(positiveMinutes),
    )
    .addOption(jwtOutOption())
    .addOption(writeOutputOption())
    .addOption(jsonOption())
    .action(
      async (idArg: string, opts: { durationMinutes?: number; jwtOut?: string; json?: boolean; output?: string }) => {
        const format = formatOf(opts);
        const script = isScriptFormat(format) ? format : undefined;
        const api = requireApi(io);
        const id = await resolveEntityId(api, enrollmentSpec, idArg);
        let expiresAt: string;
        if (opts.durationMinutes !== undefined) expiresAt = expiresIn(opts.durationMinutes);
        else {
          const current = (await api.call<{ data: Rec }>('GET', `/enrollments/${encodeURIComponent(id)}`)).data;
          const span = enrollmentSpanMs(current);
          expiresAt = span === undefined ? expiresIn(undefined) : new Date(Date.now() + span).toISOString();
        }
        const res = await api.call<{ data?: Rec }>('POST', `/enrollments/${encodeURIComponent(id)}/refresh`, {
          expiresAt,
        });
        if (!script) io.out(`refreshed enrollment ${id}: expires ${expiresAt}`);
        const e = await emitEnrollmentJwt(api, io, id, opts.jwtOut, script !== undefined);
        if (script) await printAnswerAs(io, script, withJwt(res, e, opts.jwtOut), [id]);
      },
    );
}
