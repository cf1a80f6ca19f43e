/**
 * Write generations: in-process counters bumped by the store's connection (db.ts) as each statement runs, so
 * the model can cache what it derived from the store and know, without a query, when that may be stale.
 * The counting happens where every statement passes, so no write path has to remember to invalidate.
 *
 * - `anyWriteGen` moves with every statement that may write (and every commit or rollback).
 * - `markerGen` moves as `anyWriteGen` does, except for the statements registered as leaving the access
 *   markers alone (`markerNeutral`: a new session's insert, the activity touch; no marker trigger fires on
 *   them), so the access engine does not read the markers again after each of the hot path's own writes.
 * - `principalGen` moves with every write that may change what an API-session token resolves to: a write
 *   naming `api_sessions`, `identities` or `auth_policies` (deletes of identities reach API sessions by
 *   their foreign-key cascade, within the same statement), any DDL, and the end of a transaction that had
 *   such a write. The one write it ignores is the activity touch of {@link TOUCH_API_SESSION_SQL}, which the
 *   API-session cache applies to itself.
 *
 * The daemon is the store's only writer while it runs (store/lock.ts), so nothing changes the file behind
 * these counters. They are process-wide, not per connection: another store in the same process (tests) only
 * makes them move more often, never less.
 */

/** The activity touch of an API session; the only principal-table write that leaves `principalGen` alone. */
export const TOUCH_API_SESSION_SQL = 'update "api_sessions" set "lastActivityAt" = ? where "id" = ?';

const PRINCIPAL_TABLES = /\b(api_sessions|identities|auth_policies)\b/i;
const READ = /^\s*(select|with)\b/i;
const RETURNING = /\breturning\b/i;
const TX_START = /^\s*begin\b/i;
const SAVEPOINT = /^\s*savepoint\b/i;
const TX_END = /^\s*(commit|end|rollback)\b/i;
/** Releasing a savepoint changes nothing; rolling back to one undoes writes but leaves the transaction open. */
const RELEASE = /^\s*release\b/i;
const UNDO = /^\s*rollback\s+to\b/i;
const DML = /^\s*(with|insert|update|delete|replace)\b/i;

const Kind = {
  Read: 0,
  TxStart: 1,
  TxEnd: 2,
  Write: 3,
  PrincipalWrite: 4,
  NeutralWrite: 5,
  Touch: 6,
  Undo: 7,
} as const;
type Kind = (typeof Kind)[keyof typeof Kind];

const kinds = new Map<string, Kind>();
/** Statement texts that fire no access-marker trigger and touch no principal table's cached fields. */
const neutral = new Set<string>();
let anyWrite = 0;
let marker = 0;
let principal = 0;
/** Activity touches among the `anyWrite` moves (list counts that do not read `api_sessions` ignore them). */
let touches = 0;
/** A principal write ran since the last transaction start: its commit or rollback moves the counter again. */
let principalDirty = false;

function classify(sql: string, reader: boolean): Kind {
  if (reader && READ.test(sql) && !RETURNING.test(sql)) return Kind.Read;
  // Registered texts first: a grouped-write batch's own begin and commit (direct.ts) are neutral too.
  if (neutral.has(sql)) return Kind.NeutralWrite;
  if (TX_START.test(sql)) return Kind.TxStart;
  if (SAVEPOINT.test(sql) || RELEASE.test(sql)) return Kind.Read;
  if (UNDO.test(sql)) return Kind.Undo;
  if (TX_END.test(sql)) return Kind.TxEnd;
  if (sql === TOUCH_API_SESSION_SQL) return Kind.Touch;
  // DDL, pragmas and anything else unusual count as principal writes: rare, and never wrong to count.
  if (!DML.test(sql) || PRINCIPAL_TABLES.test(sql)) return Kind.PrincipalWrite;
  return Kind.Write;
}

/** Called by the store's connection right before a statement runs (db.ts). */
export function noteStatement(sql: string, reader: boolean): void {
  let kind = kinds.get(sql);
  if (kind === undefined) {
    kind = classify(sql, reader);
    if (kinds.size >= 5000) kinds.clear();
    kinds.set(sql, kind);
  }
  switch (kind) {
    case Kind.Read:
      return;
    case Kind.TxStart:
      principalDirty = false;
      return;
    case Kind.TxEnd:
      anyWrite++;
      marker++;
      if (principalDirty) principal++;
      principalDirty = false;
      return;
    case Kind.NeutralWrite:
      anyWrite++;
      return;
    case Kind.Undo:
      // The undone writes may have been anything, and the transaction's earlier writes still await its end.
      anyWrite++;
      marker++;
      principal++;
      return;
    case Kind.Write:
      anyWrite++;
      marker++;
      return;
    case Kind.Touch:
      anyWrite++;
      touches++;
      return;
    case Kind.PrincipalWrite:
      anyWrite++;
      marker++;
      principal++;
      principalDirty = true;
      return;
  }
}

/** A batch of statements run without preparing (`exec`): counted as a principal write. */
export function noteUnknownWrite(): void {
  anyWrite++;
  marker++;
  principal++;
  principalDirty = true;
}

export const anyWriteGen = (): number => anyWrite;
export const markerGen = (): number => marker;

/**
 * Registers a statement text that moves no access marker (no marker trigger fires on it, migration 0005) and
 * changes nothing an API-session token resolves to. Registered once by the store module that owns the text.
 */
export function markerNeutral(sql: string): void {
  neutral.add(sql);
  kinds.delete(sql);
}
export const isMarkerNeutral = (sql: string): boolean => neutral.has(sql);
export const principalGen = (): number => principal;
/**
 * The generation of list counts (count-cache.ts): `anyWriteGen` without the activity touches, which change only
 * `api_sessions.lastActivityAt`, unless the count reads `api_sessions`.
 */
export const listCountGen = (readsApiSessions: boolean): number => (readsApiSessions ? anyWrite : anyWrite - touches);
