/**
 * The live stream of recorded events (`GET /edge/management/v1/events/stream`, docs/events.md): server-sent
 * events, one per recorded event (`id:` its outbox position, `event:` its namespace, `data:` the event as JSON),
 * read from the outbox after a cursor, so every controller sharing the store streams every event, and a client
 * that reconnects with `Last-Event-ID` resumes after the last event it got (or from the oldest kept, if that one
 * was pruned meanwhile).
 *
 * Bounded (`events.stream.*`, events-config.ts): each stream reads one batch from the store at a time, and reads
 * the next only while what it has written and its reader has not taken stays within `bufferBytes`; past it, it
 * waits for the reader to take it all, and a reader that has not within `writeTimeoutMs` is disconnected (it can
 * resume), never buffered for. At most `maxClients` streams per controller (more are refused with 429); a comment
 * line every `heartbeatMs` keeps idle proxies from closing the connection. One `EventStreams` per daemon (its
 * deps), closed with it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { eventsAfterPosition, lastEventPosition } from '../model/events/follow.js';
import { DomainError, fieldError } from '../model/errors.js';
import { eventFilter } from '../model/events/deliver.js';
import { EVENT_NAMESPACES } from '../model/events/event.js';
import type { Ctx } from '../model/ctx.js';

import type { StreamLimits } from './events-config.js';

export type { StreamLimits };

/** What a stream request asks for: the position to resume after, and its type filter. */
export interface StreamRequest {
  /** Resume after this outbox position (undefined: from now on). */
  after?: number;
  /** `namespace` or `namespace.eventType` entries (empty: every event). */
  types: string[];
}

const TYPE = /^([A-Za-z]+)(\.[A-Za-z]+)?$/;

/** Reads `Last-Event-ID` (or `lastEventId`) and `type` (repeated or comma-separated); refuses bad ones with 400. */
export function streamRequest(lastEventId: string | undefined, typeParams: readonly string[]): StreamRequest {
  const types = typeParams
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '');
  for (const t of types) {
    const m = TYPE.exec(t);
    if (!m || !EVENT_NAMESPACES.includes(m[1] as never))
      throw fieldError('type', `must be a namespace (${EVENT_NAMESPACES.join(', ')}) or namespace.eventType`, t);
  }
  if (lastEventId === undefined || lastEventId === '') return { types };
  if (!/^\d{1,15}$/.test(lastEventId))
    throw fieldError('Last-Event-ID', 'must be an event position from this stream', lastEventId);
  return { after: Number(lastEventId), types };
}

export class EventStreams {
  private readonly open = new Set<() => void>();

  constructor(private readonly limits: StreamLimits) {}

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Takes over the reply and streams (on its own, after this resolves) until the client goes, the reader is too
   * slow, or the controller stops.
   */
  async serve(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, ask: StreamRequest): Promise<void> {
    if (this.open.size >= this.limits.maxClients)
      throw new DomainError('RATE_LIMITED', { retryAfterSeconds: 5, causeMessage: 'too many event streams open' });
    const accepts = ask.types.length > 0 ? eventFilter(undefined, ask.types) : () => true;
    let cursor = ask.after ?? (await lastEventPosition(ctx));
    const { limits } = this;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    // How long a client waits before reconnecting.
    res.write('retry: 2000\n\n');
    let closed = false;
    let wake: (() => void) | undefined;
    const stop = () => {
      if (closed) return;
      closed = true;
      wake?.();
      this.open.delete(stop);
      res.end();
    };
    this.open.add(stop);
    req.raw.on('close', stop);
    res.on('close', stop);
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    /** Whether the socket took what was written within the time allowed. */
    const drained = () =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), limits.writeTimeoutMs);
        const done = () => {
          clearTimeout(t);
          res.off('drain', done);
          wake = undefined;
          resolve(!closed);
        };
        res.once('drain', done);
        wake = done;
      });
    let lastWrite = Date.now();
    const run = async () => {
      while (!closed) {
        const rows = await eventsAfterPosition(ctx, cursor, limits.batch);
        let out = '';
        for (const r of rows) {
          if (accepts(r.namespace, r.eventType)) out += `id: ${r.seq}\nevent: ${r.namespace}\ndata: ${r.body}\n\n`;
          cursor = r.seq;
        }
        if (out === '' && Date.now() - lastWrite >= limits.heartbeatMs) out = ': heartbeat\n\n';
        if (out !== '' && !closed) {
          lastWrite = Date.now();
          res.write(out);
          // Within its buffer the reader is given the next batch; past it, it must take everything first.
          if (res.writableLength > limits.bufferBytes && res.writableNeedDrain && !(await drained())) {
            // A reader that does not keep up is let go, not buffered for: it resumes with Last-Event-ID.
            ctx.log.warn({ after: cursor }, 'event stream closed: its reader did not keep up');
            res.destroy();
            break;
          }
        }
        if (rows.length < limits.batch && !closed) await pause(limits.pollMs);
      }
    };
    // Runs on its own: the request's handler is done once the stream has begun.
    void run()
      .catch((err: unknown) => {
        ctx.log.warn({ err }, 'event stream ended: the store failed');
        res.destroy();
      })
      .finally(stop);
  }

  /** Ends every stream (the controller stops). */
  closeAll(): void {
    for (const stop of [...this.open]) stop();
  }
}
