/**
 * Other replicas' writes, as this replica's change feed learns of them. The store's change counters (migration
 * 0015) move with every model write, and the transaction that moves them notifies channel `edgectl_changes`
 * (migration 0024). A replica reads the counters when notified, and every HEARTBEAT_MS besides while requests
 * arrive (IDLE_MS after the last one it stops, and the next request reads first); the tables that moved are
 * told to the feed as writes (change-feed.ts `external`), so whatever a cache holds of them is read again.
 *
 * Revocations take effect on every replica before the revoking request is answered (docs/decisions.md,
 * "Replicas"). Each read ends with an acknowledgement in `replica_leases`: the `*` counter applied, and a lease
 * of LEASE_MS from the database's clock. A request that wrote the model is answered only once every other
 * replica whose lease is live has acknowledged its write ({@link ReplicaChanges.published}), or its lease has
 * run out. A replica serves from its caches without reading the counters only within its own lease, measured
 * on its own clock from the moment the read began (which comes before the database's start of the lease it
 * wrote, so a writer's wait always covers it); past that, or once its connection to the notices is lost,
 * every request reads the counters first, shared by the requests of one turn, as before any lease.
 *
 * When the counters cannot be read (the database is unreachable), every cache is dropped and the next read
 * that succeeds drops them again: nothing is answered from what was kept while the feed was lost.
 *
 * The counters are read over a connection of their own, outside the pool and kysely, which also listens for the
 * notices: the reads run often, and borrowing a pooled connection, compiling and returning it cost more CPU than
 * the query.
 *
 * The access engine's caches are revised by the journal of what each transaction changed
 * (access-journal.ts): the transitions other replicas stored (migration 0017) are read into this replica's
 * journal when their table's counter moved, before the request goes on.
 *
 * This replica's own commits move the counters too, and come back here like another's. Its own feed has already
 * seen those writes, statement by statement (pg/open.ts), and more narrowly than a moved counter says: a new
 * identity moves only the identities' adding channel, which the API-session principals ignore, where a moved
 * counter moves the whole table. So a moved table is told to the feed only when some other writer moved it too:
 * each group commit reads, before it commits, the `*` value its commit makes and the tables it moved
 * ({@link ownMove}), and a read that finds a table moved exactly as many times as this replica's own commits in
 * the range it covers moved it leaves the table alone. Exact, not a guess: the trigger moves `*` and each table
 * it counts once per transaction, and holds the `*` row from its first move to the commit, so each `*` value
 * belongs to one committed transaction. A commit whose answer was lost, a read that raced its bookkeeping, or a
 * write outside the group commit counts as another's (the caches read again, as before).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { ChangeFeed } from '../change-feed.js';
import type { Executor } from '../executor.js';
import { hotRows } from '../direct.js';
import { readStoredTransitions, restartStoredTransitions } from '../access-journal.js';

/** How the dedicated connection names itself to the server (`pg_stat_activity.application_name`). */
export const COUNTERS_APPLICATION = 'edgectl change counters';

/** The counters' reads, prepared once on the dedicated connection. */
const STAR = { name: 'edgectl_changes_star', text: "select gen from store_changes where name = '*'" };
const EVERY_TABLE = { name: 'edgectl_changes_all', text: 'select name, gen from store_changes' };

/**
 * What the open transaction has moved of the counters: the trigger keeps the tables it counted in the
 * transaction-local `edgectl.changed` (empty until the first traced write, and rolled back with a savepoint), and
 * while it is set the transaction holds the `*` row, so the `*` value read is the one its commit makes.
 */
const OWN_MOVE = `select gen, current_setting('edgectl.changed', true) as changed from store_changes where name = '*'`;

/** The `*` value the transaction `trx` will commit and the tables whose counters it moved; undefined if none. */
export async function ownMove(trx: Executor): Promise<{ star: number; tables: string[] } | undefined> {
  const [row] = await hotRows<{ gen: number; changed: string | null }>(trx, OWN_MOVE, []);
  const tables = (row?.changed ?? '').split('|').filter((t) => t !== '');
  return row && tables.length > 0 ? { star: Number(row.gen), tables } : undefined;
}

