/**
 * The outbox's settled prefix on PostgreSQL. There, concurrent transactions draw outbox positions (`seq`) from
 * a sequence and may commit out of that order (the new sessions' statement takes no lock: store/sessions.ts),
 * so a reader that went past the last position it saw could pass over one that commits later. Readers that
 * keep a position (the sinks' delivery, the live stream) read only up to the horizon: a position at or below
 * which every event has committed or never will.
 *
 * The horizon is the sequence's last value once every transaction that was writing the outbox when that value
 * was read has ended. A transaction holds its `RowExclusiveLock` on `events` from the start of its first insert
 * into it, before that insert draws a position, to its end; so a position drawn at or under the value read was
 * drawn either by a transaction already ended or by one holding that lock then. Those are named by their
 * virtual transaction ids (pg_locks), and the value becomes the horizon once none of them holds the lock any
 * more: at once when none was writing, after a few milliseconds usually, later when a transaction stays open
 * (the horizon then waits for it, and so does delivery: `edgectl_events_lag_seconds` shows it).
 *
 * SQLite has one writer connection and draws positions in commit order: every position is settled.
 */
import type { Executor } from './db.js';
import { hotRows } from './direct.js';
import { storeKind } from './dialect.js';
import { defineCache, storeState } from './runtime.js';

interface Horizon {
  /** The settled position. */
  settled: number;
  /** A value waiting for the transactions that were writing when it was read. */
  candidate: { seq: number; writers: string[] } | undefined;
}

/** Per store: what the horizon reached and the value waiting to become it (not a cache: it only moves forward). */
const HORIZON = defineCache<Horizon>('event-horizon', () => ({ settled: 0, candidate: undefined }));

/** How long one call waits for the writers of the moment to end before answering the horizon as it was. */
const WAIT_MS = 20;

const LAST_DRAWN = `select case when is_called then last_value else 0 end as seq from events_seq_seq`;
const WRITERS = `select virtualtransaction as vx from pg_locks
  where locktype = 'relation' and database = (select oid from pg_database where datname = current_database())
    and relation = 'events'::regclass and mode = 'RowExclusiveLock' and pid <> pg_backend_pid()`;

/** The position up to which every event is settled: `Infinity` on SQLite. */
export async function settledEventSeq(db: Executor): Promise<number> {
  if (storeKind(db) === 'sqlite') return Infinity;
  const state = storeState(db, HORIZON) ?? { settled: 0, candidate: undefined };
  if (!state.candidate) {
    const [drawn] = await hotRows<{ seq: unknown }>(db, LAST_DRAWN, []);
    const writers = (await hotRows<{ vx: string }>(db, WRITERS, [])).map((r) => r.vx);
    state.candidate = { seq: Number(drawn?.seq ?? 0), writers };
  }
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const { seq, writers } = state.candidate;
    const still = writers.length === 0 ? [] : (await hotRows<{ vx: string }>(db, WRITERS, [])).map((r) => r.vx);
    if (!writers.some((w) => still.includes(w))) {
      state.settled = Math.max(state.settled, seq);
      state.candidate = undefined;
      return state.settled;
    }
    if (performance.now() > deadline) return state.settled;
    await new Promise((r) => setTimeout(r, 2));
  }
}
