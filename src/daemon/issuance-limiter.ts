/**
 * Rate limit on certificates signed for a logged-in caller (config
 * `edge.api.rateLimit.certificates`): `POST /current-api-session/certificates` and
 * `POST /current-identity/authenticators/{id}/extend`. Each request takes a token of its API session's bucket
 * and of its identity's, before its CSR is read, issued or refused: signing costs a few milliseconds of the
 * event loop, and a loop of it (or one of parses of refused CSRs) would take the controller from everyone. The
 * identity's bucket keeps a client from escaping its session's budget by logging in again.
 *
 * A refusal is 429 RATE_LIMITED with `Retry-After` (seconds). Buckets live in memory (a restart refills them),
 * at most 10,000 keys per bucket kind, the least recently used forgotten first.
 */
import { TokenBuckets, limitBucket, limitKeys, limitSection, rateLimited, type BucketConfig } from './rate-limit.js';

const PER_API_SESSION: BucketConfig = { burst: 10, perMinute: 3 };
const PER_IDENTITY: BucketConfig = { burst: 30, perMinute: 10 };

export const CERT_RATE_LIMIT_DEFAULTS = { enabled: true, perApiSession: PER_API_SESSION, perIdentity: PER_IDENTITY };
export type CertRateLimitConfig = typeof CERT_RATE_LIMIT_DEFAULTS;

/** The members `parseCertRateLimit` reads, as dotted paths (derived from the defaults). */
export const CERT_RATE_LIMIT_KEYS: readonly string[] = limitKeys(CERT_RATE_LIMIT_DEFAULTS);

/** Reads `edge.api.rateLimit.certificates` from the config file; absent members keep their defaults. */
export function parseCertRateLimit(raw: unknown, path = 'edge.api.rateLimit.certificates'): CertRateLimitConfig {
  const d = CERT_RATE_LIMIT_DEFAULTS;
  const r = limitSection(path, raw);
  if (r === undefined) return d;
  return {
    enabled: (r.enabled as boolean | undefined) ?? d.enabled,
    perApiSession: limitBucket(`${path}.perApiSession`, r.perApiSession, d.perApiSession),
    perIdentity: limitBucket(`${path}.perIdentity`, r.perIdentity, d.perIdentity),
  };
}

export class IssuanceLimiter {
  private readonly perApiSession: TokenBuckets;
  private readonly perIdentity: TokenBuckets;

  constructor(
    readonly config: CertRateLimitConfig,
    now: () => number = Date.now,
  ) {
    this.perApiSession = new TokenBuckets(config.perApiSession, now);
    this.perIdentity = new TokenBuckets(config.perIdentity, now);
  }

  /** Takes one signing of the caller's budgets, or throws 429 RATE_LIMITED (taking nothing). */
  take(apiSessionId: string, identityId: string): void {
    if (!this.config.enabled) return;
    const bySession = this.perApiSession.take(apiSessionId);
    if (!bySession.ok) throw rateLimited(bySession.retryAfterSeconds);
    const byIdentity = this.perIdentity.take(identityId);
    if (!byIdentity.ok) {
      this.perApiSession.refund(apiSessionId);
      throw rateLimited(byIdentity.retryAfterSeconds);
    }
  }
}
