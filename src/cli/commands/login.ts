/**
 * `edgectl login URL`: authenticates on the Management API with a username and password (`method=password`) or
 * with a client certificate over mutual TLS (`method=cert`: `--cert/--key`, or `--identity FILE` as written by
 * `edgectl enroll`) or with a JWT of an external signer (`method=ext-jwt`: `--jwt FILE|-`) and saves the session for
 * later commands. parity: `ziti edge login -u/-p`, `-c/-k`, `-f`
 * (docs/reference-notes.md §11), including trust on first use: when the system does not trust the controller's
 * certificate, the CA bundle the controller publishes at `/.well-known/est/cacerts` is shown and, once accepted,
 * saved with the login. Certificate logins save where the certificate and key are, and every later command
 * presents them again (the session belongs to that certificate).
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiError } from '../api.js';
import { fetchPublishedCaBundle } from '../ca-bundle.js';
import { readIdentityFile, type IdentityConfig } from '../identity-file.js';
import { CliError, type CliIo } from '../io.js';
import { MFA_CODE_ENV, mfaCode } from '../mfa-code.js';
import { SessionStore } from '../session-store.js';
import { passwordFromStdin, readStdin } from '../stdin.js';
import { oidcLogin } from '../oidc.js';
import {
  CLIENT_PREFIX,
  MANAGEMENT_PREFIX,
  NetworkError,
  normaliseControllerUrl,
  rawRequest,
  type ClientCertificate,
} from '../transport/http.js';

interface LoginOptions {
  username?: string;
  password?: string;
  passwordStdin?: boolean;
  cert?: string;
  key?: string;
  identity?: string;
  ca?: string;
  yes?: boolean;
  jwt?: string;
  mfaCode?: string;
  oidc?: boolean;
  totp?: string;
}

const HELP = `
Trust:
  --ca FILE        trust the CA certificates in FILE (PEM) for this controller.
  (no --ca)        if the system already trusts the controller's certificate, nothing more is needed.
                   Otherwise the CA bundle the controller publishes (GET /edge/client/v1/.well-known/est/cacerts,
                   fetched once without certificate verification) is shown with its SHA-256 fingerprints and,
                   once accepted, saved with the login. On a terminal you are asked; without a terminal the
                   bundle is accepted only with -y, else login fails (exit 2). Logging in again to the same URL
                   reuses the CA saved before.
  --identity FILE  trusts the CA bundle of the identity file (its id.ca) unless --ca is given.

Credentials (one of):
  -u USER -p PASS          password; missing -u or -p are asked for on a terminal, without one they are required (exit 2).
  -u USER --password-stdin the password from standard input (keeps it out of the process list and shell history).
  --cert FILE --key FILE   client certificate and its key (PEM), e.g. one issued through enrollment.
  --identity FILE          the certificate, key, CA bundle and controller URL of an identity file (\`edgectl enroll\`);
                           the URL argument may be left out.
  --jwt FILE               a JWT from an external identity provider (method=ext-jwt; - reads it from standard input).

MFA: when the identity has TOTP MFA (or its auth policy requires it), the code is taken from --mfa-code (or
--totp), else $EDGECTL_MFA_CODE, else asked for on a terminal; a recovery code works in its place (once).

OIDC (--oidc): logs in through the controller's OpenID provider (/oidc) as current SDKs do, without a browser:
PKCE, the password, certificate (--cert/--key, --identity) or external JWT (--jwt) step, the TOTP step when
asked, then the code exchange. The access and refresh tokens are saved instead of a session token; commands send
the access token as Authorization: Bearer and refresh it when it expires (each refresh replaces both tokens).
When the controller refuses a refresh (revoked, expired, the session ended), commands say to log in again.
\`edgectl logout\` ends the session and revokes the refresh token.

The session is saved in $EDGECTL_CONFIG_DIR/config.json (default ~/.config/edgectl/config.json), mode 0600, under
the context named by --context NAME or $EDGECTL_CONTEXT, else the current context (\`edgectl context list\`). A new
context becomes the current one only when the current context holds no login.

Examples:
  edgectl login https://ctrl.example.com:1280 -u admin
  pass show edgectl/admin | edgectl login https://127.0.0.1:1280 -u admin --password-stdin --ca ca.pem
  edgectl login --identity laptop.json --context laptop     # keeps the admin's login in its own context
  idp-token-command | edgectl login https://127.0.0.1:1280 --jwt - --context sso   # a JWT of an external signer
  edgectl --context laptop client services
  edgectl login https://ctrl.example.com:1280 --oidc -u admin                  # OIDC; asks for the TOTP code if needed
  edgectl login https://127.0.0.1:1280 --oidc -u admin -p "$PW" --totp 123456   # OIDC from a script, with MFA
  edgectl login https://127.0.0.1:1280 --oidc --cert me.pem --key me.key --ca ca.pem`;

export function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`error: cannot read --ca ${file}: ${(e as Error).message}`, 2);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new CliError(`error: --ca ${file} holds no PEM certificate`, 2);
  return text;
}

/** Whether `url` answers over TLS trusted by `ca` (or the system roots when `ca` is undefined). */
async function trusted(url: string, ca: string | undefined): Promise<boolean> {
  try {
    await rawRequest('GET', url + MANAGEMENT_PREFIX + '/version', { ca, timeoutMs: 10_000 });
    return true;
  } catch (e) {
    if (e instanceof NetworkError && e.trustFailure) return false;
    throw e;
  }
}

