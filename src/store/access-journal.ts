/**
 * What moved the access markers, for invalidation as narrow as the change (docs/policy-engine.md, "What a
 * write invalidates"). The markers (access-markers.ts) say *that* a kind of access data changed; this journal
 * says *what* changed, for the transactions that described themselves.
 *
 * A transaction run by {@link withAccessTx} reads the markers at its start and, if the model noted changes in
 * it ({@link noteAccessChange}), again before it commits; after the commit it records, per marker kind that
 * moved, the transition `gen before → gen after` with the notes. A cache entry computed at generation `a`
 * of a kind is still explained at `b` when the transitions chain from `a` to `b`; any write that did not note
 * itself (another code path, an outer transaction, a rollback-free direct statement, the integrity repair)
 * moves a marker without a transition, the chain breaks, and every entry of that kind misses as before.
 * Notes are opaque here: the model gives them meaning (src/model/access/changes.ts).
 */
import type { Executor, Store } from './executor.js';
import { readMarkers, type MarkerName, type Markers } from './access-markers.js';
import type { ChangeFeed, Deps } from './change-feed.js';
import { defineCache, runTransaction, runtimeOf, storeState } from './runtime.js';
import { hotRows, hotWrite } from './direct.js';

/** A change described by the model, or {@link UNEXPLAINED}, which makes the whole transaction unexplained. */
export type AccessNote = object;
export const UNEXPLAINED: AccessNote = Object.freeze({ unexplained: true });

export interface Transition {
  to: number;
  notes: readonly AccessNote[];
}

/** At most this many transitions per kind are kept; an older generation is simply unexplained (a miss). */
const MAX_TRANSITIONS = 4096;

/** The generations one transaction moved each marker kind from and to. */
type Moves = Partial<Record<MarkerName, [from: number, to: number]>>;

class Journal {
  private readonly kinds = new Map<MarkerName, Map<number, Transition>>();
  /** The markers' table: its version moves with every statement that may write it (change-feed.ts). */
  private readonly markerDeps: Deps;
  /** The last markers read, by which transaction and at the markers' version then (see {@link Journal.markers}). */
  private lastRead: { version: number; trx: Executor; markers: Markers } | undefined;
  /** The notes of each open transaction run by withAccessTx (one at a time holds the connection). */
  readonly pending = new WeakMap<Executor, AccessNote[]>();
  /** Per batch transaction (PostgreSQL), its members' transitions, stored together before it commits. */
  readonly unstored = new WeakMap<Executor, { moves: Moves; notes: readonly AccessNote[] }[]>();
  /** The newest row of `access_transitions` this process has read (replicas on PostgreSQL). */
  storedUpTo: number | undefined;

  constructor(private readonly feed: ChangeFeed) {
    this.markerDeps = feed.deps(['access_markers']);
  }

  /**
   * The markers as the transaction `trx` sees them. The last read is answered again while the change feed says
   * no statement of this store has written the markers since (a trigger's, a rollback to a savepoint's and a
   * transaction's end move it too): in a group commit a member's first read is then the member before it's
   * last, one statement less per write. On SQLite (`shared` false) the store's one connection is the only
   * writer, so that holds across transactions. On PostgreSQL other replicas write too, unseen until their
   * changes are read, so only a read by the same transaction is answered again: the batch's transaction holds
   * the writer lock from its start to its commit, so no other replica's model write lands between its members.
   */
  async markers(trx: Executor, shared: boolean): Promise<Markers> {
    const version = this.feed.version(this.markerDeps);
    const last = this.lastRead;
    if (last?.version === version && (!shared || last.trx === trx)) return last.markers;
    const markers = await readMarkers(trx);
    this.lastRead = { version, trx, markers };
    return markers;
  }

  record(moves: Moves, notes: readonly AccessNote[]): void {
    for (const [name, [from, to]] of Object.entries(moves) as [MarkerName, [number, number]][]) {
      let chain = this.kinds.get(name);
      if (!chain) this.kinds.set(name, (chain = new Map()));
      chain.set(from, { to, notes });
      if (chain.size > MAX_TRANSITIONS) chain.delete(chain.keys().next().value as number);
    }
  }

  explain(name: MarkerName, from: number, to: number, out: Set<Transition>): boolean {
    const chain = this.kinds.get(name);
    let gen = from;
    while (gen < to) {
      const t = chain?.get(gen);
      if (!t) return false;
      out.add(t);
      gen = t.to;
    }
    return gen === to;
  }
}

/** One journal per store, kept by its runtime. */
const JOURNAL = defineCache('access-journal', (feed) => new Journal(feed));

/** The marker kinds a transaction moved, from the markers read at its start and before its commit. */
function movesOf(before: Markers, after: Markers): Moves {
  const moves: Moves = {};
  for (const name of Object.keys(after) as MarkerName[]) {
    const from = before[name]?.gen;
    const to = after[name]!.gen;
    if (from !== undefined && from !== to) moves[name] = [from, to];
  }
  return moves;
}

