/**
 * In-memory state of external-JWT verification, one per controller (held by the Ctx): the keys fetched from
 * each signer's JWKS endpoint, and the tokens verified recently (docs/decisions.md, "External JWT signers").
 *
 * - JWKS: cached per signer. A known `kid` is answered at once, even while the set is refetched (older than
 *   `maxAgeMs`) behind it. An unknown `kid` refetches, at most once per `refetchIntervalMs` per signer, and
 *   concurrent requests share the one fetch; a failed refetch keeps the keys already known. A fetch is bounded
 *   in time and size: a slow, huge or broken endpoint only ever means "key not found".
 * - Negative cache: after a failed fetch a signer is not fetched again for `failedRetryMs`, and requests for a
 *   key it does not have are refused at once, also while its next attempt is under way (only the request that
 *   started it waits), so an identity provider that hangs costs one waiting request per `failedRetryMs`.
 * - Verified tokens: keyed by the SHA-256 of the token, kept until the token's `exp` or `verifiedTtlMs`,
 *   whichever is first, at most `maxVerified` entries (oldest dropped first). Any signer write clears them. An
 *   identity found by its `externalId` holds only while no identity was written since (`gen`, the store's
 *   principal generation), so moving an `externalId` takes effect on the next request.
 */
import { createHash } from 'node:crypto';
import type { JWK } from 'jose';

export interface ExtJwtOptions {
  fetchTimeoutMs: number;
  maxJwksBytes: number;
  refetchIntervalMs: number;
  failedRetryMs: number;
  maxAgeMs: number;
  verifiedTtlMs: number;
  maxVerified: number;
}

export const EXT_JWT_DEFAULTS: ExtJwtOptions = {
  fetchTimeoutMs: 3000,
  maxJwksBytes: 256 * 1024,
  refetchIntervalMs: 1000,
  failedRetryMs: 10_000,
  maxAgeMs: 5 * 60_000,
  verifiedTtlMs: 60_000,
  maxVerified: 10_000,
};

/** What a verified token proved: this signer vouches for this identity until `untilMs`. */
export interface VerifiedToken {
  signerId: string;
  identityId: string;
  untilMs: number;
}

interface RememberedToken extends VerifiedToken {
  /** The principal generation the identity was found at by its `externalId` (undefined: found by its id). */
  gen?: number;
}

interface JwksEntry {
  endpoint: string;
  keys: Map<string, JWK>;
  fetchedAt: number;
  lastAttempt: number;
  /** When the last fetch failed; cleared by a successful one. */
  failedAt?: number;
  inflight?: Promise<void>;
}

export class ExtJwtState {
  readonly opts: ExtJwtOptions;
  private readonly jwks = new Map<string, JwksEntry>();
  private readonly verified = new Map<string, RememberedToken>();

  constructor(
    opts: Partial<ExtJwtOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.opts = { ...EXT_JWT_DEFAULTS, ...opts };
  }

  /** Drops what is known about a signer (and every verified token: any of them may have relied on it). */
  forgetSigner(signerId: string): void {
    this.jwks.delete(signerId);
    this.verified.clear();
  }

  static tokenKey(token: string): string {
    return createHash('sha256').update(token).digest('hex');
  }

  /** What `token` proved, while it is unexpired and (found by `externalId`) no identity was written since. */
  recall(token: string, nowMs: number, gen: number): VerifiedToken | undefined {
    const key = ExtJwtState.tokenKey(token);
    const hit = this.verified.get(key);
    if (!hit) return undefined;
    if (hit.untilMs > nowMs && (hit.gen === undefined || hit.gen === gen)) return hit;
    this.verified.delete(key);
    return undefined;
  }

  /** `gen`: the principal generation read before the identity was looked up by `externalId`, else undefined. */
  remember(token: string, v: Omit<VerifiedToken, 'untilMs'>, expMs: number, nowMs: number, gen?: number): void {
    const untilMs = Math.min(expMs, nowMs + this.opts.verifiedTtlMs);
    if (untilMs <= nowMs) return;
    while (this.verified.size >= this.opts.maxVerified) {
      const oldest = this.verified.keys().next().value;
      if (oldest === undefined) break;
      this.verified.delete(oldest);
    }
    this.verified.set(ExtJwtState.tokenKey(token), { ...v, untilMs, ...(gen !== undefined && { gen }) });
  }

  /**
   * The JWK published under `kid` by the signer's endpoint: a known one at once (a stale set is refetched
   * behind it), an unknown one after a fetch (rate limited, shared), undefined when the signer is failing.
   */
  async jwk(signerId: string, endpoint: string, kid: string): Promise<JWK | undefined> {
    let entry = this.jwks.get(signerId);
    if (!entry || entry.endpoint !== endpoint) {
      entry = { endpoint, keys: new Map(), fetchedAt: 0, lastAttempt: -Infinity };
      this.jwks.set(signerId, entry);
    }
    const now = this.now();
    const known = entry.keys.get(kid);
    if (known) {
      if (now - entry.fetchedAt >= this.opts.maxAgeMs && this.mayFetch(entry, now)) void this.refresh(entry);
      return known;
    }
    if (entry.inflight) {
      // A failing signer's retry is waited on only by the request that started it.
      if (entry.failedAt !== undefined) return undefined;
      await entry.inflight;
    } else if (this.mayFetch(entry, now)) await this.refresh(entry);
    return entry.keys.get(kid);
  }

  private mayFetch(entry: JwksEntry, now: number): boolean {
    if (entry.inflight) return false;
    if (entry.failedAt !== undefined && now - entry.failedAt < this.opts.failedRetryMs) return false;
    return now - entry.lastAttempt >= this.opts.refetchIntervalMs;
  }

  private refresh(entry: JwksEntry): Promise<void> {
    entry.lastAttempt = this.now();
    entry.inflight = fetchJwks(entry.endpoint, this.opts)
      .then((keys) => {
        entry.keys = keys;
        entry.fetchedAt = this.now();
        entry.failedAt = undefined;
      })
      .catch(() => {
        // Unreachable, too slow, too big or not a JWKS: the keys known so far stay in use.
        entry.failedAt = this.now();
      })
      .finally(() => {
        entry.inflight = undefined;
      });
    return entry.inflight;
  }
}

/** Reads at most `max` bytes of a response body; more aborts. */
async function boundedText(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > max) {
    await res.body?.cancel();
    throw new Error('JWKS too large');
  }
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new Error('JWKS too large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Fetches a JWKS document: the signing keys that have a `kid`, by `kid`. */
export async function fetchJwks(endpoint: string, opts: ExtJwtOptions): Promise<Map<string, JWK>> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), opts.fetchTimeoutMs);
  try {
    const res = await fetch(endpoint, {
      signal: abort.signal,
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`JWKS endpoint answered ${res.status}`);
    }
    const doc = JSON.parse(await boundedText(res, opts.maxJwksBytes)) as { keys?: unknown };
    const keys = new Map<string, JWK>();
    if (!Array.isArray(doc.keys)) throw new Error('not a JWKS document');
    for (const k of doc.keys as JWK[]) {
      if (!k || typeof k !== 'object' || typeof k.kid !== 'string') continue;
      if (k.use !== undefined && k.use !== 'sig') continue;
      keys.set(k.kid, k);
    }
    return keys;
  } finally {
    clearTimeout(timer);
  }
}
