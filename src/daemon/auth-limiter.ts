/**
 * Rate limits on authentication (`POST /authenticate`, every method, both APIs) and on self-service password
 * changes, so a flood neither burns the CPU on Argon2id nor keeps other users out (decisions.md,
 * "Authentication"; config `edge.api.rateLimit.auth`).
 *
 * - every attempt from one source address takes a token of `perSource` (generous: logins are not refused for
 *   being frequent, only for being a flood);
 * - failed attempts take a token of `failuresPerSource` and of `failuresPerAccount` (the username, or the
 *   identity for a self-service change). The token is taken before the attempt runs, so a concurrent burst
 *   cannot overdraw it, and given back when the attempt succeeds: successes stay cheap;
 * - at most `maxConcurrent` attempts run at once, `maxQueued` more wait; a full queue is refused at once. What
 *   waits on something other than this controller (an identity provider's JWKS) runs before, outside that gate,
 *   so no identity provider's state can hold the slots other users' passwords need.
 *
 * A refusal is 429 RATE_LIMITED with `Retry-After` (seconds), answered before any Argon2 or database work.
 */
import { DomainError } from '../model/errors.js';
import {
  ConcurrencyGate,
  GateFull,
  TokenBuckets,
  limitBucket,
  limitInt,
  limitKeys,
  limitSection,
  rateLimited,
  type BucketConfig,
  type Take,
} from './rate-limit.js';

export interface AuthRateLimitConfig {
  enabled: boolean;
  perSource: BucketConfig;
  failuresPerSource: BucketConfig;
  failuresPerAccount: BucketConfig;
  maxConcurrent: number;
  maxQueued: number;
}

export const AUTH_RATE_LIMIT_DEFAULTS: AuthRateLimitConfig = {
  enabled: true,
  perSource: { burst: 100, perMinute: 600 },
  failuresPerSource: { burst: 30, perMinute: 30 },
  failuresPerAccount: { burst: 10, perMinute: 6 },
  maxConcurrent: 4,
  maxQueued: 100,
};

const BUCKETS = ['perSource', 'failuresPerSource', 'failuresPerAccount'] as const;

/** The members `parseAuthRateLimit` reads, as dotted paths: derived from the defaults, so the two cannot drift. */
export const AUTH_RATE_LIMIT_KEYS: readonly string[] = limitKeys(AUTH_RATE_LIMIT_DEFAULTS);

/** Reads `edge.api.rateLimit.auth` from the config file; absent members keep their defaults. */
export function parseAuthRateLimit(raw: unknown, path = 'edge.api.rateLimit.auth'): AuthRateLimitConfig {
  const d = AUTH_RATE_LIMIT_DEFAULTS;
  const r = limitSection(path, raw);
  if (r === undefined) return d;
  const out: AuthRateLimitConfig = {
    ...d,
    enabled: (r.enabled as boolean | undefined) ?? d.enabled,
    maxConcurrent: limitInt(`${path}.maxConcurrent`, r.maxConcurrent, d.maxConcurrent, 1),
    maxQueued: limitInt(`${path}.maxQueued`, r.maxQueued, d.maxQueued, 0),
  };
  for (const name of BUCKETS) out[name] = limitBucket(`${path}.${name}`, r[name], d[name]);
  return out;
}

/** The credential failures that spend the failure budgets; anything else (bad request, success) gives it back. */
const isCredentialFailure = (e: unknown) =>
  e instanceof DomainError &&
  (e.code === 'INVALID_AUTH' || e.code === 'UNAUTHORIZED' || e.code === 'MFA_INVALID_TOKEN');

export class AuthLimiter {
  private readonly perSource: TokenBuckets;
  private readonly failuresPerSource: TokenBuckets;
  private readonly failuresPerAccount: TokenBuckets;
  private readonly gate: ConcurrencyGate;

  constructor(
    readonly config: AuthRateLimitConfig,
    now: () => number = Date.now,
  ) {
    this.perSource = new TokenBuckets(config.perSource, now);
    this.failuresPerSource = new TokenBuckets(config.failuresPerSource, now);
    this.failuresPerAccount = new TokenBuckets(config.failuresPerAccount, now);
    this.gate = new ConcurrencyGate(config.maxConcurrent, config.maxQueued);
  }

  /**
   * Runs one authentication attempt from `source` on `account` (a username; undefined for certificates) under
   * the limits, or throws 429 RATE_LIMITED without running it. `outside`, when given, runs first under the
   * buckets (its failures count like `run`'s) but holds no slot of the concurrency gate; `run` gets its result.
   */
  async attempt<T, P = void>(
    source: string,
    account: string | undefined,
    run: (prepared: P) => Promise<T>,
    outside?: () => Promise<P>,
  ): Promise<T> {
    const both = async () => {
      const prepared = (outside ? await outside() : undefined) as P;
      return this.config.enabled ? this.gate.run(() => run(prepared)) : run(prepared);
    };
    if (!this.config.enabled) return both();
    const refusal = (t: Take) => (t.ok ? undefined : rateLimited(t.retryAfterSeconds));
    const any = this.perSource.take(source);
    if (!any.ok) throw refusal(any);
    const bySource = this.failuresPerSource.take(source);
    if (!bySource.ok) throw refusal(bySource);
    const byAccount = account === undefined ? ({ ok: true } as const) : this.failuresPerAccount.take(account);
    if (!byAccount.ok) {
      this.failuresPerSource.refund(source);
      throw refusal(byAccount);
    }
    const refundFailures = () => {
      this.failuresPerSource.refund(source);
      if (account !== undefined) this.failuresPerAccount.refund(account);
    };
    try {
      const result = await both();
      refundFailures();
      return result;
    } catch (e) {
      if (e instanceof GateFull) {
        refundFailures();
        throw rateLimited(1);
      }
      if (!isCredentialFailure(e)) refundFailures();
      throw e;
    }
  }
}