/** Fetches the controller's CA bundle without verification and asks (or uses -y) whether to trust it. */
async function trustOnFirstUse(url: string, io: CliIo, yes: boolean): Promise<string> {
  const bundle = await fetchPublishedCaBundle(url, "the server's certificate is not trusted: pass --ca FILE");
  const lines = bundle.certs.map(
    (c) =>
      `  ${c.subject}\n    SHA-256 ${createHash('sha256')
        .update(c.der)
        .digest('hex')
        .replace(/(..)(?!$)/g, '$1:')}`,
  );
  io.err(
    `The certificate of ${url} is not trusted by this system. The controller presents this CA bundle:\n${lines.join('\n')}`,
  );
  if (!yes) {
    if (!io.isTTY)
      throw new CliError(
        'error: not trusting an unverified CA bundle without a terminal to ask: pass -y to accept it, or --ca FILE',
        2,
      );
    const { confirm } = await import('@inquirer/prompts');
    if (!(await confirm({ message: `Trust this CA bundle for ${url}?`, default: false })))
      throw new CliError('error: CA bundle not trusted; login cancelled', 1);
  }
  return bundle.pem;
}

async function credentials(io: CliIo, opts: LoginOptions): Promise<{ username: string; password: string }> {
  let { username, password } = opts;
  if (username === undefined || password === undefined) {
    const { input, password: secret } = await import('@inquirer/prompts');
    username ??= await input({ message: 'Username', validate: (v) => v.length > 0 || 'required' });
    password ??= await secret({ message: 'Password', mask: '*' });
  }
  return { username, password };
}

/** A client certificate and key from files, checked to belong together (so TLS does not fail obscurely later). */
function readCertAndKey(certFile: string, keyFile: string): ClientCertificate {
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(`error: cannot read ${flag} ${file}: ${(e as Error).message}`, 2);
    }
  };
  const pair = { cert: read(certFile, '--cert'), key: read(keyFile, '--key') };
  checkPair(pair, `--cert ${certFile}`, `--key ${keyFile}`);
  return pair;
}

function checkPair(pair: ClientCertificate, certWhat: string, keyWhat: string): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pair.cert);
  } catch (e) {
    throw new CliError(`error: ${certWhat} holds no PEM certificate (${(e as Error).message})`, 2);
  }
  let key;
  try {
    key = createPrivateKey(pair.key);
  } catch (e) {
    throw new CliError(`error: ${keyWhat} holds no usable private key (${(e as Error).message})`, 2);
  }
  if (!cert.checkPrivateKey(key))
    throw new CliError(`error: the key of ${keyWhat} does not belong to the certificate of ${certWhat}`, 2);
}

/** Parses a response body as JSON when it is JSON. */
function bodyOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

