/**
 * How the admin CLI reaches the Management API. Commands only see {@link Transport}: this one speaks HTTPS to a
 * running controller; `offline.ts` sends the same requests in-process to a stopped controller's app (`--data-dir`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { CliError } from '../io.js';
import { CLIENT_PREFIX, MANAGEMENT_PREFIX } from '../../model/api-prefixes.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** How one request differs from the JSON default. */
export interface RequestOptions {
  /** Content type of a string body sent as is (e.g. `text/plain` for a PEM); objects are always sent as JSON. */
  contentType?: string;
  /** The `Accept` header (default `application/json`). */
  accept?: string;
  /** Extra request headers (e.g. `mfa-validation-code`). */
  headers?: Record<string, string>;
}

export interface TransportResponse {
  status: number;
  /** The parsed JSON body, or the raw text when the body is not JSON (or undefined when empty). */
  body: unknown;
}

/** One request against one API; `path` is below its prefix (e.g. `/edge/management/v1`) and may carry a query string. */
export interface Transport {
  request(method: HttpMethod, path: string, body?: unknown, options?: RequestOptions): Promise<TransportResponse>;
}

export { CLIENT_PREFIX, MANAGEMENT_PREFIX };

export interface HttpTarget {
  /** Controller root, e.g. `https://127.0.0.1:1280` (no path). */
  url: string;
  /** PEM CA bundle to trust instead of the system roots; absent: the system roots. */
  ca?: string;
  /** Sent as `zt-session`, the header every Ziti client sends (parity: decisions.md, session header). */
  token?: string;
  /** Client certificate (PEM chain) and key presented over mutual TLS, for sessions from certificate logins. */
  clientCert?: ClientCertificate;
  /** An OIDC login's access token, sent as `Authorization: Bearer` instead of `token` (cli/oidc.ts). */
  bearer?: BearerSource;
  timeoutMs?: number;
  /** The API the paths are below: {@link MANAGEMENT_PREFIX} (default) or {@link CLIENT_PREFIX}. */
  prefix?: string;
}

/** Where a bearer token comes from, and how to get a new one when the controller says it has expired. */
export interface BearerSource {
  token(): Promise<string>;
  refresh(): Promise<void>;
}

export interface ClientCertificate {
  cert: string;
  key: string;
}

/**
 * TLS trust failures (e.g. SELF_SIGNED_CERT_IN_CHAIN, UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID),
 * as opposed to nothing answering: `login` answers these by offering the controller's own CA bundle.
 */
const TRUST_ERROR = /CERT|SIGNATURE|ISSUER|SELF_SIGNED|ALTNAME/;

/** The request got no HTTP answer (connection refused, DNS, timeout, or a certificate we do not trust). */
export class NetworkError extends CliError {
  constructor(
    readonly url: string,
    readonly code: string | undefined,
    message: string,
    readonly trustFailure: boolean,
  ) {
    super(`error: cannot reach ${url}: ${message}`, 1);
  }
}

export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
  /** DER of the certificate the server presented (kept when `peerCertificate` was asked for). */
  peerCertificate?: Buffer;
  headers?: IncomingHttpHeaders;
}

export interface RawRequestOptions {
  ca?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Content type of `body` (default `application/json`). */
  contentType?: string;
  insecure?: boolean;
  timeoutMs?: number;
  /** Client certificate and key for mutual TLS. */
  clientCert?: ClientCertificate;
  /** Keep the DER of the server's certificate in the response. */
  peerCertificate?: boolean;
}

/**
 * One HTTPS request. `insecure` turns certificate verification off; only `login` uses it, for the single
 * trust-on-first-use fetch of the CA bundle (parity: docs/reference-notes.md §11, `ziti edge login`).
 */
export function rawRequest(method: HttpMethod, url: string, opts: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(opts.body));
    }
    const req = https.request(
      url,
      {
        method,
        headers,
        ca: opts.ca,
        rejectUnauthorized: !opts.insecure,
        agent: false,
        ...(opts.clientCert ? { cert: opts.clientCert.cert, key: opts.clientCert.key } : {}),
      },
      (res) => {
        const peer = opts.peerCertificate ? (res.socket as TLSSocket).getPeerCertificate?.(false)?.raw : undefined;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
            ...(peer ? { peerCertificate: peer } : {}),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      const code = e.code;
      reject(new NetworkError(url, code, e.message, code !== undefined && TRUST_ERROR.test(code)));
    });
    req.setTimeout(opts.timeoutMs ?? 30_000, () =>
      req.destroy(
        Object.assign(new Error(`no answer after ${(opts.timeoutMs ?? 30_000) / 1000}s`), { code: 'ETIMEDOUT' }),
      ),
    );
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export function parseBody(raw: RawResponse): unknown {
  if (raw.text === '') return undefined;
  if (raw.contentType.includes('json')) {
    try {
      return JSON.parse(raw.text);
    } catch {
      return raw.text;
    }
  }
  return raw.text;
}

/** The Management API (or, with `prefix`, the Client API) over HTTPS, authenticated by a saved session token. */
export class HttpTransport implements Transport {
  constructor(private readonly target: HttpTarget) {}

  async request(
    method: HttpMethod,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<TransportResponse> {
    const send = async () => {
      const bearer = this.target.bearer;
      const headers: Record<string, string> = {
        ...options.headers,
        ...(bearer
          ? { authorization: `Bearer ${await bearer.token()}` }
          : this.target.token
            ? { 'zt-session': this.target.token }
            : {}),
      };
      if (options.accept) headers.accept = options.accept;
      return rawRequest(method, this.target.url + (this.target.prefix ?? MANAGEMENT_PREFIX) + path, {
        ca: this.target.ca,
        headers,
        body:
          body === undefined
            ? undefined
            : typeof body === 'string' && options.contentType
              ? body
              : JSON.stringify(body),
        contentType: typeof body === 'string' && options.contentType ? options.contentType : undefined,
        clientCert: this.target.clientCert,
        timeoutMs: this.target.timeoutMs,
      });
    };
    let raw = await send();
    // The controller's clock says the access token has expired: refresh it once and ask again.
    if (raw.status === 401 && this.target.bearer && /error="expired"/.test(String(raw.headers?.['www-authenticate']))) {
      await this.target.bearer.refresh();
      raw = await send();
    }
    return { status: raw.status, body: parseBody(raw) };
  }
}

/**
 * Normalises what people type for a controller address: `host:port`, `https://host:port/`, or a URL with an
 * API path (`…/edge/management/v1`) all become `https://host:port`.
 */
export function normaliseControllerUrl(input: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `https://${input}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new CliError(`error: not a controller address: ${input}`, 2);
  }
  if (u.protocol !== 'https:')
    throw new CliError(`error: the controller is only reachable over https (got ${u.protocol.replace(':', '')})`, 2);
  return `${u.protocol}//${u.host}`;
}
