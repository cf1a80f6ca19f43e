/**
 * Calls through a {@link Transport} with the CLI's error policy: any non-2xx answer becomes
 * `error: <CODE>: <message> (<cause>)` on stderr and exit 1, so every command reports failures the same way.
 */
import { CliError, type CliIo } from './io.js';
import { clientCertificateOf, SessionStore, type SavedLogin } from './session-store.js';
import { HttpTransport, type HttpMethod, type RequestOptions, type Transport } from './transport/http.js';

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

export function apiFor(login: SavedLogin, transport: Transport): Api {
  return {
    login,
    transport,
    async call<T>(method: HttpMethod, path: string, body?: unknown, options?: RequestOptions): Promise<T> {
      const res = await transport.request(method, path, body, options);
      if (res.status >= 200 && res.status < 300) return res.body as T;
      const hint =
        res.status === 401 ? `hint: the saved session for ${login.url} may have expired or been deleted, or this identity may not do this; run \`edgectl login ${loginHint(login)}\` again` : undefined;
      throw new ApiError(res.status, res.body, hint);
    },
  };
}

/** The saved login as an {@link Api}; "not logged in" is a plain failure (exit 1), not a usage error. */
export function requireApi(io: CliIo): Api {
  const login = new SessionStore(io.env).current();
  if (!login) throw new CliError('error: not logged in: run `edgectl login URL -u USER` first', 1);
  return apiFor(login, new HttpTransport({ url: login.url, ca: login.caCert, token: login.token, clientCert: clientCertificateOf(login) }));
}

/** The arguments of the `edgectl login` that made `login`, for hints. */
function loginHint(login: SavedLogin): string {
  if (login.identityFile) return `--identity ${login.identityFile}`;
  if (login.certFile) return `${login.url} --cert ${login.certFile} --key ${login.keyFile ?? 'KEY'}`;
  return `${login.url} -u ${login.username}`;
}
