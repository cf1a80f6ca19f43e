/**
 * Calls through a {@link Transport} with the CLI's error policy: any non-2xx answer becomes
 * `error: <CODE>: <message> (<cause>)` on stderr and exit 1, so every command reports failures the same way.
 */
import { CliError, type CliIo } from './io.js';
import { OidcBearer } from './oidc.js';
import { clientCertificateOf, SessionStore, type OidcTokens, type SavedLogin } from './session-store.js';
import { OfflineTransport } from './transport/offline.js';
import {
  CLIENT_PREFIX,
  HttpTransport,
  type HttpMethod,
  type HttpTarget,
  type RequestOptions,
  type Transport,
} from './transport/http.js';

/** The `{error}` member of the wire error envelope (parity: docs/reference-notes.md §3). */
interface WireError {
  code?: string;
  message?: string;
  causeMessage?: string;
  cause?: { field?: string; reason?: string; message?: string; value?: unknown } & Record<string, unknown>;
}

/** One line for an error envelope: the code, the message, then the field and reason or the cause message. */
export function formatApiError(status: number, body: unknown): string {
  const err = (body as { error?: WireError } | undefined)?.error;
  if (!err || typeof err !== 'object') {
    const text = typeof body === 'string' && body.trim() !== '' ? `: ${body.trim().slice(0, 200)}` : '';
    return `error: HTTP ${status}${text}`;
  }
  let line = `error: ${err.code ?? `HTTP ${status}`}: ${err.message ?? ''}`.trimEnd();
  const c = err.cause;
  if (c && typeof c === 'object') {
    if (typeof c.field === 'string' && c.field !== '') line += ` (field ${c.field}: ${c.reason ?? 'invalid'})`;
    else if (typeof c.reason === 'string' && c.reason !== '') line += ` (${c.reason})`;
    else if (typeof c.message === 'string' && c.message !== '') line += ` (${c.message})`;
  } else if (err.causeMessage) {
    line += ` (${err.causeMessage})`;
  }
  return line;
}

/** A failed API call; a CliError so `run` prints it and exits 1. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    hint?: string,
  ) {
    super(formatApiError(status, body) + (hint ? `\n${hint}` : ''), 1);
  }
  get code(): string | undefined {
    return (this.body as { error?: WireError } | undefined)?.error?.code;
  }
}

/** A logged-in Management API client: the saved login and the transport built from it. */
export interface Api {
  login: SavedLogin;
  transport: Transport;
  /** Sends a request and returns the parsed body of a 2xx answer; throws {@link ApiError} otherwise. */
  call<T = unknown>(method: HttpMethod, path: string, body?: unknown, options?: RequestOptions): Promise<T>;
}

/** `which: 'offline'` gives no login hints: a 401 there is no expired session, and `edgectl login` would not help. */
export function apiFor(
  login: SavedLogin,
  transport: Transport,
  which: 'management' | 'client' | 'offline' = 'management',
): Api {
  return {
    login,
    transport,
    async call<T>(method: HttpMethod, path: string, body?: unknown, options?: RequestOptions): Promise<T> {
      const res = await transport.request(method, path, body, options);
      if (res.status >= 200 && res.status < 300) return res.body as T;
      throw new ApiError(
        res.status,
        res.body,
        res.status === 401 && which !== 'offline' ? await unauthorizedHint(login, transport, which, path) : undefined,
      );
    },
  };
}

/**
 * Why a 401 happened, as far as the CLI can tell: the session is gone (log in again), or it is alive but its
 * identity is no admin, which the Management API answers with the same 401 (docs/reference-notes.md §3.4);
 * telling a device to log in again would send it in circles, so it is pointed at `edgectl client` instead.
 */
