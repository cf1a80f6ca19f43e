/**
 * A client of a server-sent-events stream of the Management API (`edgectl events tail`): follows it, and when
 * the connection ends or fails, reconnects after the server's `retry:` delay sending `Last-Event-ID`, so no
 * event is missed or repeated across reconnects. An answer other than 200 ends the follow with the API's error.
 */
import https from 'node:https';
import { ApiError } from '../api.js';
import { parseBody, MANAGEMENT_PREFIX, type HttpTarget } from './http.js';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface FollowOptions {
  /** Called for each event; answering false ends the follow. */
  onEvent(e: SseEvent): boolean | void;
  /** Told of a reconnection (the connection ended or failed). */
  onReconnect?(reason: string): void;
  /** Resume after this event (default: from now on). */
  lastEventId?: string;
  signal?: AbortSignal;
}

/** Parses SSE text as it arrives: complete events out, the rest kept. */
export class SseParser {
  private buffer = '';
  private current: { id?: string; event?: string; data: string[] } = { data: [] };
  retryMs: number | undefined;

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') {
        const c = this.current;
        if (c.data.length > 0)
          out.push({
            data: c.data.join('\n'),
            ...(c.id !== undefined && { id: c.id }),
            ...(c.event !== undefined && { event: c.event }),
          });
        this.current = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') this.current.data.push(value);
      else if (field === 'id') this.current.id = value;
      else if (field === 'event') this.current.event = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    return out;
  }
}

/** Follows `path` (below the Management API) until `onEvent` says stop or `signal` aborts. */
export async function followStream(target: HttpTarget, path: string, opts: FollowOptions): Promise<void> {
  let lastEventId = opts.lastEventId;
  let retryMs = 2000;
  for (;;) {
    if (opts.signal?.aborted) return;
    const parser = new SseParser();
    const outcome = await new Promise<{ done: boolean; reason?: string }>((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (target.token) headers['zt-session'] = target.token;
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const req = https.request(target.url + (target.prefix ?? MANAGEMENT_PREFIX) + path, {
        method: 'GET',
        headers,
        ca: target.ca,
        agent: false,
        ...(target.clientCert ? { cert: target.clientCert.cert, key: target.clientCert.key } : {}),
      });
      const abort = () => {
        req.destroy();
        resolve({ done: true });
      };
      opts.signal?.addEventListener('abort', abort, { once: true });
      const finish = (v: { done: boolean; reason?: string }) => {
        opts.signal?.removeEventListener('abort', abort);
        resolve(v);
      };
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const contentType = String(res.headers['content-type'] ?? '');
            reject(new ApiError(res.statusCode ?? 0, parseBody({ status: res.statusCode ?? 0, contentType, text })));
          });
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          for (const e of parser.push(chunk)) {
            if (e.id !== undefined) lastEventId = e.id;
            if (opts.onEvent(e) === false) {
              req.destroy();
              finish({ done: true });
              return;
            }
          }
        });
        res.on('end', () => finish({ done: false, reason: 'the stream ended' }));
        res.on('error', (e) => finish({ done: false, reason: e.message }));
      });
      req.on('error', (e) => finish({ done: false, reason: e.message }));
      req.end();
    });
    if (outcome.done || opts.signal?.aborted) return;
    retryMs = parser.retryMs ?? retryMs;
    opts.onReconnect?.(outcome.reason ?? 'the stream ended');
    await new Promise((r) => setTimeout(r, retryMs));
  }
}
