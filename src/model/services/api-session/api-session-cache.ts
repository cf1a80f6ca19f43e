/**
 * What an API-session token resolves to, kept in memory between requests so that an authenticated request
 * does not hash its token and query the store (issue 12's per-request cost).
 *
 * Validity rests on the store's change feed (store/change-feed.ts): the cache empties when a write reaches API
 * sessions, identities or auth policies, whichever code path made it (a logout, the sweeper, an identity
 * disabled, deleted or demoted, an MFA completed, an auth policy changed, a cascade from any of them), except
 * an insert that only adds identities or API sessions, which no kept answer reads (a login, provisioning). The
 * activity touch sets a split column and does not reach it: the cache keeps the last recorded activity and the
 * request still judges expiry against it and writes it at its granularity.
 */
import type { Executor } from '../../../store/db.js';
import type { ChangeFeed, Deps } from '../../../store/change-feed.js';
import { defineCache, feedOf, storeCache } from '../../../store/runtime.js';
import { WeighedMap } from '../../../store/weighed-map.js';
import type { SessionIdentity } from './session-identity.js';

export interface CachedPrincipal {
  sessionId: string;
  /** Last recorded activity (ms since the epoch), as stored. */
  lastActivityMs: number;
  authQueries: unknown[];
  identity: SessionIdentity;
  disabledAt: string | null;
  disabledUntil: string | null;
  /** The identity's auth policy's `secondary.requireExtJwtSigner` (null: none). */
  extJwtSigner: string | null;
}

/** Bounded: beyond this many tokens the oldest entry goes (a miss only costs the store lookup). */
export const MAX_CACHED_PRINCIPALS = 20_000;

/** The tables a token's answer is read from. */
export const PRINCIPAL_TABLES: readonly string[] = ['api_sessions', 'identities', 'auth_policies'];

/**
 * Of those, the tables whose new rows cannot change an answer kept: a new API session has a token of its own
 * (and a token not found is not kept), a new identity has no session yet. A new auth policy still counts (an
 * identity's policy id that named none falls back to the default's until it exists).
 */
const ADDS_IGNORED: readonly string[] = ['api_sessions', 'identities'];

class PrincipalCache {
  readonly byToken = new WeighedMap<CachedPrincipal>(MAX_CACHED_PRINCIPALS);
  readonly deps: Deps;
  private version: number;

  constructor(readonly feed: ChangeFeed) {
    this.deps = feed.deps(PRINCIPAL_TABLES, ADDS_IGNORED);
    this.version = feed.version(this.deps);
  }

  /** The entries, emptied first when a principal table was written since they were kept. */
  current(): WeighedMap<CachedPrincipal> {
    const v = this.feed.version(this.deps);
    if (v !== this.version) {
      this.byToken.clear();
      this.version = v;
    }
    return this.byToken;
  }
}

export const PRINCIPALS = defineCache('principals', (feed) => new PrincipalCache(feed));

export function cachedPrincipal(db: Executor, token: string): CachedPrincipal | undefined {
  return storeCache(db, PRINCIPALS)?.current().get(token);
}

/**
 * The version of what a token resolves to (read it BEFORE the store lookup, pass it to
 * {@link rememberPrincipal}); NaN where nothing is cached, which matches nothing.
 */
export function principalGeneration(db: Executor): number {
  const feed = feedOf(db);
  return feed ? feed.version(storeCache(db, PRINCIPALS)!.deps) : NaN;
}

/** Keeps a lookup's result, unless a principal write happened since `genBefore` (it may predate the write). */
export function rememberPrincipal(db: Executor, token: string, genBefore: number, p: CachedPrincipal): void {
  const c = storeCache(db, PRINCIPALS);
  if (!c || genBefore !== c.feed.version(c.deps)) return;
  c.current().set(token, p);
}

export function forgetPrincipal(db: Executor, token: string): void {
  storeCache(db, PRINCIPALS)?.byToken.delete(token);
}