async function unauthorizedHint(
  login: SavedLogin,
  transport: Transport,
  which: 'management' | 'client',
  path: string,
): Promise<string> {
  const expired = `hint: the saved session for ${login.url} may have expired or been deleted; run \`edgectl login ${loginHint(login)}\` again`;
  if (path === '/current-identity') return expired;
  let me: { status: number; body: unknown };
  try {
    me = await transport.request('GET', '/current-identity');
  } catch {
    return expired;
  }
  if (me.status !== 200) return expired;
  const identity = (me.body as { data?: { name?: string; isAdmin?: boolean } } | undefined)?.data;
  if (which === 'management' && identity?.isAdmin === false) {
    return `hint: the session is valid, but ${identity.name ?? 'this identity'} is not an admin and the Management API is for admins; its own view is \`edgectl client services|sessions|edge-routers\``;
  }
  return `hint: the session of ${identity?.name ?? login.username} is valid, but it may not do this`;
}

/** The saved login commands use (`--context`, `$EDGECTL_CONTEXT`, else the current context). */
function savedLogin(io: CliIo): SavedLogin {
  const store = new SessionStore(io.env);
  const login = store.current();
  if (login) return login;
  if (store.explicit)
    throw new CliError(
      `error: not logged in in context ${JSON.stringify(store.contextName())}: run \`edgectl login URL --context ${store.contextName()}\` first`,
      1,
    );
  throw new CliError('error: not logged in: run `edgectl login URL -u USER` first', 1);
}

/**
 * With `--data-dir`: the stopped controller's own app in-process, as its default admin (docs/decisions.md,
 * "Offline CLI"); one transport per command, closed when the command ends.
 */
function offlineApi(io: CliIo, dataDir: string): Api {
  // Reused when a command asks twice: the lock is held once.
  const transport = io.offline instanceof OfflineTransport ? io.offline : new OfflineTransport(dataDir, io.env);
  io.offline = transport;
  const login: SavedLogin = {
    url: `${dataDir} (offline)`,
    username: 'default admin',
    token: '',
    loginTime: new Date().toISOString(),
  };
  return apiFor(login, transport, 'offline');
}

/** The saved login as an {@link Api}; "not logged in" is a plain failure (exit 1), not a usage error. */
export function requireApi(io: CliIo): Api {
  if (io.dataDir !== undefined) return offlineApi(io, io.dataDir);
  const login = savedLogin(io);
  return apiFor(login, new HttpTransport(httpTarget(io, login)));
}

/**
 * How a saved login reaches the controller: its session token, or an OIDC login's bearer (refreshed and saved
 * again in the same context when it expires), with the client certificate of a certificate login.
 */
function httpTarget(io: CliIo, login: SavedLogin): HttpTarget {
  const clientCert = clientCertificateOf(login);
  if (login.oidc) {
    const store = new SessionStore(io.env);
    // The same object as the Api's login: a refresh's new tokens are what later calls (and logout) see.
    const bearer = new OidcBearer(login as SavedLogin & { oidc: OidcTokens }, store, store.contextName(), clientCert);
    return { url: login.url, ca: login.caCert, bearer, clientCert };
  }
  return { url: login.url, ca: login.caCert, token: login.token, clientCert };
}

/** The saved login as a Client API client: what the logged-in identity itself may see and do. */
export function requireClientApi(io: CliIo): Api {
  if (io.dataDir !== undefined)
    throw new CliError(
      'error: `edgectl client` commands act as an enrolled identity through the Client API, and --data-dir has no identity to act as: log in as it (`edgectl login --identity FILE`) and run them against the running controller',
      1,
    );
  const login = savedLogin(io);
  return apiFor(login, new HttpTransport({ ...httpTarget(io, login), prefix: CLIENT_PREFIX }), 'client');
}

/** The arguments of the `edgectl login` that made `login`, for hints. */
function loginHint(login: SavedLogin): string {
  const oidc = login.oidc ? ' --oidc' : '';
  if (login.identityFile) return `--identity ${login.identityFile}${oidc}`;
  if (login.certFile) return `${login.url} --cert ${login.certFile} --key ${login.keyFile ?? 'KEY'}${oidc}`;
  return `${login.url} -u ${login.username}${oidc}`;
}