/** How long an acknowledged read lets a replica serve from its caches without reading the counters again. */
export const LEASE_MS = 500;
/** How often a replica reads the counters and renews its lease when nothing notifies it. */
export const HEARTBEAT_MS = 100;
/**
 * How long after the last request the heartbeat goes on, once its last read succeeded. An idle replica then
 * neither reads the counters nor writes its lease ten times a second (a query and an update each time, on both
 * sides); notices still reach it over its connection (a lost one starts the heartbeat again, which reconnects),
 * and its first request after the lease ran out reads the counters before it is served, as past any lease.
 */
export const IDLE_MS = 2000;
/** The channels of the change notices and of the acknowledgements. */
const CHANGES = 'edgectl_changes';
const ACKS = 'edgectl_acks';

/** This replica's lease, written before its first read (so a writer waits for it from then on) and by each read. */
const LEASE = {
  name: 'edgectl_lease',
  // Without waiting for the log flush: a lease lost in a crash of the server goes with every connection to it,
  // so its replica has stopped trusting its caches anyway (a lost connection ends the lease).
  text: `with c as (select set_config('synchronous_commit', 'off', true))
    insert into replica_leases (id, gen, "leaseUntil")
    select $1::text, $2::bigint, clock_timestamp() + $3::int * interval '1 millisecond' from c
    on conflict (id) do update set gen = excluded.gen, "leaseUntil" = excluded."leaseUntil"`,
};
const NOTIFY_ACK = { name: 'edgectl_ack_notice', text: `select pg_notify('${ACKS}', '')` };
/** The replicas that have not acknowledged `*` at its current value (or at `$2`) and whose lease is live. */
const LAGGING = {
  name: 'edgectl_lagging',
  text: `select coalesce($2, s.gen) as gen, count(r.id)::int as n from store_changes s
    left join replica_leases r on r.id <> $1 and r.gen < coalesce($2, s.gen) and r."leaseUntil" > clock_timestamp()
    where s.name = '*' group by s.gen`,
};
const RELEASE = { name: 'edgectl_release', text: 'delete from replica_leases where id = $1' };
/** Leases run out long ago: replicas that stopped without removing theirs. */
const FORGET = {
  name: 'edgectl_forget',
  text: `delete from replica_leases where "leaseUntil" < clock_timestamp() - interval '1 hour'`,
};

/**
 * The dedicated connection, opened at the first read and again after any failure (a failed query drops it,
 * so a restarted server or a failover is met by a new connection on the next read).
 */
export class CounterConnection {
  private connecting: Promise<pg.Client> | undefined;
  private closed = false;
  /** Called with each notice's channel; `lost` when the connection ends (notices may have been missed). */
  onNotice: ((channel: string) => void) | undefined;
  onLost: (() => void) | undefined;

  constructor(private readonly config: pg.ClientConfig) {}

  /** The queries of this connection, one at a time (pg queues a second one itself, but is dropping that). */
  private last: Promise<unknown> = Promise.resolve();

  rows<R>(query: { name: string; text: string; values?: unknown[] }): Promise<R[]> {
    const run = async (): Promise<R[]> => {
      const client = await this.client();
      try {
        return (await client.query<R & pg.QueryResultRow>(query)).rows;
      } catch (e) {
        this.drop();
        throw e;
      }
    };
    const result = this.last.then(run, run);
    this.last = result.catch(() => undefined);
    return result;
  }

  private client(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (!this.connecting) {
      const client = new pg.Client(this.config);
      // A connection the server ends emits 'error' (with no listener Node would throw it): the next read opens another.
      client.on('error', () => this.drop(client));
      client.on('notification', (n) => this.onNotice?.(n.channel));
      // Listening before any read on this connection: a notice of a commit after the read is never missed.
      const connecting = client
        .connect()
        .then(() => client.query(`listen ${CHANGES}; listen ${ACKS}`))
        .then(() => client);
      connecting.catch(() => this.drop(client));
      this.connecting = connecting;
    }
    return this.connecting;
  }

