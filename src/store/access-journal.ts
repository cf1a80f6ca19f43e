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
import type { Executor, Store } from './db.js';
import { readMarkers, type MarkerName, type Markers } from './access-markers.js';
import { defineCache, runTransaction, storeState } from './runtime.js';

/** A change described by the model, or {@link UNEXPLAINED}, which makes the whole transaction unexplained. */
export type AccessNote = object;
export const UNEXPLAINED: AccessNote = Object.freeze({ unexplained: true });

export interface Transition {
  to: number;
  notes: readonly AccessNote[];
}

/** At most this many transitions per kind are kept; an older generation is simply unexplained (a miss). */
const MAX_TRANSITIONS = 4096;

class Journal {
  private readonly kinds = new Map<MarkerName, Map<number, Transition>>();
  /** The notes of each open transaction run by withAccessTx (one at a time holds the connection). */
  readonly pending = new WeakMap<Executor, AccessNote[]>();

  record(before: Markers, after: Markers, notes: readonly AccessNote[]): void {
    for (const name of Object.keys(after) as MarkerName[]) {
      const from = before[name]?.gen;
      const to = after[name]!.gen;
      if (from === undefined || from === to) continue;
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
const JOURNAL = defineCache('access-journal', () => new Journal());

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
  let transition: { before: Markers; after: Markers; notes: AccessNote[] } | undefined;
  const out = await runTransaction(db as Store, async (trx) => {
    const notes: AccessNote[] = [];
    const before = await readMarkers(trx);
    journal.pending.set(trx, notes);
    let result: T;
    try {
      result = await fn(trx);
    } finally {
      journal.pending.delete(trx);
    }
    if (notes.length > 0 && !notes.includes(UNEXPLAINED)) {
      transition = { before, after: await readMarkers(trx), notes };
    }
    return result;
  });
  if (transition) journal.record(transition.before, transition.after, transition.notes);
  return out;
}
