/**
 * The delivery loop of one controller (docs/events.md): every second, while this controller runs the periodic
 * work (so once cluster-wide), each sink gets what is past its cursor (model/events/deliver.ts), each sink on its
 * own so a slow one holds up no other. A sink whose write fails is retried with exponential backoff and jitter;
 * the batch it keeps failing on is given up (dead-lettered: its cursor moves past it, the loss recorded and
 * counted) after `retry.maxAttempts` attempts or `retry.maxAge` of trying, whichever comes first. Until then
 * nothing after it is delivered: order per sink holds.
 *
 * Its clock and timers are a `DeliveryScheduler` (the real ones unless given): a test passes simulated ones, so a
 * minute-long outage with its many retries passes in simulated time (docs/events.md, "Retries").
 */
import type { Ctx, Logger } from '../model/ctx.js';
import {
  boundBacklog,
  deliverEvents,
  pruneEvents,
  sinkLag,
  skipBatch,
  type DeliveryOptions,
  type DropReason,
  type EventSink,
} from '../model/events/deliver.js';
import type { EventsConfig, RetryPolicy, SinkConfig } from './events-config.js';
import { sinkOf } from './event-sinks.js';

/** What delivery tells the metrics. */
export interface DeliveryHooks {
  delivered(sink: string, count: number): void;
  dropped(sink: string, count: number, reason: DropReason): void;
  deadLettered(sink: string): void;
}

/** Local sinks: retried from a second up to a minute apart, never given up (their backlog bounds them). */
const LOCAL_RETRY: RetryPolicy = { initialBackoffMs: 1000, maxBackoffMs: 60_000, maxAttempts: 0, maxAgeMs: 0 };

/** A failure of the sink itself, told apart from the store's. */
class SinkWriteError extends Error {
  constructor(
    original: unknown,
    readonly batchKey: string,
  ) {
    super(original instanceof Error ? original.message : String(original));
  }
}

interface SinkState {
  cfg: SinkConfig;
  sink: EventSink & { close?(): void; batchSize?: number };
  retry: RetryPolicy;
  running?: Promise<void> | undefined;
  /** Not tried again before this (the scheduler's time). */
  retryAt: number;
  /** The failing batch (its first event) and how often and since when it failed. */
  failing?: { key: string; attempts: number; since: number } | undefined;
  /** Cancels the pending retry. */
  cancelRetry?: (() => void) | undefined;
}

/**
 * The clock and timers of the delivery loop: the rounds (`every`), the retries (`after`) and the time they are
 * measured in (`now`, for `retry.maxAge`). Each answers a function that cancels it.
 */
export interface DeliveryScheduler {
  now(): number;
  after(ms: number, fn: () => void): () => void;
  every(ms: number, fn: () => void): () => void;
}

/** Real time: Node's timers, which do not keep the process alive. */
export const REAL_TIME: Readonly<DeliveryScheduler> = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
};

