/**
 * Building blocks of the limiters (auth-limiter.ts, issuance-limiter.ts): token buckets by key, a concurrency
 * gate with a bounded queue, the 429 they answer and the reading of their config sections. Pure: no HTTP, no
 * database, the clock is injected.
 */
import { DomainError } from '../model/errors.js';

export interface BucketConfig {
  /** Tokens a key starts with, and the most it can save up. */
  burst: number;
  /** Tokens given back per minute. */
  perMinute: number;
}

export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * One token bucket per key (a source address, a username). At most `maxKeys` keys are remembered, least
 * recently used first out, so a flood of distinct keys cannot grow memory; a forgotten key starts full again.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    readonly config: BucketConfig,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 10_000,
  ) {
    this.perMs = config.perMinute / 60_000;
  }

  private current(key: string): Bucket {
    const t = this.now();
    const b = this.buckets.get(key);
    const tokens = b ? Math.min(this.config.burst, b.tokens + (t - b.at) * this.perMs) : this.config.burst;
    const fresh = { tokens, at: t };
    this.buckets.delete(key);
    this.buckets.set(key, fresh);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    return fresh;
  }

  /** Takes one token, or says how many seconds until one is available. */
  take(key: string): Take {
    const b = this.current(key);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    const waitMs = this.perMs > 0 ? (1 - b.tokens) / this.perMs : 3_600_000;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /** Gives back a token taken for an attempt that turned out not to count. */
  refund(key: string): void {
    const b = this.current(key);
    b.tokens = Math.min(this.config.burst, b.tokens + 1);
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** Thrown by {@link ConcurrencyGate.run} when every slot is busy and the queue is full. */
export class GateFull extends Error {
  constructor() {
    super('concurrency gate full');
  }
}

/** Runs at most `maxConcurrent` tasks at once; up to `maxQueued` more wait in order; beyond that, GateFull. */
export class ConcurrencyGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxConcurrent: number,
    readonly maxQueued: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) {
      if (this.waiting.length >= this.maxQueued) throw new GateFull();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` only drops when nobody waits.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  get stats(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting.length };
  }
}

/** 429 RATE_LIMITED with `Retry-After` (seconds). */
export const rateLimited = (retryAfterSeconds: number) =>
  new DomainError('RATE_LIMITED', {
    causeMessage: 'you have hit a rate limit in the requested operation',
    retryAfterSeconds,
  });

/** A limiter's section of the config file: absent is `undefined`; anything but a mapping is refused. */
export function limitSection(path: string, raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${path} must be a mapping`);
  const r = raw as Record<string, unknown>;
  if (r.enabled !== undefined && typeof r.enabled !== 'boolean')
    throw new Error(`${path}.enabled must be true or false`);
  return r;
}

/** A whole number of at least `min` at `path`, or `fallback` when absent. */
export function limitInt(path: string, v: unknown, fallback: number, min: number): number {
  if (v === undefined || v === null) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${path} must be an integer of at least ${min}`);
  return n;
}

/** A `{burst, perMinute}` mapping at `path`; absent members keep `d`'s. */
export function limitBucket(path: string, raw: unknown, d: BucketConfig): BucketConfig {
  if (raw === undefined || raw === null) return d;
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`${path} must be a mapping with burst and perMinute`);
  const m = raw as Record<string, unknown>;
  return {
    burst: limitInt(`${path}.burst`, m.burst, d.burst, 1),
    perMinute: limitInt(`${path}.perMinute`, m.perMinute, d.perMinute, 0),
  };
}

/** The members a limiter's config section may hold, as dotted paths, derived from its defaults. */
export const limitKeys = (defaults: object): string[] =>
  Object.entries(defaults).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null ? Object.keys(v).map((m) => `${k}.${m}`) : [k],
  );
