/**
 * `edgectl enroll JWT_FILE`: the client side of identity enrollment (docs/reference-notes.md §7.1, §7.3;
 * parity: `ziti edge enroll`).
 *
 * 1. The JWT is decoded (not yet trusted) for its method (`em`), controller URL (`iss`), identity (`sub`) and
 *    token (`jti`).
 * 2. The controller's CA bundle is fetched from `<iss>/edge/client/v1/.well-known/est/cacerts` without
 *    verification (or read from `--ca FILE`), then the controller is contacted over TLS validated with that
 *    bundle, and the JWT's signature is verified with the public key of the server certificate it presented.
 *    The controller signs enrollment JWTs with that very key, so a forged or altered JWT fails here, and so does
 *    a controller impersonated by someone without the real server key (whatever bundle they publish): nothing
 *    (no CSR, no password) is sent to a controller that did not issue the JWT.
 * 3. `ott`: a key pair and CSR are generated locally (the private key never leaves this machine), the CSR is sent
 *    to `POST /enroll/ott`, and an identity file (identity-file.ts: `{ztAPI, id: {key, cert, ca}}`, mode 0600) is
 *    written. `ottca`: the certificate (and key) issued by the enrollment's CA is presented over mutual TLS to
 *    `POST /enroll/ottca`, and the identity file holds that certificate. `updb`: the new password is sent to
 *    `POST /enroll/updb`; no file is written (log in with the username afterwards).
 */
import { closeSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { Option, type Command } from 'commander';
import { ApiError } from '../api.js';
import { fetchPublishedCaBundle } from '../ca-bundle.js';
import { renderIdentityFile } from '../identity-file.js';
import { passwordFromStdin } from '../stdin.js';
import { CliError, type CliIo } from '../io.js';
import { readCaFile } from './login.js';
import {
  CLIENT_PREFIX,
  NetworkError,
  normaliseControllerUrl,
  parseBody,
  rawRequest,
  type ClientCertificate,
} from '../transport/http.js';

const KEY_TYPES = ['ec-p256', 'ec-p384', 'rsa-2048', 'rsa-3072', 'rsa-4096'] as const;
type KeyType = (typeof KEY_TYPES)[number];

interface EnrollOptions {
  out?: string;
  keyType?: KeyType;
  ca?: string;
  password?: string | true;
  passwordStdin?: boolean;
  cert?: string;
  key?: string;
}

/** The claims of an enrollment JWT as read before verification. */
export interface UnverifiedJwt {
  header: Record<string, unknown>;
  em: string;
  iss: string;
  sub: string;
  jti: string;
  exp?: number;
}

const IDENTITY_METHODS = ['ott', 'ottca', 'updb'];

const HELP = `
By method (the JWT says which):
  ott    generates a key (--key-type, default ec-p256) and CSR here, enrolls, and writes --out FILE, an identity file
         {"ztAPI": URL, "id": {"key": "pem:…", "cert": "pem:…", "ca": "pem:…"}} (mode 0600; the SDKs' format).
         Log in with it: edgectl login --identity FILE
  ottca  as ott, but with the certificate and key the enrollment's CA issued (--cert FILE --key FILE).
  updb   sets the password of the enrollment's username (-p PASSWORD, or asked for on a terminal).
         Log in with it: edgectl login URL -u USERNAME

Trust: the controller's CA bundle is fetched from <iss>/edge/client/v1/.well-known/est/cacerts (or read from
--ca FILE) and the JWT must verify against the server certificate the controller presents over TLS validated by
that bundle; a forged or altered JWT, or an impostor controller, is refused (exit 1) before anything is sent.`;

function base64UrlJson(part: string): Record<string, unknown> {
  const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
  return v as Record<string, unknown>;
}

/** Decodes (without verifying) an enrollment JWT. @throws CliError exit 2 when it is not one. */
export function decodeEnrollmentJwt(jwt: string, what: string): UnverifiedJwt {
  const parts = jwt.split('.');
  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    if (parts.length !== 3) throw new Error('expected three dot-separated parts');
    header = base64UrlJson(parts[0]!);
    payload = base64UrlJson(parts[1]!);
  } catch (e) {
    throw new CliError(`error: ${what} does not hold a JWT (${(e as Error).message})`, 2);
  }
  const { em, iss, sub, jti, exp } = payload;
  if (typeof em !== 'string' || typeof iss !== 'string' || typeof sub !== 'string' || typeof jti !== 'string') {
    throw new CliError(`error: ${what} is not an enrollment JWT (it lacks the em, iss, sub or jti claim)`, 2);
  }
  return { header, em, iss, sub, jti, ...(typeof exp === 'number' ? { exp } : {}) };
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`error: cannot read ${what} ${file}: ${(e as Error).message}`, 2);
  }
}

