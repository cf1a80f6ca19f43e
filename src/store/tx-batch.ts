/**
 * Group commit for transactions. Every transaction of `withTx` and `withAccessTx` commits its own pages to the
 * write-ahead log: the table's and each index's leaf, the search index's segment, the access markers, the
 * database header. Concurrent writers mostly touch the same pages, so transactions that arrive while another
 * runs share one: each runs in its own savepoint, one after the other, and the batch commits once. A member
 * that fails is rolled back to its savepoint alone; the others are unaffected. Each member's promise settles
 * only after the commit, so nothing is answered before it is durable, exactly as with one transaction each.
 * Measured: 16 identity creates per commit write ~7 KB of log each instead of ~68 KB.
 *
 * Members run strictly in turn (SQLite has one connection and savepoints nest), so a batch is bounded in
 * members and in time, after which it commits and the next one starts; readers waiting for the connection get
 * their turn between batches. Before a batch begins it passes the store's write gate (write-gate.ts).
 *
 * PostgreSQL batches the same way, on one pooled connection: the batch's transaction takes the writer lock once
 * (`begin`, runtime.ts) and pays one commit flush, so the model writes that queue while one batch holds the lock
 * go together in the next instead of each waiting for the lock and the log on its own. A statement that fails
 * there aborts the transaction only back to the member's savepoint; a savepoint that cannot be rolled back to
 * (the connection lost) loses the batch.
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';

/** Stop taking members after this many, or after this long, so readers are not held back. */
const MAX_MEMBERS = 64;
const MAX_BATCH_MS = 20;
const MAX_GATHER_TURNS = 4;
/**
 * How long a batch may wait for as many members as the last one had. Concurrent writers can fall into cohorts:
 * the first member back after a shared commit starts the next batch alone, and those behind it form the one
 * after, each commit then holding a share of the writers (16 provisioning clients over HTTPS committed ~5-6 a
 * commit on a loaded machine, where the 20 ms bound splits batches too). Each commit writes the pages every member
 * shares again (the tables' and indexes' last leaves, the outbox, the markers, the search index's segment:
 * ~30 pages, 120 KB), so waiting for the last batch's writers to come back lets the cohorts merge and
 * divides that cost by the number of writers (docs/decisions.md, "Write-ahead log and commits").
 */
const COHORT_WAIT_MS = 2;

const SAVEPOINT = CompiledQuery.raw('savepoint tx_member');
const RELEASE = CompiledQuery.raw('release tx_member');
const ROLLBACK_TO = CompiledQuery.raw('rollback to tx_member');
/** The same, two statements in one round trip, where the driver takes several in one query (PostgreSQL's). */
const NEXT_SAVEPOINT = CompiledQuery.raw('release tx_member; savepoint tx_member');
const UNDO_MEMBER = CompiledQuery.raw('rollback to tx_member; release tx_member');

interface Member {
  fn(trx: Transaction<unknown>): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** A failure that ended the whole transaction (SQLite rolled it back): every member of the batch fails with it. */
class BatchLost extends Error {}

/** What a store adds to each batch's transaction. */
export interface BatchHooks {
  /** Runs first in the transaction, before any member (PostgreSQL: the writer lock); a failure loses the batch. */
  begin?(trx: Transaction<unknown>): Promise<void>;
  /**
   * Runs in the batch's transaction after its last member, outside every savepoint (the search indexes' queue,
   * migration 0026); a failure loses the batch like a failed commit. What it answers runs once the batch has
   * committed, before any member is answered (PostgreSQL: which change counters this process moved).
   */
  beforeCommit?(trx: Transaction<unknown>): Promise<(() => void) | void>;
  /**
   * The connection takes several statements in one query (PostgreSQL's simple protocol; not better-sqlite3):
   * a member's savepoint is released together with the next one's begin, a round trip less per member, which
   * counts where each member's statements run in turn under the writer lock.
   */
  combinedStatements?: boolean;
}

export class TxBatcher {
  private readonly queue: Member[] = [];
  private running = false;
  /** Settled when the batch now open ends; undefined while none is. */
  private open: Promise<void> | undefined;
  /**
   * How long one batch keeps taking members (MAX_BATCH_MS). A test that counts what one commit of several
   * members writes lifts it, so a slow machine does not split the batch it counts.
   */
  maxBatchMs = MAX_BATCH_MS;
  /**
   * How long a batch waits for its cohort (COHORT_WAIT_MS). A test of the cohort lifts it, so a loaded machine
   * that pauses the process for longer than the bound between the writers' turns does not split the cohort.
   */
  cohortWaitMs = COHORT_WAIT_MS;
  /** Batches committed and members run, since the store opened (for the bench and metrics). */
  batches = 0;
  members = 0;
  private lastBatch = 0;
  /** The last batch's members and those it left waiting (it stopped at its bounds): the writers of late. */
  private lastWriters = 0;
  /** Wakes a batch waiting for its cohort (see COHORT_WAIT_MS) once the queue holds `want` members. */
  private cohort: { want: number; wake(): void } | undefined;