  private drop(which?: pg.Client): void {
    const connecting = this.connecting;
    if (!connecting) return;
    this.connecting = undefined;
    this.onLost?.();
    void connecting
      .then(
        (c) => (which === undefined || c === which ? c.end() : undefined),
        () => undefined,
      )
      .catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    const connecting = this.connecting;
    this.connecting = undefined;
    await connecting?.then((c) => c.end()).catch(() => {});
  }
}

export class ReplicaChanges {
  private readonly seen = new Map<string, number>();
  private star: number | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** This replica's name in `replica_leases`. */
  private readonly id = randomUUID();
  /** Until when (performance.now()) the caches may be used without reading the counters; 0: not now. */
  private leaseUntil = 0;
  /** The `*` counter of the last acknowledgement. */
  private acknowledged = -1;
  /** The lease row exists (written once before the first read). */
  private registered = false;
  private heartbeat: NodeJS.Timeout | undefined;
  /** When (performance.now()) a request last asked for fresh caches. */
  private askedAt = 0;
  private closed = false;
  /** Writers waiting for acknowledgements, woken by each one. */
  private readonly waiting = new Set<() => void>();
  /** The wait for acknowledgements that this turn's callers of `published` share, until it begins. */
  private nextWait: Promise<void> | undefined;
  /** This replica's committed moves of the counters not yet read back: the tables, by the `*` value made. */
  private readonly own = new Map<number, readonly string[]>();
  /** Reads that succeeded and failed, for metrics and tests. */
  reads = 0;
  failures = 0;

  constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly db: Kysely<any>,
    private readonly feed: ChangeFeed,
    private readonly counters: CounterConnection,
  ) {
    counters.onNotice = (channel) => {
      if (channel === CHANGES) void this.refresh();
      else for (const wake of this.waiting) wake();
    };
    counters.onLost = () => {
      this.leaseUntil = 0;
      this.wake();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const wake of this.waiting) wake();
    // Writers stop waiting for this replica at once rather than when its lease runs out.
    if (this.registered) await this.counters.rows({ ...RELEASE, values: [this.id] }).catch(() => {});
    await this.counters.close();
  }

  /**
   * Settles once the caches hold every write other replicas committed before this call: at once within this
   * replica's lease, else after a read of the counters that began after this call. Never rejects.
   */
  fresh(): Promise<void> | undefined {
    const now = performance.now();
    this.askedAt = now;
    // The first request starts the notices and the lease (a store opened for the CLI never takes one), and
    // the first after a quiet spell starts the heartbeat again.
    this.wake();
    if (now < this.leaseUntil) return undefined;
    return this.refresh();
  }

  /** Whether the heartbeat runs (it stops once the replica is idle: IDLE_MS). */
  get beating(): boolean {
    return this.heartbeat !== undefined;
  }

  private wake(): void {
    if (this.heartbeat || this.closed) return;
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** A heartbeat's read; none, and the heartbeat's end, once no request came for IDLE_MS and the last read succeeded. */
  private beat(): void {
    if (performance.now() - this.askedAt > IDLE_MS && this.leaseUntil > 0 && !this.running) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    void this.refresh();
  }

  /** A read that begins after this call (the running one began before it), shared by every caller meanwhile. */
  private refresh(): Promise<void> {
    if (this.queued) return this.queued;
    // The next read begins once the running one has ended, or else at the end of this event-loop turn, so the
    // other requests that arrived in the same turn (read off other sockets) join it rather than the one after.
    const queued = (this.running ?? new Promise<void>((r) => setImmediate(r))).then(() => {
      this.queued = undefined;
      return this.start();
    });
    this.queued = queued;
    return queued;
  }

  /**
   * Settles once every other replica with a live lease has acknowledged the counters as they are now (after
   * this replica's write committed), or its lease has run out; at most about two leases. Never rejects: a
   * database that cannot be reached leaves the other replicas reading the counters for every request anyway.
   * The callers of one event-loop turn share one wait, begun after the last of them called (the writers of one
   * group commit are answered in the same turn): one look at the acknowledgements instead of one each.
   */
  published(): Promise<void> {
    if (this.nextWait) return this.nextWait;
    const wait: Promise<void> = new Promise<void>((r) => setImmediate(r)).then(() => {
      this.nextWait = undefined;
      return this.awaitAcknowledgements();
    });
    this.nextWait = wait;
    return wait;
  }

  private async awaitAcknowledgements(): Promise<void> {
    const deadline = performance.now() + 2 * LEASE_MS;
    let gen: number | null = null;
    while (!this.closed) {
      let lagging: { gen: number; n: number } | undefined;
      try {
        [lagging] = await this.counters.rows<{ gen: number; n: number }>({ ...LAGGING, values: [this.id, gen] });
      } catch {
        return;
      }
      if (!lagging || lagging.n === 0 || performance.now() > deadline) return;
      gen = Number(lagging.gen);
      // An acknowledgement wakes this; a lease that runs out does not, so look again every few ms too.
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiting.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 5);
        this.waiting.add(wake);
      });
    }
  }

  /** This replica's group commit made `*` = `star` and moved the counters of `tables` (see {@link ownMove}). */
  ownCommit(star: number, tables: readonly string[]): void {
    // A read already past it told the feed of it as another's write.
    if (this.star !== undefined && star <= this.star) return;
    this.own.set(star, tables);
  }

  private start(): Promise<void> {
    const p: Promise<void> = this.read().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async read(): Promise<void> {
    try {
      if (!this.registered) {
        // Before the first read, so a write that commits after it waits for this replica's acknowledgement.
        await this.counters.rows({ ...LEASE, values: [this.id, -1, LEASE_MS] });
        await this.counters.rows(FORGET);
        this.registered = true;
      }
      const began = performance.now();
      const rows = await this.counters.rows<{ gen: number }>(STAR);
      const star = Number(rows[0]?.gen ?? -1);
      this.reads++;
      if (star !== this.star) await this.apply();
      const applied = this.star ?? -1;
      await this.counters.rows({ ...LEASE, values: [this.id, applied, LEASE_MS] });
      // Writers waiting for this replica look again when it acknowledges something new.
      if (applied !== this.acknowledged) await this.counters.rows(NOTIFY_ACK);
      this.acknowledged = applied;
      this.leaseUntil = began + LEASE_MS;
    } catch {
      this.failures++;
      this.leaseUntil = 0;
      this.star = undefined;
      this.seen.clear();
      this.own.clear();
      restartStoredTransitions(this.db);
      this.feed.everything();
    }
  }

  /**
   * Reads every table's counter and tells the feed of those that moved, but for the moves this replica's own
   * commits account for (see the top of this file).
   */
  private async apply(): Promise<void> {
    const all = await this.counters.rows<{ name: string; gen: number }>(EVERY_TABLE);
    const star = Number(all.find((r) => r.name === '*')?.gen ?? -1);
    // Counters that went back (the database restored from a dump) say nothing of what changed, and a `*` value
    // this replica once committed may come again from another's commit: start over, as at the first read.
    if (this.star !== undefined && star < this.star) {
      this.star = undefined;
      this.own.clear();
    }
    const before = this.star;
    const ownMoves = new Map<string, number>();
    for (const [gen, tables] of this.own) {
      if (gen > star) continue;
      this.own.delete(gen);
      if (before !== undefined && gen > before) for (const t of tables) ownMoves.set(t, (ownMoves.get(t) ?? 0) + 1);
    }
    const first = before === undefined;
    const moved: string[] = [];
    for (const r of all) {
      const gen = Number(r.gen);
      if (r.name === '*') this.star = gen;
      else {
        const was = this.seen.get(r.name);
        if (was === gen) continue;
        this.seen.set(r.name, gen);
        if (was === undefined || gen - was !== (ownMoves.get(r.name) ?? 0)) moved.push(r.name);
      }
    }
    // The access journal's steps first, so that the caches the moved markers reach can be revised narrowly.
    if (first || moved.includes('access_transitions')) await readStoredTransitions(this.db);
    if (first) this.feed.everything();
    else if (moved.length > 0) this.feed.external(moved);
  }
}
