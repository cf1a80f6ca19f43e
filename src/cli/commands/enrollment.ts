/**
 * `edgectl enrollment list|show|delete` (generic verbs over the enrollment resource definition), plus
 * `create IDENTITY --method ott|ottca|updb` and `refresh ID`, whose expiry is given as a duration
 * (parity: `ziti edge create enrollment`, 30 minutes by default, docs/reference-notes.md §7.2). Both print the
 * enrollment's JWT or write it to `--jwt-out FILE`.
 */
import { Option, type Command } from 'commander';
import { requireApi, type Api } from '../api.js';
import { registerEntity, resolveEntityId } from '../crud.js';
import { cas } from '../entities/ca.js';
import { enrollmentSpec } from '../entities/enrollment.js';
import { identitySpec } from '../entities/identity.js';
import { CliError, type CliIo } from '../io.js';
import { emitJwts } from '../jwt-output.js';
import { durationOption, expiresIn, jsonOption, jwtOutOption } from '../options.js';
import { printJson, type Rec } from '../output.js';
import { resolveId } from '../resolve.js';

interface CreateOptions {
  method: 'ott' | 'ottca' | 'updb';
  username?: string;
  ca?: string;
  durationMinutes?: number;
  jwtOut?: string;
  json?: boolean;
}

/** Fetches an enrollment and prints or writes its JWT. */
export async function emitEnrollmentJwt(api: Api, io: CliIo, enrollmentId: string, jwtOut: string | undefined, quiet: boolean): Promise<void> {
  const e = (await api.call<{ data: Rec }>('GET', `/enrollments/${encodeURIComponent(enrollmentId)}`)).data;
  if (typeof e.jwt !== 'string') throw new CliError(`error: enrollment ${enrollmentId} has no JWT`, 1);
  emitJwts(io, [{ method: String(e.method), jwt: e.jwt, ...(typeof e.expiresAt === 'string' ? { expiresAt: e.expiresAt } : {}) }], jwtOut, quiet);
}

export function registerEnrollment(program: Command, io: CliIo): void {
  const noun = registerEntity(program, io, enrollmentSpec);

  noun
    .command('create')
    .description('create an enrollment for an identity and print its JWT (or write it to --jwt-out)')
    .argument('identity', "the identity's id or name")
    .addOption(new Option('-m, --method <method>', 'enrollment method').choices(['ott', 'ottca', 'updb']).makeOptionMandatory())
    .option('-u, --username <username>', 'updb: the username the identity will log in with')
    .option('--ca <ca>', 'ottca: the CA (id or name) that issues the certificate')
    .addOption(durationOption('the enrollment'))
    .addOption(jwtOutOption())
    .addOption(jsonOption())
    .action(async (identity: string, opts: CreateOptions) => {
      if (opts.method === 'updb' && opts.username === undefined) throw new CliError('error: --method updb needs --username USERNAME', 2);
      if (opts.method !== 'updb' && opts.username !== undefined) throw new CliError('error: --username is only for --method updb', 2);
      if (opts.method === 'ottca' && opts.ca === undefined) throw new CliError('error: --method ottca needs --ca CA', 2);
      if (opts.method !== 'ottca' && opts.ca !== undefined) throw new CliError('error: --ca is only for --method ottca', 2);
      const api = requireApi(io);
      const body: Rec = {
        identityId: await resolveEntityId(api, identitySpec, identity),
        method: opts.method,
        expiresAt: expiresIn(opts.durationMinutes),
      };
      if (opts.username !== undefined) body.username = opts.username;
      if (opts.ca !== undefined) body.caId = await resolveId(api, cas, opts.ca);
      const res = await api.call<{ data: { id: string } }>('POST', '/enrollments', body);
      if (opts.json) printJson(io, res);
      else io.out(`created enrollment ${res.data.id}`);
      await emitEnrollmentJwt(api, io, res.data.id, opts.jwtOut, opts.json === true);
    });

  noun
    .command('refresh')
    .description('give an enrollment (expired or not) a new expiry and a new JWT for the same token')
    .argument('id', "the enrollment's id")
    .addOption(durationOption('the enrollment'))
    .addOption(jwtOutOption())
    .addOption(jsonOption())
    .action(async (idArg: string, opts: { durationMinutes?: number; jwtOut?: string; json?: boolean }) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, enrollmentSpec, idArg);
      const expiresAt = expiresIn(opts.durationMinutes);
      const res = await api.call('POST', `/enrollments/${encodeURIComponent(id)}/refresh`, { expiresAt });
      if (opts.json) printJson(io, res);
      else io.out(`refreshed enrollment ${id}: expires ${expiresAt}`);
      await emitEnrollmentJwt(api, io, id, opts.jwtOut, opts.json === true);
    });
}