/**
 * Stored transitions kept for other replicas (migration 0017): as many as a journal keeps per kind, so a replica
 * that read them late still finds every step it can use.
 */
const STORED_TRANSITIONS = MAX_TRANSITIONS;

/**
 * Stores the transitions of a batch's members (PostgreSQL stores only) for the other replicas, in the batch's
 * transaction before it commits (`beforeCommit`, pg/open.ts): one statement for the batch instead of one per
 * member under the writer lock. A member undone to its savepoint never queued its own; in member order, so ids
 * follow the generations.
 */
export async function storeBatchTransitions(trx: Executor): Promise<void> {
  const journal = storeState(trx, JOURNAL);
  const queued = journal?.unstored.get(trx);
  if (!queued) return;
  journal!.unstored.delete(trx);
  const rows = await hotRows<{ id: number }>(
    trx,
    `insert into access_transitions (moves, notes)
      select m, n from unnest(?::text[], ?::text[]) with ordinality as t(m, n, o) order by o returning id`,
    [queued.map((t) => JSON.stringify(t.moves)), queued.map((t) => JSON.stringify(t.notes))],
  );
  const ids = rows.map((r) => Number(r.id));
  const last = Math.max(...ids);
  // Every 64 ids, what no replica still needs goes.
  if (Math.floor(last / 64) > Math.floor((Math.min(...ids) - 1) / 64))
    await hotWrite(trx, 'delete from access_transitions where id <= ?', [last - STORED_TRANSITIONS]);
}

/**
 * Reads the transitions other replicas stored since the last call into this store's journal (called when the
 * table's change counter moved, before a request is answered: pg/replica-changes.ts). The first call only
 * notes where the table ends: caches are empty then, or dropped, and need no history.
 */
export async function readStoredTransitions(db: Executor): Promise<void> {
  const journal = storeState(db, JOURNAL);
  if (!journal) return;
  if (journal.storedUpTo === undefined) {
    const [row] = await hotRows<{ id: number | null }>(db, 'select max(id) as id from access_transitions', []);
    journal.storedUpTo = Number(row?.id ?? 0);
    return;
  }
  const rows = await hotRows<{ id: number; moves: string; notes: string }>(
    db,
    'select id, moves, notes from access_transitions where id > ? order by id',
    [journal.storedUpTo],
  );
  for (const r of rows) {
    journal.record(JSON.parse(r.moves) as Moves, JSON.parse(r.notes) as AccessNote[]);
    journal.storedUpTo = Number(r.id);
  }
}

/** Forgets where this replica was in the stored transitions (its feed was lost): the next read starts over. */
export function restartStoredTransitions(db: Executor): void {
  const journal = storeState(db, JOURNAL);
  if (journal) journal.storedUpTo = undefined;
}

/**
 * The transitions that took kind `name` from generation `from` to `to` on this store, added to `out` (one
 * object per transaction, so a transaction that moved several kinds is seen once); false when some step is
 * not explained.
 */
export function explainTransitions(
  db: Executor,
  name: MarkerName,
  from: number,
  to: number,
  out: Set<Transition>,
): boolean {
  if (from === to) return true;
  const journal = storeState(db, JOURNAL);
  return journal !== undefined && journal.explain(name, from, to, out);
}

/** Notes a change made in the transaction `trx`; outside a transaction (nothing to attach it to) it is dropped. */
export function noteAccessChange(trx: Executor, note: AccessNote): void {
  if (!trx.isTransaction) return;
  storeState(trx, JOURNAL)?.pending.get(trx)?.push(note);
}

/**
 * Runs `fn` in one transaction that records what it noted (above). Inside a caller's transaction it simply
 * runs, and its notes are never published (the outer transaction may write anything else): safe, not narrow.
 */
export async function withAccessTx<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  const journal = storeState(db, JOURNAL);
  if (!journal) return runTransaction(db as Store, fn);
  const shared = runtimeOf(db)?.kind === 'postgres';
  let transition: { moves: Moves; notes: AccessNote[] } | undefined;
  const out = await runTransaction(db as Store, async (trx) => {
    const notes: AccessNote[] = [];
    const before = await journal.markers(trx, shared);
    journal.pending.set(trx, notes);
    let result: T;
    try {
      result = await fn(trx);
    } finally {
      journal.pending.delete(trx);
    }
    if (notes.length > 0 && !notes.includes(UNEXPLAINED)) {
      const moves = movesOf(before, await journal.markers(trx, shared));
      if (Object.keys(moves).length > 0) {
        transition = { moves, notes };
        if (shared) {
          const queued = journal.unstored.get(trx);
          if (queued) queued.push(transition);
          else journal.unstored.set(trx, [transition]);
        }
      }
    }
    return result;
  });
  if (transition) journal.record(transition.moves, transition.notes);
  return out;
}