  constructor(
    private readonly db: Kysely<unknown>,
    private readonly inTransaction: () => boolean,
    /** Lends the store's connection to the batch's transaction while `fn` runs (direct.ts's statements). */
    private readonly lend: <T>(trx: Transaction<unknown>, fn: () => Promise<T>) => Promise<T>,
    /** Resolves when new write transactions may begin (write-gate.ts); undefined when they may now. */
    private readonly admit: () => Promise<void> | undefined,
    private readonly mayContinue: () => boolean,
    private readonly hooks: BatchHooks = {},
  ) {}

  run<T>(fn: (trx: Transaction<unknown>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.cohort && this.queue.length >= this.cohort.want) this.cohort.wake();
      if (this.running) return;
      // Start on the next turn of the event loop: a request runs from its arrival to its transaction without
      // yielding (the store is synchronous), so the other requests that arrived with it join only if the
      // batch waits for them to get there.
      this.running = true;
      setImmediate(() => void this.gather(this.queue.length, 0));
    });
  }

  /**
   * While members keep arriving turn after turn (concurrent clients whose requests come in over a few
   * milliseconds), waits up to `MAX_GATHER_TURNS` more turns of the event loop before the batch begins.
   */
  private gather(seen: number, turns: number): void {
    if (turns < MAX_GATHER_TURNS && this.lastBatch > 1 && this.queue.length < MAX_MEMBERS) {
      setImmediate(() =>
        this.queue.length > seen || turns === 0 ? this.gather(this.queue.length, turns + 1) : void this.drive(),
      );
      return;
    }
    void this.drive();
  }

  private async drive(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        await this.awaitCohort();
        const wait = this.admit();
        if (wait) await wait;
        this.open = this.batch();
        await this.open;
        this.open = undefined;
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * After a batch of several members, the next waits up to COHORT_WAIT_MS for as many members as that one had,
   * with those it left waiting (its writers coming back with their next write). A lone writer's batches have
   * one member and never wait.
   */
  private async awaitCohort(): Promise<void> {
    const want = Math.min(this.lastWriters, MAX_MEMBERS);
    if (want <= 1 || this.queue.length >= want) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake(), this.cohortWaitMs);
      const wake = () => {
        clearTimeout(timer);
        this.cohort = undefined;
        resolve();
      };
      this.cohort = { want, wake };
    });
  }

  /**
   * Settles once no batch's transaction is open on the connection. With the write gate closed none begins
   * after that, so the checkpointer may then take the write lock without a transaction of ours needing it
   * midway (SQLite answers BUSY at once, without waiting, to a reader that wants to start writing then).
   */
  async settled(): Promise<void> {
    while (this.open) await this.open;
  }

  private async batch(): Promise<void> {
    const done: { member: Member; value: unknown }[] = [];
    let taken = 0;
    const committed: { run?: (() => void) | void } = {};
    try {
      await this.db.transaction().execute((trx) =>
        this.lend(trx, async () => {
          await this.hooks.begin?.(trx);
          const started = performance.now();
          const combined = this.hooks.combinedStatements === true;
          /** The last member's savepoint, left open to be released with the next one's begin (`combined`). */
          let held = false;
          do {
            const member = this.queue.shift()!;
            taken++;
            try {
              await trx.executeQuery(held ? NEXT_SAVEPOINT : SAVEPOINT);
              held = false;
              done.push({ member, value: await member.fn(trx) });
              if (combined) held = true;
              else await trx.executeQuery(RELEASE);
            } catch (e) {
              if (!this.inTransaction()) {
                member.reject(e);
                throw new BatchLost('the transaction ended with a member', { cause: e });
              }
              try {
                if (combined) await trx.executeQuery(UNDO_MEMBER);
                else {
                  await trx.executeQuery(ROLLBACK_TO);
                  await trx.executeQuery(RELEASE);
                }
              } catch (lost) {
                member.reject(e);
                throw new BatchLost('the transaction ended with a member', { cause: lost });
              }
              member.reject(e);
            }
          } while (
            this.queue.length > 0 &&
            taken < MAX_MEMBERS &&
            performance.now() - started < this.maxBatchMs &&
            this.mayContinue()
          );
          if (held) await trx.executeQuery(RELEASE);
          if (done.length > 0) committed.run = await this.hooks.beforeCommit?.(trx);
        }),
      );
    } catch (e) {
      const error = e instanceof BatchLost ? e.cause : e;
      for (const d of done) d.member.reject(error);
      // No transaction could begin (the store is closed or its file unusable): every waiting member would meet
      // the same, and left queued it would make `drive` retry without end, never yielding to the event loop.
      if (taken === 0) for (const member of this.queue.splice(0)) member.reject(error);
      return;
    }
    this.batches++;
    this.members += taken;
    this.lastBatch = taken;
    this.lastWriters = taken + this.queue.length;
    committed.run?.();
    for (const d of done) d.member.resolve(d.value);
  }
}