interface SessionData {
  token?: string;
  authQueries?: unknown[];
  identity?: { name?: string };
  identityId?: string;
}

/** The JWT of `--jwt FILE|-`: the file's (or standard input's) text, trimmed; alone, not beside other credentials. */
async function readJwt(io: CliIo, opts: LoginOptions, certLogin: boolean): Promise<string> {
  if (certLogin || opts.username !== undefined || opts.password !== undefined || opts.passwordStdin)
    throw new CliError('error: --jwt is a credential of its own: leave out -u/-p, --cert/--key and --identity', 2);
  let text: string;
  try {
    text = opts.jwt === '-' ? await readStdin(io, '--jwt -') : readFileSync(opts.jwt!, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`error: cannot read --jwt ${opts.jwt}: ${(e as Error).message}`, 2);
  }
  const jwt = text.trim();
  if (!/^[\w-]+\.[\w-]+\.[\w-]*$/.test(jwt)) throw new CliError(`error: --jwt ${opts.jwt} holds no JWT`, 2);
  return jwt;
}

const isMfaQuery = (q: unknown) => (q as { typeId?: unknown } | null)?.typeId === 'MFA';
const hasMfaQuery = (qs: unknown[] | undefined) => Array.isArray(qs) && qs.some(isMfaQuery);

/**
 * Answers the MFA query of a new, partial session (`POST /authenticate/mfa`). A refused code ends the partial
 * session, so nothing half-logged-in is left behind or saved.
 */
async function completeMfa(
  io: CliIo,
  url: string,
  ca: string | undefined,
  clientCert: ClientCertificate | undefined,
  token: string,
  option: string | undefined,
): Promise<void> {
  const send = (method: 'POST' | 'DELETE', path: string, body?: string) =>
    rawRequest(method, `${url}${MANAGEMENT_PREFIX}${path}`, { ca, clientCert, headers: { 'zt-session': token }, body });
  let code: string;
  try {
    code = await mfaCode(io, { option, optionName: '--mfa-code', env: true, purpose: 'login' });
  } catch (e) {
    await send('DELETE', '/current-api-session').catch(() => undefined);
    throw e;
  }
  const res = await send('POST', '/authenticate/mfa', JSON.stringify({ code }));
  if (res.status === 200) return;
  await send('DELETE', '/current-api-session').catch(() => undefined);
  throw new ApiError(res.status, bodyOf(res.text), 'hint: the MFA code was not accepted (a code is accepted once)');
}

/** The identity the bearer speaks for (the Client API's view, which every identity may read). */
async function identityName(
  url: string,
  ca: string | undefined,
  clientCert: ClientCertificate | undefined,
  accessToken: string,
): Promise<string | undefined> {
  // A certificate login's token is bound to its certificate: it goes along.
  const res = await rawRequest('GET', `${url}${CLIENT_PREFIX}/current-identity`, {
    ca,
    clientCert,
    headers: { authorization: `Bearer ${accessToken}` },
  });
  if (res.status !== 200) return undefined;
  return (bodyOf(res.text) as { data?: { name?: string } }).data?.name;
}

