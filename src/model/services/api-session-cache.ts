/**
 * What an API-session token resolves to, kept in memory between requests so that an authenticated request
 * does not hash its token and query the store (docs/policy-engine.md, "Per-request fixed cost").
 *
 * Validity rests on the store's principal generation (store/write-gen.ts), which moves with every write to
 * API sessions, identities or auth policies, counted where every statement runs: a logout, the sweeper, an
 * identity disabled, deleted or demoted, an MFA completed, an auth policy changed all empty the cache
 * before the next request, whichever code path made them. Activity stays as before: the cache keeps the
 * last recorded activity and the request still judges expiry against it and writes it at its granularity.
 */
import type { Executor } from '../../store/db.js';
import { principalGen } from '../../store/write-gen.js';
import type { SessionIdentity } from './api-session.js';
import { perStore } from '../per-store.js';

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

interface Cache {
  gen: number;
  byToken: Map<string, CachedPrincipal>;
}

/** One cache per store (its root executor); a transaction never reads or fills it. */
const caches = new WeakMap<object, Cache>();

function cacheOf(db: Executor): Cache | undefined {
  const c = perStore(caches, db, () => ({ gen: principalGen(), byToken: new Map() }));
  if (!c) return undefined;
  if (c.gen !== principalGen()) {
    c.byToken.clear();
    c.gen = principalGen();
  }
  return c;
}

export function cachedPrincipal(db: Executor, token: string): CachedPrincipal | undefined {
  return cacheOf(db)?.byToken.get(token);
}

/** The generation to pass to {@link rememberPrincipal}: read it BEFORE the store lookup. */
export const principalGeneration = (): number => principalGen();

/** Keeps a lookup's result, unless a principal write happened since `genBefore` (it may predate the write). */
export function rememberPrincipal(db: Executor, token: string, genBefore: number, p: CachedPrincipal): void {
  const c = cacheOf(db);
  if (!c || genBefore !== c.gen) return;
  if (c.byToken.size >= MAX_CACHED_PRINCIPALS) c.byToken.delete(c.byToken.keys().next().value as string);
  c.byToken.set(token, p);
}

export function forgetPrincipal(db: Executor, token: string): void {
  caches.get(db)?.byToken.delete(token);
}
