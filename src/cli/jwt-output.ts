/**
 * Enrollment JWTs for people: written to a file readable by the owner only (`--jwt-out FILE`), or printed. A JWT
 * is a bearer credential until it is used or expires, hence 0600.
 */
import { extname } from 'node:path';
import { writePrivateFile } from './identity-file.js';
import { CliError, type CliIo } from './io.js';

export interface EnrollmentJwt {
  method: string;
  jwt: string;
  expiresAt?: string;
}

/** `alice.jwt` + `updb` → `alice.updb.jwt`: the file for one of several JWTs. */
const fileFor = (file: string, method: string): string => {
  const ext = extname(file);
  return ext ? `${file.slice(0, -ext.length)}.${method}${ext}` : `${file}.${method}`;
};

/**
 * Writes the JWTs to `out` (one JWT: `out` itself; several: `out` with the method before the extension), or,
 * without `out`, prints them unless `quiet` (the `--json` output must stay one JSON document).
 */
export function emitJwts(io: CliIo, jwts: readonly EnrollmentJwt[], out: string | undefined, quiet = false): void {
  if (jwts.length === 0) throw new CliError('error: the controller answered without an enrollment JWT', 1);
  for (const j of jwts) {
    if (out !== undefined) {
      const file = jwts.length === 1 ? out : fileFor(out, j.method);
      try {
        writePrivateFile(file, j.jwt + '\n');
      } catch (e) {
        throw new CliError(`error: cannot write the enrollment JWT to ${file}: ${(e as Error).message}`, 1);
      }
      if (!quiet)
        io.out(`wrote the ${j.method} enrollment JWT to ${file}${j.expiresAt ? ` (expires ${j.expiresAt})` : ''}`);
    } else if (!quiet) {
      io.out(`${j.method} enrollment JWT${j.expiresAt ? ` (expires ${j.expiresAt})` : ''}:`);
      io.out(j.jwt);
    }
  }
}

/** The JWTs of an identity record's outstanding enrollments (`enrollment.{ott,ottca,updb}.jwt`). */
export function identityJwts(record: Record<string, unknown>, methods: readonly string[]): EnrollmentJwt[] {
  const enrollment = (record.enrollment ?? {}) as Record<string, { jwt?: unknown; expiresAt?: unknown } | undefined>;
  const out: EnrollmentJwt[] = [];
  for (const method of methods) {
    const e = enrollment[method];
    if (e && typeof e.jwt === 'string')
      out.push({ method, jwt: e.jwt, ...(typeof e.expiresAt === 'string' ? { expiresAt: e.expiresAt } : {}) });
  }
  return out;
}
