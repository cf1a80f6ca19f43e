/**
 * Building blocks of the authentication limiter (auth-limiter.ts): token buckets by key and a concurrency gate
 * with a bounded queue. Pure: no HTTP, no database, the clock is injected.
 */

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
