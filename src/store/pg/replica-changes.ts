/**
 * Other replicas' writes, as this replica's change feed learns of them: before a request is answered, the
 * store's `*` counter (migration 0015) is read, and when it moved, every table's; the tables that moved are
 * told to the feed as writes (change-feed.ts `external`), so whatever a cache holds of them is read again.
 * A revocation made on another replica has committed before that replica answers, so any request that
 * arrives here after that answer reads the moved counter before it is served from a cache.
 *
 * Reads are shared: a request joins the next read that begins after it arrived (at most one runs and one
 * waits; an idle store begins it at the end of the turn, so the requests of one turn share it), so under load
 * the cost is one small query per batch of requests, not per request.
 *
 * When the counters cannot be read (the database is unreachable), every cache is dropped and the next read
 * that succeeds drops them again: nothing is answered from what was kept while the feed was lost.
 *
 * The counters are read over a connection of their own, outside the pool and kysely: the read runs before
 * almost every request, and borrowing a pooled connection, compiling and returning it cost more CPU than the
 * query (the two-replica bench pays it once per replica).
 *
 * The access engine's caches are revised by the journal of what each transaction changed
 * (access-journal.ts): the transitions other replicas stored (migration 0017) are read into this replica's
 * journal when their table's counter moved, before the request goes on.
 */
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { ChangeFeed } from '../change-feed.js';
import { readStoredTransitions, restartStoredTransitions } from '../access-journal.js';

/** How the dedicated connection names itself to the server (`pg_stat_activity.application_name`). */
export const COUNTERS_APPLICATION = 'edgectl change counters';

/** The counters' reads, prepared once on the dedicated connection. */
const STAR = { name: 'edgectl_changes_star', text: "select gen from store_changes where name = '*'" };
const EVERY_TABLE = { name: 'edgectl_changes_all', text: 'select name, gen from store_changes' };

/**
 * The dedicated connection, opened at the first read and again after any failure (a failed query drops it,
 * so a restarted server or a failover is met by a new connection on the next read).
 */
export class CounterConnection {
  private connecting: Promise<pg.Client> | undefined;
  private closed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  async rows<R>(query: { name: string; text: string }): Promise<R[]> {
    const client = await this.client();
    try {
      return (await client.query<R & pg.QueryResultRow>(query)).rows;
    } catch (e) {
      this.drop();
      throw e;
    }
  }

  private client(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (!this.connecting) {
      const client = new pg.Client(this.config);
      // A connection the server ends emits 'error' (with no listener Node would throw it): the next read opens another.
      client.on('error', () => this.drop(client));
      const connecting = client.connect().then(() => client);
      connecting.catch(() => this.drop(client));
      this.connecting = connecting;
    }
    return this.connecting;
  }

  private drop(which?: pg.Client): void {
    const connecting = this.connecting;
    if (!connecting) return;
    this.connecting = undefined;
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
  /** Reads that succeeded and failed, for metrics and tests. */
  reads = 0;
  failures = 0;

  constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly db: Kysely<any>,
    private readonly feed: ChangeFeed,
    private readonly counters: CounterConnection,
  ) {}

  close(): Promise<void> {
    return this.counters.close();
  }

  /** Settles once a read of the counters that began after this call has been applied. Never rejects. */
  fresh(): Promise<void> {
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

  private start(): Promise<void> {
    const p: Promise<void> = this.read().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async read(): Promise<void> {
    try {
      const rows = await this.counters.rows<{ gen: number }>(STAR);
      const star = Number(rows[0]?.gen ?? -1);
      this.reads++;
      if (star === this.star) return;
      const all = { rows: await this.counters.rows<{ name: string; gen: number }>(EVERY_TABLE) };
      const first = this.star === undefined;
      const moved: string[] = [];
      for (const r of all.rows) {
        const gen = Number(r.gen);
        if (r.name === '*') this.star = gen;
        else if (this.seen.get(r.name) !== gen) {
          this.seen.set(r.name, gen);
          moved.push(r.name);
        }
      }
      // The access journal's steps first, so that the caches the moved markers reach can be revised narrowly.
      if (first || moved.includes('access_transitions')) await readStoredTransitions(this.db);
      if (first) this.feed.everything();
      else if (moved.length > 0) this.feed.external(moved);
    } catch {
      this.failures++;
      this.star = undefined;
      this.seen.clear();
      restartStoredTransitions(this.db);
      this.feed.everything();
    }
  }
}