/** The delay before attempt `attempts + 1`: doubling from the initial backoff up to the maximum, half of it jittered. */
export function backoffMs(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number {
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.min(30, attempts - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}

export interface DeliveryDeps {
  ctx: Ctx;
  log: Logger;
  /** Whether this controller delivers now (it runs the periodic work). */
  lead(): Promise<boolean>;
  hooks?: DeliveryHooks;
  /** Where the stdout sink writes (default process.stdout). */
  stdout?: NodeJS.WritableStream;
  /** The clock and timers (default REAL_TIME). */
  scheduler?: DeliveryScheduler;
  /** The backoff's jitter, from [0, 1) (default Math.random). */
  random?: () => number;
}

export class EventDelivery {
  private readonly states: SinkState[];
  private readonly time: DeliveryScheduler;
  private stopTicker: (() => void) | undefined;
  private ticking = false;
  private closed = false;
  /** Work started by the timers (rounds, retries), until it settles: what `idle` waits for. */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly cfg: EventsConfig,
    private readonly deps: DeliveryDeps,
  ) {
    this.states = cfg.sinks.map((c) => ({
      cfg: c,
      sink: sinkOf(c, deps.stdout),
      retry: c.type === 'webhook' ? c.retry : LOCAL_RETRY,
      retryAt: 0,
    }));
    this.time = deps.scheduler ?? REAL_TIME;
  }

  private track(work: Promise<unknown>): void {
    const p = work.catch(() => {}).finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  /** Resolves once the work the timers started (and what it started in turn) has settled. */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** The sinks' names (their cursors'), in config order. */
  get sinkNames(): string[] {
    return this.states.map((s) => s.cfg.name);
  }

  private options(s: SinkState): DeliveryOptions {
    const hooks = this.deps.hooks;
    return {
      ...(s.sink.batchSize !== undefined && { batch: s.sink.batchSize }),
      onDropped: (sink, count, reason) => {
        hooks?.dropped(sink, count, reason);
        this.deps.log.warn({ sink, count, reason }, 'events dropped for a sink');
      },
    };
  }

  /**
   * One round: every sink's backlog is bounded, and every sink not waiting to retry is given what is new. Each
   * sink's work runs alone (never two at once for one sink, so its cursor only moves forward); resolves when
   * each sink's work of the round is done (or has failed).
   */
  async deliver(): Promise<void> {
    await Promise.all(this.states.map((s) => this.pass(s)));
  }

  private pass(s: SinkState): Promise<void> {
    if (this.closed) return Promise.resolve();
    // A sink waiting to retry still has its backlog bounded, so a sink that stays down keeps only its newest.
    s.running ??= (this.time.now() < s.retryAt ? this.bound(s) : this.attempt(s)).finally(
      () => (s.running = undefined),
    );
    return s.running;
  }

  private async bound(s: SinkState): Promise<void> {
    await boundBacklog(this.deps.ctx, s.sink, s.cfg.backlog, this.options(s)).catch((err: unknown) =>
      this.deps.log.warn({ err, sink: s.cfg.name }, 'the backlog of a sink could not be bounded (the store failed)'),
    );
  }

  private async attempt(s: SinkState): Promise<void> {
    const { ctx, log, hooks } = this.deps;
    const name = s.cfg.name;
    // The sink's own failures are told apart from the store's, and the batch they failed on named.
    const inner = s.sink;
    const wrapped: EventSink = {
      name,
      accepts: (ns, type) => inner.accepts(ns, type),
      write: async (events) => {
        try {
          await inner.write(events);
        } catch (e) {
          throw new SinkWriteError(e, events[0] ?? '');
        }
        hooks?.delivered(name, events.length);
      },
    };
    try {
      await deliverEvents(ctx, wrapped, { ...this.options(s), backlog: s.cfg.backlog });
      if (s.failing) log.info({ sink: name, attempts: s.failing.attempts }, 'events delivered to a sink again');
      s.failing = undefined;
      s.retryAt = 0;
    } catch (err) {
      if (!(err instanceof SinkWriteError)) {
        log.warn({ err, sink: name }, 'events not delivered to a sink (the store failed); retrying at the next round');
        return;
      }
      await this.failed(s, err);
    }
  }

  private async failed(s: SinkState, err: SinkWriteError): Promise<void> {
    const { ctx, log, hooks } = this.deps;
    const name = s.cfg.name;
    const now = this.time.now();
    const f = s.failing?.key === err.batchKey ? s.failing : { key: err.batchKey, attempts: 0, since: now };
    f.attempts++;
    s.failing = f;
    const { maxAttempts, maxAgeMs } = s.retry;
    if ((maxAttempts > 0 && f.attempts >= maxAttempts) || (maxAgeMs > 0 && now - f.since >= maxAgeMs)) {
      log.error({ sink: name, attempts: f.attempts, error: err.message }, 'a batch of events given up for a sink');
      try {
        await skipBatch(ctx, s.sink, s.sink.batchSize ?? 500, this.options(s));
        hooks?.deadLettered(name);
        s.failing = undefined;
        s.retryAt = 0;
        this.schedule(s, 0);
      } catch (e) {
        log.warn({ err: e, sink: name }, 'a batch could not be given up (the store failed); retrying');
        this.schedule(s, s.retry.initialBackoffMs);
      }
      return;
    }
    const delay = backoffMs(s.retry, f.attempts, this.deps.random);
    if (f.attempts === 1 || f.attempts % 10 === 0)
      log.warn(
        { sink: name, attempts: f.attempts, retryInMs: delay, error: err.message },
        'events not delivered to a sink; retrying',
      );
    this.schedule(s, delay);
  }

  /** Tries the sink again in `delayMs` (if this controller still delivers then). */
  private schedule(s: SinkState, delayMs: number): void {
    s.retryAt = this.time.now() + delayMs;
    s.cancelRetry?.();
    if (this.closed) return;
    s.cancelRetry = this.time.after(delayMs, () => {
      s.cancelRetry = undefined;
      s.retryAt = 0;
      this.track(this.deps.lead().then((lead) => (lead ? this.pass(s) : undefined)));
    });
  }

  /** Prunes the outbox (retention, maxEvents), telling the sinks of what they lose; answers how many went. */
  prune(): Promise<number> {
    return pruneEvents(this.deps.ctx, {
      retentionMs: this.cfg.retentionMs,
      maxEvents: this.cfg.maxEvents,
      sinks: this.states.map((s) => s.sink),
      onDropped: (sink, count, reason) => {
        this.deps.hooks?.dropped(sink, count, reason);
        this.deps.log.warn({ sink, count, reason }, 'undelivered events pruned from the outbox');
      },
    });
  }

  /** How far behind each sink is (read from the store: right on every controller). */
  lag(): Promise<{ sink: string; events: number; seconds: number }[]> {
    return sinkLag(this.deps.ctx, this.sinkNames);
  }

  /** Delivers every `everyMs` while this controller leads. */
  start(everyMs: number): void {
    if (this.states.length === 0 || this.stopTicker) return;
    this.stopTicker = this.time.every(everyMs, () => {
      if (this.ticking || this.closed) return;
      this.ticking = true;
      // Not waiting for the round: a sink still busy with the last one is left to it, the others go on.
      this.track(
        this.deps
          .lead()
          .then((lead) => {
            if (lead) this.track(this.deliver());
          })
          .catch((err: unknown) => this.deps.log.warn({ err }, 'event delivery round failed'))
          .finally(() => (this.ticking = false)),
      );
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopTicker?.();
    for (const s of this.states) s.cancelRetry?.();
    await Promise.all(this.states.map((s) => s.running?.catch(() => {})));
    for (const s of this.states) s.sink.close?.();
  }
}
