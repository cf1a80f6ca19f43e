/**
 * The tests' HTTP clients: JSON in, status + headers + parsed body out. `request` goes over HTTPS to a listener,
 * trusting the controller CA; `injectRequest` hands the same request to the app in-process (Fastify's `inject`),
 * with no socket and no TLS. A transport picks one of them per request.
 */
import https from 'node:https';
import type { FastifyInstance } from 'fastify';
import { responseViolations } from './schemas.js';

export interface HttpResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
  /** The raw body (binary answers such as PNGs). */
  bytes?: Buffer;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A JSON-serialisable body, or a raw string sent as is. */
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  /** The client's source address (a loopback one such as `127.0.0.5`): another client, as the controller sees it. */
  from?: string;
  /** A client certificate and its key: only a TLS connection can present them. */
  cert?: string;
  key?: string;
}

/** Sends one request (`url` absolute) and answers the response. */
export type Transport = (method: string, url: string, opts?: RequestOptions) => Promise<HttpResponse>;

/** The request's headers and payload, the same for both transports. */
function outgoing(opts: RequestOptions): { headers: Record<string, string>; payload?: string | Buffer } {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  let payload: string | Buffer | undefined;
  if (opts.raw !== undefined) {
    payload = opts.raw;
    headers['content-type'] = opts.contentType ?? 'text/plain';
  } else if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] = opts.contentType ?? 'application/json';
  } else if (opts.contentType) {
    headers['content-type'] = opts.contentType;
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return { headers, payload };
}

function response(status: number, headers: HttpResponse['headers'], bytes: Buffer): HttpResponse {
  const text = bytes.toString('utf8');
  let body: unknown = text;
  if (String(headers['content-type'] ?? '').includes('json') && text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status, headers, body, text, bytes };
}

/**
 * One request over a new TLS connection (no keep-alive), as an outside client makes it; its response is checked
 * against the response schemas like every other the tests receive.
 */
export const request = (ca: string, method: string, url: string, opts: RequestOptions = {}): Promise<HttpResponse> =>
  conforming(method, url, rawRequest(ca, method, url, opts));

function rawRequest(ca: string, method: string, url: string, opts: RequestOptions = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const { headers, payload } = outgoing(opts);
    const tlsOpts = { ca, cert: opts.cert, key: opts.key, localAddress: opts.from };
    const req = https.request(url, { method, headers, ...tlsOpts, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(response(res.statusCode ?? 0, res.headers, Buffer.concat(chunks))));
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * The same request handed to `app` in-process. Everything from the router on runs as for a request off the
 * listener (hooks, validation, handlers, error envelope); what it cannot carry is the connection itself: a
 * client certificate, TLS, timeouts and connection limits. Header values are strings, as a client reads them.
 */
export async function injectRequest(
  app: FastifyInstance,
  method: string,
  url: string,
  opts: RequestOptions = {},
): Promise<HttpResponse> {
  if (opts.cert !== undefined || opts.key !== undefined) throw new Error('a client certificate needs TLS: use request');
  const { headers, payload } = outgoing(opts);
  const res = await app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
    ...(opts.from !== undefined ? { remoteAddress: opts.from } : {}),
  });
  const stringHeaders: HttpResponse['headers'] = {};
  for (const [name, value] of Object.entries(res.headers))
    stringHeaders[name] = Array.isArray(value) ? value.map(String) : value === undefined ? undefined : String(value);
  return response(res.statusCode, stringHeaders, res.rawPayload);
}

/**
 * A response that breaks the reference's response schema for its operation and status (test/harness/schemas.ts):
 * the request's promise rejects with the violations, so the test that received the response fails, whichever
 * file shares its process.
 */
export class SchemaViolation extends Error {}

async function conforming(method: string, url: string, res: Promise<HttpResponse>): Promise<HttpResponse> {
  const r = await res;
  const contentType = r.headers['content-type'];
  const violations = responseViolations(
    method.toUpperCase(),
    url,
    r.status,
    Array.isArray(contentType) ? contentType[0] : contentType,
    r.body,
  );
  if (violations.length > 0)
    throw new SchemaViolation(
      `${method} ${url} answered ${r.status} against the response schema:\n  ${violations.join('\n  ')}\n${r.text.slice(0, 2000)}`,
    );
  return r;
}

/** HTTPS to the listener for every request; every response is checked against the response schemas. */
export const tlsTransport =
  (ca: string): Transport =>
  (method, url, opts) =>
    conforming(method, url, rawRequest(ca, method, url, opts));

/**
 * In-process for every request, except one that presents a client certificate: that one goes over TLS to the
 * listener (the app reads the certificate from the TLS connection). Every response is checked against the
 * response schemas.
 */
export const injectTransport =
  (app: FastifyInstance, ca: string): Transport =>
  (method, url, opts = {}) =>
    conforming(
      method,
      url,
      opts.cert !== undefined || opts.key !== undefined
        ? rawRequest(ca, method, url, opts)
        : injectRequest(app, method, url, opts),
    );