/** `login --oidc`: the OIDC flow (cli/oidc.ts), then the tokens saved as the context's login. */
async function loginWithOidc(
  io: CliIo,
  store: SessionStore,
  a: {
    url: string;
    ca: string | undefined;
    clientCert: ClientCertificate | undefined;
    jwt: string | undefined;
    opts: LoginOptions;
    identityFile: string | undefined;
  },
): Promise<void> {
  const { url, ca, clientCert, jwt, opts } = a;
  const method = clientCert ? 'cert' : jwt ? 'ext-jwt' : 'password';
  const creds = method === 'password' ? await credentials(io, opts) : undefined;
  const tokens = await oidcLogin({
    url,
    ca,
    clientCert,
    method,
    ...creds,
    ...(jwt !== undefined && { jwt }),
    totpCode: () =>
      mfaCode(io, { option: opts.totp ?? opts.mfaCode, optionName: '--totp', env: true, purpose: 'login' }),
  });
  const username = creds?.username ?? (await identityName(url, ca, clientCert, tokens.accessToken)) ?? '?';
  const context = store.contextName();
  const replaced = store.current();
  store.save({
    url,
    username,
    method,
    token: '',
    ...(ca !== undefined ? { caCert: ca } : {}),
    loginTime: new Date().toISOString(),
    ...(a.identityFile !== undefined
      ? { identityFile: resolve(a.identityFile) }
      : clientCert
        ? { certFile: resolve(opts.cert!), keyFile: resolve(opts.key!) }
        : {}),
    oidc: tokens,
  });
  io.out(`logged in to ${url} as ${username} through OIDC (context ${context}, saved in ${store.file})`);
  if (replaced && (replaced.url !== url || replaced.username !== username))
    io.err(
      `note: this replaced the login of ${replaced.username} at ${replaced.url} in context ${context}; use --context NAME to keep several logins`,
    );
  if (store.currentName() !== context)
    io.err(
      `note: the current context is still ${store.currentName()}: use \`--context ${context}\` or \`edgectl context use ${context}\``,
    );
}

