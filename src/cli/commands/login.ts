/**
 * `edgectl login URL`: authenticates with a username and password on the Management API and saves the
 * session for later commands. parity: `ziti edge login` (controller-behaviours.md §11), including trust on
 * first use: when the system does not trust the controller's certificate, the CA bundle the controller
 * publishes at `/.well-known/est/cacerts` is shown and, once accepted, saved with the login.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiError } from '../api.js';
import { CliError, type CliIo } from '../io.js';
import { SessionStore } from '../session-store.js';
import { CLIENT_PREFIX, MANAGEMENT_PREFIX, NetworkError, normaliseControllerUrl, rawRequest } from '../transport/http.js';

interface LoginOptions {
  username?: string;
  password?: string;
  ca?: string;
  yes?: boolean;
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

Credentials:
  missing -u or -p are asked for on a terminal; without a terminal they are required (exit 2).

The session is saved in $EDGECTL_CONFIG_DIR/config.json (default ~/.config/edgectl/config.json), mode 0600.`;

function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`error: cannot read --ca ${file}: ${(e as Error).message}`, 2);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(`error: --ca ${file} holds no PEM certificate`, 2);
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
  const wellKnown = url + CLIENT_PREFIX + '/.well-known/est/cacerts';
  const res = await rawRequest('GET', wellKnown, { insecure: true, headers: { accept: 'application/pkcs7-mime' }, timeoutMs: 10_000 });
  if (res.status !== 200) throw new CliError(`error: the server's certificate is not trusted and ${wellKnown} answered HTTP ${res.status}; pass --ca FILE`, 1);
  // Loaded on demand: only this path needs the PKCS#7 parser.
  const { parsePkcs7Certificates } = await import('../../pki/pkcs7.js');
  let certs;
  try {
    certs = parsePkcs7Certificates(res.text);
  } catch (e) {
    throw new CliError(`error: ${wellKnown} did not return a PKCS#7 CA bundle (${(e as Error).message}); pass --ca FILE`, 1);
  }
  if (certs.length === 0) throw new CliError(`error: ${wellKnown} returned no certificate; pass --ca FILE`, 1);
  const lines = certs.map((c) => `  ${c.subject}\n    SHA-256 ${createHash('sha256').update(c.der).digest('hex').replace(/(..)(?!$)/g, '$1:')}`);
  io.err(`The certificate of ${url} is not trusted by this system. The controller presents this CA bundle:\n${lines.join('\n')}`);
  if (!yes) {
    if (!io.isTTY) throw new CliError('error: not trusting an unverified CA bundle without a terminal to ask: pass -y to accept it, or --ca FILE', 2);
    const { confirm } = await import('@inquirer/prompts');
    if (!(await confirm({ message: `Trust this CA bundle for ${url}?`, default: false }))) throw new CliError('error: CA bundle not trusted; login cancelled', 1);
  }
  return certs.map((c) => c.pem.trimEnd()).join('\n') + '\n';
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

export function registerLogin(program: Command, io: CliIo): void {
  program
    .command('login')
    .description('log in to a controller and save the session for later commands')
    .argument('url', 'controller address, e.g. https://127.0.0.1:1280 (https:// is assumed)')
    .option('-u, --username <username>', 'username (asked for on a terminal when missing)')
    .option('-p, --password <password>', 'password (asked for on a terminal when missing)')
    .option('--ca <file>', 'PEM file of the CA certificates to trust for this controller')
    .option('-y, --yes', "trust the controller's published CA bundle without asking")
    .addHelpText('after', HELP)
    .action(async (rawUrl: string, opts: LoginOptions) => {
      const url = normaliseControllerUrl(rawUrl);
      if (!io.isTTY && (opts.username === undefined || opts.password === undefined)) {
        throw new CliError('error: -u USERNAME and -p PASSWORD are required when there is no terminal to ask', 2);
      }
      const store = new SessionStore(io.env);
      let ca: string | undefined;
      if (opts.ca !== undefined) {
        ca = readCaFile(opts.ca);
      } else {
        const previous = store.current();
        const savedCa = previous?.url === url ? previous.caCert : undefined;
        if (savedCa !== undefined && (await trusted(url, savedCa))) ca = savedCa;
        else if (!(await trusted(url, undefined))) ca = await trustOnFirstUse(url, io, opts.yes === true);
      }
      const { username, password } = await credentials(io, opts);
      const res = await rawRequest('POST', `${url}${MANAGEMENT_PREFIX}/authenticate?method=password`, {
        ca,
        body: JSON.stringify({ username, password }),
      });
      let body: unknown;
      try {
        body = JSON.parse(res.text);
      } catch {
        body = res.text;
      }
      if (res.status !== 200) throw new ApiError(res.status, body);
      const data = (body as { data?: { token?: string; authQueries?: unknown[] } }).data;
      if (!data?.token) throw new CliError('error: the controller answered without a session token', 1);
      store.save({ url, username, token: data.token, ...(ca !== undefined ? { caCert: ca } : {}), loginTime: new Date().toISOString() });
      io.out(`logged in to ${url} as ${username} (session saved in ${store.file})`);
      if (Array.isArray(data.authQueries) && data.authQueries.length > 0) {
        io.err('warning: this session still needs a secondary factor (MFA), which edgectl cannot answer yet; admin commands will be refused');
      }
    });
}