/** Checks the options fit the JWT's method, before anything is sent anywhere (usage errors, exit 2). */
function checkOptions(em: string, opts: EnrollOptions): void {
  const refuse = (flag: string, why: string) => {
    throw new CliError(`error: ${flag} ${why} (this is ${em === 'ott' ? 'an' : 'a'} ${em} enrollment JWT)`, 2);
  };
  if (em === 'ott' || em === 'ottca') {
    if (opts.out === undefined) refuse('--out IDENTITY_FILE', 'is required');
    if (opts.password !== undefined) refuse('--password', 'is only for updb enrollment');
  }
  if (em === 'ott' && (opts.cert !== undefined || opts.key !== undefined))
    refuse('--cert/--key', 'are only for ottca enrollment: ott generates the key here');
  if (em === 'ottca') {
    if (opts.cert === undefined || opts.key === undefined)
      refuse('--cert FILE and --key FILE', "(the CA's certificate for this identity) are required");
    if (opts.keyType !== undefined) refuse('--key-type', 'is only for ott enrollment');
  }
  if (em === 'updb') {
    if (opts.out !== undefined)
      refuse('--out', 'is not used: updb enrollment sets a password, there is no identity file');
    if (opts.cert !== undefined || opts.key !== undefined || opts.keyType !== undefined)
      refuse('--cert/--key/--key-type', 'are not used by updb enrollment');
  }
}

/** The PEM of a DER certificate. */
const pemOf = (der: Buffer): string => new X509Certificate(der).toString();

/**
 * Contacts the controller over TLS validated by `ca` and returns the server certificate it presented.
 * @throws CliError exit 1 when the controller's certificate does not validate with `ca`.
 */
async function serverCertificate(url: string, ca: string, caSource: string): Promise<Buffer> {
  let res;
  try {
    res = await rawRequest('GET', url + CLIENT_PREFIX + '/version', { ca, peerCertificate: true, timeoutMs: 10_000 });
  } catch (e) {
    if (e instanceof NetworkError && e.trustFailure) {
      throw new CliError(
        `error: the controller at ${url} presents a certificate that the CA bundle from ${caSource} does not validate (${e.code}); not enrolling`,
        1,
      );
    }
    throw e;
  }
  if (!res.peerCertificate) throw new CliError(`error: could not read the server certificate of ${url}`, 1);
  return res.peerCertificate;
}

async function askPassword(io: CliIo): Promise<string> {
  if (!io.isTTY)
    throw new CliError('error: -p PASSWORD is required for updb enrollment when there is no terminal to ask', 2);
  const { password } = await import('@inquirer/prompts');
  const first = await password({ message: 'New password', mask: '*', validate: (v) => v.length > 0 || 'required' });
  const again = await password({ message: 'Repeat the password', mask: '*' });
  if (first !== again) throw new CliError('error: the passwords differ', 2);
  return first;
}

/** Sends an enroll request; a non-2xx answer is an {@link ApiError} (exit 1). */
async function enrollRequest(
  url: string,
  path: string,
  ca: string,
  body: unknown,
  clientCert?: ClientCertificate,
): Promise<Record<string, unknown>> {
  const res = await rawRequest('POST', url + CLIENT_PREFIX + path, { ca, body: JSON.stringify(body), clientCert });
  const parsed = parseBody(res);
  if (res.status < 200 || res.status >= 300) throw new ApiError(res.status, parsed);
  const data = (parsed as { data?: unknown } | undefined)?.data;
  return data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
}

export function registerEnroll(program: Command, io: CliIo): void {
  program
    .command('enroll')
    .description(
      'enroll an identity with its enrollment JWT (ott, ottca: write an identity file; updb: set the password)',
    )
    .argument(
      'jwt-file',
      'file holding the enrollment JWT (from `edgectl identity create --ott --jwt-out FILE` or an admin)',
    )
    .option('-o, --out <file>', 'identity file to write (ott, ottca); mode 0600, never overwritten')
    .addOption(
      new Option('--key-type <type>', 'ott: the type of the key generated here (default ec-p256)').choices(KEY_TYPES),
    )
    .option(
      '--ca <file>',
      "trust these CA certificates (PEM) for the controller instead of fetching the controller's bundle",
    )
    .option('-p, --password [password]', 'updb: the new password (asked for on a terminal when left out)')
    .option('--password-stdin', 'updb: read the new password from standard input (first line)')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  edgectl enroll laptop.jwt -o laptop.json             # ott: key made here, identity file written\n' +
        '  edgectl enroll laptop.jwt -o laptop.json --key-type rsa-2048\n' +
        '  edgectl enroll bob.jwt --password-stdin < pass.txt  # updb: set the password',
    )
    .option('--cert <file>', "ottca: the certificate (PEM) the enrollment's CA issued for this identity")
    .option('--key <file>', 'ottca: the private key (PEM) of --cert')
    .addHelpText('after', HELP)
    .action(async (jwtFile: string, opts: EnrollOptions) => {
      const jwt = readText(jwtFile, 'the JWT file').trim();
      const claims = decodeEnrollmentJwt(jwt, jwtFile);
      if (!IDENTITY_METHODS.includes(claims.em)) {
        throw new CliError(
          `error: ${jwtFile} is a JWT for ${claims.em} enrollment; edgectl enroll enrolls identities (ott, ottca, updb)`,
          2,
        );
      }
      if (opts.passwordStdin) {
        if (claims.em !== 'updb')
          throw new CliError(`error: --password-stdin is only for updb enrollment (${jwtFile} is ${claims.em})`, 2);
        if (opts.password !== undefined) throw new CliError('error: give -p or --password-stdin, not both', 2);
        opts.password = await passwordFromStdin(io);
      }
      checkOptions(claims.em, opts);
      const url = normaliseControllerUrl(claims.iss);
      let clientCert: ClientCertificate | undefined;
      if (claims.em === 'ottca')
        clientCert = { cert: readText(opts.cert!, '--cert'), key: readText(opts.key!, '--key') };
      if (claims.exp !== undefined && claims.exp * 1000 <= Date.now()) {
        throw new CliError(
          `error: the enrollment JWT expired at ${new Date(claims.exp * 1000).toISOString()}: ask an administrator for a new one (edgectl enrollment refresh)`,
          1,
        );
      }

      // The identity file is created (empty, 0600, failing if it exists) before anything is sent, so a consumed
      // token can never end with a certificate and key that cannot be saved; it is removed again on failure.
      const out = opts.out === undefined ? undefined : reserve(opts.out);
      try {
        await enrollWith(io, jwtFile, jwt, claims, url, opts, clientCert, out);
      } catch (e) {
        if (out) out.discard();
        throw e;
      }
    });
}