export function registerLogin(program: Command, io: CliIo): void {
  program
    .command('login')
    .description(
      'log in to a controller (password, client certificate or external JWT) and save the session for later commands',
    )
    .argument(
      '[url]',
      'controller address, e.g. https://127.0.0.1:1280 (https:// is assumed); with --identity, taken from the file',
    )
    .option('-u, --username <username>', 'username (asked for on a terminal when missing)')
    .option('-p, --password <password>', 'password (asked for on a terminal when missing)')
    .option('--password-stdin', 'read the password from standard input (first line), e.g. from a secret store')
    .option('-c, --cert <file>', 'log in with this client certificate (PEM; with --key) over mutual TLS')
    .option('-k, --key <file>', 'the private key (PEM) of --cert')
    .option(
      '-f, --identity <file>',
      'log in with the certificate and key of an identity file (as written by `edgectl enroll`)',
    )
    .option('--jwt <file>', 'log in with a JWT of an external JWT signer read from FILE (- for standard input)')
    .option('--ca <file>', 'PEM file of the CA certificates to trust for this controller')
    .option('-y, --yes', "trust the controller's published CA bundle without asking")
    .option('--mfa-code <code>', `the MFA code when the login asks for one (else $${MFA_CODE_ENV}, else a prompt)`)
    .option('--oidc', "log in through the controller's OIDC provider (tokens refreshed as needed) instead of a session")
    .option('--totp <code>', 'the TOTP (or recovery) code when an --oidc login asks for one; the same as --mfa-code')
    .addHelpText('after', HELP)
    .action(async (rawUrl: string | undefined, opts: LoginOptions) => {
      if (opts.passwordStdin) {
        if (opts.password !== undefined) throw new CliError('error: give -p or --password-stdin, not both', 2);
        opts.password = await passwordFromStdin(io);
      }
      const certLogin = opts.cert !== undefined || opts.key !== undefined || opts.identity !== undefined;
      const jwt = opts.jwt !== undefined ? await readJwt(io, opts, certLogin) : undefined;
      if (certLogin && (opts.username !== undefined || opts.password !== undefined)) {
        throw new CliError(
          'error: give either -u/-p (password) or --cert/--key or --identity (certificate), not both',
          2,
        );
      }
      if (opts.identity !== undefined && (opts.cert !== undefined || opts.key !== undefined)) {
        throw new CliError('error: --identity already holds a certificate and key: leave out --cert and --key', 2);
      }
      if ((opts.cert === undefined) !== (opts.key === undefined))
        throw new CliError('error: --cert and --key go together', 2);

      let identity: IdentityConfig | undefined;
      let clientCert: ClientCertificate | undefined;
      if (opts.identity !== undefined) {
        identity = readIdentityFile(opts.identity);
        clientCert = { cert: identity.cert, key: identity.key };
        checkPair(clientCert, `identity file ${opts.identity} (id.cert)`, `identity file ${opts.identity} (id.key)`);
      } else if (opts.cert !== undefined && opts.key !== undefined) {
        clientCert = readCertAndKey(opts.cert, opts.key);
      }
      const given = rawUrl ?? identity?.url;
      if (given === undefined)
        throw new CliError('error: the controller URL is required (except with --identity, whose file names it)', 2);
      const url = normaliseControllerUrl(given);
      if (!clientCert && !jwt && !io.isTTY && (opts.username === undefined || opts.password === undefined)) {
        throw new CliError('error: -u USERNAME and -p PASSWORD are required when there is no terminal to ask', 2);
      }

      const store = new SessionStore(io.env);
      let ca: string | undefined;
      if (opts.ca !== undefined) {
        ca = readCaFile(opts.ca);
      } else if (identity?.ca !== undefined) {
        ca = identity.ca;
      } else {
        // A CA trusted before for this URL, in this context or another one.
        const previous = [store.current(), ...Object.values(store.all())].find(
          (l) => l?.url === url && l.caCert !== undefined,
        );
        const savedCa = previous?.caCert;
        if (savedCa !== undefined && (await trusted(url, savedCa))) ca = savedCa;
        else if (!(await trusted(url, undefined))) ca = await trustOnFirstUse(url, io, opts.yes === true);
      }

      if (opts.oidc) {
        await loginWithOidc(io, store, { url, ca, clientCert, jwt, opts, identityFile: opts.identity });
        return;
      }
      if (opts.totp !== undefined)
        throw new CliError('error: --totp goes with --oidc (a login without it takes --mfa-code)', 2);

      let username: string;
      let res;
      if (clientCert) {
        res = await rawRequest('POST', `${url}${MANAGEMENT_PREFIX}/authenticate?method=cert`, {
          ca,
          clientCert,
          body: '{}',
        });
      } else if (jwt) {
        res = await rawRequest('POST', `${url}${MANAGEMENT_PREFIX}/authenticate?method=ext-jwt`, {
          ca,
          headers: { authorization: `Bearer ${jwt}` },
          body: '{}',
        });
      } else {
        const creds = await credentials(io, opts);
        username = creds.username;
        res = await rawRequest('POST', `${url}${MANAGEMENT_PREFIX}/authenticate?method=password`, {
          ca,
          body: JSON.stringify(creds),
        });
      }
      const body = bodyOf(res.text);
      if (res.status !== 200) throw new ApiError(res.status, body);
      const data = (body as { data?: SessionData }).data;
      if (!data?.token) throw new CliError('error: the controller answered without a session token', 1);
      if (hasMfaQuery(data.authQueries)) {
        await completeMfa(io, url, ca, clientCert, data.token, opts.mfaCode);
        data.authQueries = data.authQueries!.filter((q) => !isMfaQuery(q));
      }
      username = clientCert || jwt ? (data.identity?.name ?? data.identityId ?? '?') : username!;
      const context = store.contextName();
      const replaced = store.current();
      const where =
        opts.identity !== undefined
          ? { identityFile: resolve(opts.identity) }
          : clientCert
            ? { certFile: resolve(opts.cert!), keyFile: resolve(opts.key!) }
            : {};
      store.save({
        url,
        username,
        method: clientCert ? 'cert' : jwt ? 'ext-jwt' : 'password',
        token: data.token,
        ...(ca !== undefined ? { caCert: ca } : {}),
        loginTime: new Date().toISOString(),
        ...where,
      });
      io.out(
        `logged in to ${url} as ${username}${clientCert ? ' with a client certificate' : jwt ? ' with an external JWT' : ''} (context ${context}, saved in ${store.file})`,
      );
      if (replaced && (replaced.url !== url || replaced.username !== username)) {
        io.err(
          `note: this replaced the login of ${replaced.username} at ${replaced.url} in context ${context}; use --context NAME to keep several logins`,
        );
      }
      if (store.currentName() !== context)
        io.err(
          `note: the current context is still ${store.currentName()}: use \`--context ${context}\` or \`edgectl context use ${context}\``,
        );
      if (Array.isArray(data.authQueries) && data.authQueries.length > 0) {
        io.err(
          'warning: this session still needs a secondary factor that edgectl cannot answer; admin commands will be refused',
        );
      }
    });
}
