/**
 * Clients' posture as the model reads and writes it: stored (store/posture-state.ts), and cached per open
 * store (its runtime) for the reads of every posture evaluation and `service-updates` poll. The cache's entries
 * are validated by the store's change feed: any write to the posture tables (this process's, a cascade from an
 * API session or identity ending, or another replica's, which reaches the feed before each request) makes the
 * next read of an entry go to the store again. Writes go straight to the store, in the request that makes them.
 * Reads in a transaction go to the store (a transaction sees no cache).
 */
import type { ChangeFeed, Deps } from '../../store/change-feed.js';
import { withTx, type Executor } from '../../store/db.js';
import { FeedCache } from '../../store/feed-cache.js';
import {
  addFailedRequest,
  clearMfaPasses,
  holdPostureOwner,
  identityPostureRow,
  sessionPostureRow,
  setPostureChangedAt,
  setSessionMfaPassed,
} from '../../store/posture-state.js';
import { defineCache, storeCache } from '../../store/runtime.js';
import {
  identityFromStore,
  MAX_FAILED_REQUESTS,
  sessionFromStore,
  type ApiSessionPosture,
  type IdentityPosture,
} from './state.js';

/** Bounds: identities' entries by count and by the stored text of their records; API sessions' by count. */
const MAX_IDENTITIES = 20_000;
const MAX_IDENTITY_BYTES = 32 * 1024 * 1024;
const MAX_SESSIONS = 20_000;
/** What an entry costs beyond its records' text (an estimate of its objects). */
const ENTRY_BYTES = 256;

export class PostureCache {
  /** Per identity: its reported posture and `changedAt`; null when it has none stored. */
  readonly identities: FeedCache<{ posture: IdentityPosture; bytes: number } | null>;
  /** Per API session: its posture; null when it has none stored. */
  readonly sessions: FeedCache<ApiSessionPosture | null>;

  readonly identityDeps: Deps;
  readonly sessionDeps: Deps;

  constructor(feed: ChangeFeed) {
    this.identities = new FeedCache(feed, { maxEntries: MAX_IDENTITIES, maxWeight: MAX_IDENTITY_BYTES });
    this.sessions = new FeedCache(feed, { maxEntries: MAX_SESSIONS });
    this.identityDeps = feed.deps(['posture_identities']);
    this.sessionDeps = feed.deps(['posture_api_sessions']);
  }
}

const POSTURE = defineCache('posture', (feed) => new PostureCache(feed));

/** The posture cache of the store `db` belongs to; undefined in a transaction or without a runtime. */
export const postureCacheOf = (db: Executor): PostureCache | undefined => storeCache(db, POSTURE);

async function readIdentity(db: Executor, identityId: string) {
  const row = await identityPostureRow(db, identityId);
  return row ? { posture: identityFromStore(row), bytes: row.bytes } : null;
}

/** What the identity's clients reported, and when that last changed what it may use. Shared: do not mutate. */
export async function identityPosture(db: Executor, identityId: string): Promise<IdentityPosture | undefined> {
  const cache = postureCacheOf(db);
  const entry = cache
    ? await cache.identities.read(
        identityId,
        cache.identityDeps,
        () => readIdentity(db, identityId),
        (v) => ENTRY_BYTES + (v?.bytes ?? 0),
      )
    : await readIdentity(db, identityId);
  return entry?.posture;
}

async function readSession(db: Executor, apiSessionId: string): Promise<ApiSessionPosture | null> {
  const row = await sessionPostureRow(db, apiSessionId);
  return row ? sessionFromStore(row) : null;
}

/** The API session's posture (MFA pass, wake/unlock). Shared: do not mutate. */
export async function sessionPosture(db: Executor, apiSessionId: string): Promise<ApiSessionPosture | undefined> {
  const cache = postureCacheOf(db);
  const s = cache
    ? await cache.sessions.read(apiSessionId, cache.sessionDeps, () => readSession(db, apiSessionId))
    : await readSession(db, apiSessionId);
  return s ?? undefined;
}

/** When the identity's posture last changed what it may use (ISO; '' when never). */
export async function postureChangedAt(db: Executor, identityId: string): Promise<string> {
  return (await identityPosture(db, identityId))?.changedAt?.toISOString() ?? '';
}

/**
 * An MFA event: this API session passed MFA at `at` (which moves the identity's `service-updates`). In the
 * caller's transaction, the one that records the factor; the session must exist.
 */
export async function recordMfaPassed(db: Executor, apiSessionId: string, identityId: string, at: Date): Promise<void> {
  await withTx(db, async (trx) => {
    await setSessionMfaPassed(trx, apiSessionId, identityId, at.toISOString());
    await setPostureChangedAt(trx, identityId, at.toISOString());
  });
}

/** An MFA event: the identity's MFA was removed, so none of its API sessions passes it (from `at`). */
export const clearMfaPassed = (db: Executor, identityId: string, at: Date): Promise<void> =>
  withTx(db, (trx) => clearMfaPasses(trx, identityId, at.toISOString()));

/** Records a failed service request of the identity; the newest {@link MAX_FAILED_REQUESTS} are kept (§9.3). */
export const recordFailedRequest = (db: Executor, identityId: string, request: Record<string, unknown>) =>
  withTx(db, async (trx) => {
    // An identity deleted meanwhile keeps nothing.
    if (await holdPostureOwner(trx, 'identities', identityId))
      await addFailedRequest(trx, identityId, request, MAX_FAILED_REQUESTS);
  });