interface ReservedFile {
  path: string;
  write(text: string): void;
  discard(): void;
}

function reserve(path: string): ReservedFile {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new CliError(`error: ${path} already exists: enroll writes a new identity file and never replaces one`, 2);
    throw new CliError(`error: cannot create ${path}: ${(e as Error).message}`, 2);
  }
  return {
    path,
    write(text) {
      try {
        writeSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
    discard() {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(path, { force: true });
    },
  };
}

async function enrollWith(
  io: CliIo,
  jwtFile: string,
  jwt: string,
  claims: UnverifiedJwt,
  url: string,
  opts: EnrollOptions,
  clientCert: ClientCertificate | undefined,
  out: ReservedFile | undefined,
): Promise<void> {
  // Trust: the CA bundle, then the server certificate it validates, then the JWT signed with that server key.
  const bundle =
    opts.ca !== undefined
      ? { pem: readCaFile(opts.ca), source: opts.ca }
      : await fetchPublishedCaBundle(url, 'pass --ca FILE');
  const serverDer = await serverCertificate(url, bundle.pem, bundle.source);
  const { verifyEnrollmentJwt } = await import('../../pki/jwt.js');
  try {
    await verifyEnrollmentJwt(jwt, pemOf(serverDer));
  } catch (e) {
    if ((e as { reason?: string }).reason === 'expired-jwt')
      throw new CliError('error: the enrollment JWT has expired: ask an administrator for a new one', 1);
    throw new CliError(
      `error: the enrollment JWT in ${jwtFile} does not verify against the server certificate of ${url}: it was altered, or not issued by that controller; not enrolling`,
      1,
    );
  }

  if (claims.em === 'updb') {
    const password = typeof opts.password === 'string' ? opts.password : await askPassword(io);
    const data = await enrollRequest(url, `/enroll/updb?token=${encodeURIComponent(claims.jti)}`, bundle.pem, {
      password,
    });
    const username = typeof data.username === 'string' ? data.username : undefined;
    io.out(`enrolled identity ${claims.sub} at ${url}: password set${username ? ` for ${username}` : ''}`);
    io.out(`log in with: edgectl login ${url} -u ${username ?? 'USERNAME'}`);
    return;
  }

  let key: string;
  let cert: string;
  let ca = bundle.pem;
  if (claims.em === 'ott') {
    const { generateKeyAndCsr } = await import('../../pki/csr.js');
    const generated = await generateKeyAndCsr({ commonName: claims.sub, keyType: opts.keyType ?? 'ec-p256' });
    const data = await enrollRequest(url, '/enroll/ott', bundle.pem, {
      token: claims.jti,
      clientCsr: generated.csrPem,
    });
    if (typeof data.cert !== 'string' || !data.cert.includes('-----BEGIN CERTIFICATE-----')) {
      throw new CliError('error: the controller answered the enrollment without a certificate', 1);
    }
    key = generated.privateKeyPem;
    cert = data.cert;
    if (typeof data.ca === 'string' && data.ca.includes('-----BEGIN CERTIFICATE-----')) ca = data.ca;
  } else {
    await enrollRequest(
      url,
      `/enroll/ottca?token=${encodeURIComponent(claims.jti)}`,
      bundle.pem,
      { token: claims.jti },
      clientCert,
    );
    key = clientCert!.key;
    cert = clientCert!.cert;
  }
  out!.write(renderIdentityFile({ url, key, cert, ca }));
  io.out(`enrolled identity ${claims.sub} at ${url}: identity file ${out!.path} (mode 0600)`);
  io.out(`log in with: edgectl login --identity ${out!.path}`);
}
