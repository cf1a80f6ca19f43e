/**
 * The store's change feed: which tables each write touched, as counters a cache compares instead of asking the
 * store. The connection reports every statement right before it runs (db.ts), so no write path has to
 * remember to invalidate anything; the schema (statement-tables.ts) turns a statement into every table it may
 * change, triggers and cascades included.
 *
 * A cache takes a version of the tables it reads ({@link ChangeFeed.deps}, {@link ChangeFeed.readDeps}) before
 * it reads them, and answers from an entry only while that version has not moved. A write moves its tables'
 * counters when it runs (so a read racing it is never kept) and again when its transaction ends (commit or
 * rollback), so the version only ever grows and an entry can only look older than it is.
 *
 * Split columns: an update that sets only columns listed as split (the API session's activity time) moves the
 * channel `table.column` instead of the table, so what depends on the table's other columns ignores it. A read
 * of the table's rows depends on both.
 *
 * Adding inserts: an insert that can only add rows (statement-tables.ts, `adds`) moves the channel `table+insert`
 * instead of the table. Every dependency includes both, except where its holder says the table's new rows do not
 * concern it ({@link ChangeFeed.deps}'s `addsIgnored`): the API-session principals, so that provisioning (a new
 * identity a request) does not empty them for every next request.
 *
 * Transactions are followed per connection ({@link FeedSession}): SQLite's store has one, PostgreSQL's pool
 * one per pooled connection. Where statements of other connections can run while one is in flight (the pool),
 * the connection also reports when each has finished ({@link FeedSession.finished}), and a write or commit
 * moves its counters once more then: a read that ran meanwhile saw the old rows and must not stay cached.
 *
 * One feed per open store, owned by its runtime (runtime.ts). It sees this process's writes only: on SQLite
 * the controller is the store's only writer (store-hold.ts).
 */
import { classifyStatement, SchemaGraph, type SchemaObject, type StatementKind } from './statement-tables.js';

export interface Cell {
  n: number;
}

/** What a cache depends on: compare `version(deps)` before and after. */
export interface Deps {
  readonly cells: readonly Cell[];
  readonly tables: readonly string[];
}

/** The channel a table's adding inserts move (statement-tables.ts, `adds`), beside the table's own. */
const ADDED = '+insert';

export type Compiled =
  | { kind: 'read' | 'txStart' | 'txEnd' | 'undo' }
  | { kind: 'write'; cells: readonly Cell[]; tables: readonly string[] }
  | { kind: 'unknown'; ddl: boolean };

/**
 * Columns whose updates the store's feed keeps apart from their table's: an API session's activity time is
 * written on most requests, and only a listing of API sessions shows it.
 */
export const SPLIT_COLUMNS: Readonly<Record<string, readonly string[]>> = { api_sessions: ['lastActivityAt'] };

/** Statement texts remembered with what they touch (a busy store runs a few hundred distinct texts). */
const MAX_TEXTS = 5000;

export class ChangeFeed {
  private readonly cells = new Map<string, Cell>();
  /** Moved by every write whose reach is unknown (DDL, `exec`, a text the parser cannot read). */
  private readonly epoch: Cell = { n: 0 };
  /** Moved by every write except the split columns' (what "any write" consumers depend on). */
  private readonly any: Cell = { n: 0 };
  private readonly compiled = new Map<string, Compiled>();
  private readonly reads = new Map<string, Deps>();
  private graph: SchemaGraph | undefined;
  private loading = false;
  private listeners: ((tables: readonly string[]) => void)[] = [];
  /** The connection of a store that has one (SQLite's). */
  private readonly main = new FeedSession(this);

  constructor(
    private readonly loadSchema: () => SchemaObject[],
    private readonly split: Readonly<Record<string, readonly string[]>> = {},
  ) {}

  /**
   * The dependency on `tables` (and on writes of unknown reach). `addsIgnored`: tables of `tables` whose
   * inserts that only add rows do not concern the dependent (a cache of answers about rows that exist, e.g. an
   * API session token's principal: a new identity or session cannot change what an existing token resolves to).
   */
  deps(tables: readonly string[], addsIgnored: readonly string[] = []): Deps {
    const cells = [this.epoch];
    for (const t of tables) {
      cells.push(this.cell(t));
      if (!t.includes('.') && !addsIgnored.includes(t)) cells.push(this.cell(t + ADDED));
    }
    return { cells, tables };
  }

  /** The dependency on every write but the split columns'. */
  readonly anyDeps: Deps = { cells: [this.epoch, this.any], tables: ['*'] };

  /**
   * What the read `sql` depends on: every table or view it names, with their split channels, and the tables
   * `also` (read by the same answer in other statements).
   */
  readDeps(sql: string, also: readonly string[] = []): Deps {
    const key = also.length === 0 ? sql : `${sql}\u0000${also.join(',')}`;
    let d = this.reads.get(key);
    if (d) return d;
    const graph = this.schema();
    if (!graph) return this.anyDeps;
    const tables = [...new Set([...graph.readsOf(sql), ...also])];
    for (const t of [...tables]) for (const c of this.split[t] ?? []) tables.push(`${t}.${c}`);
    d = this.deps(tables);
    if (this.reads.size >= MAX_TEXTS) this.reads.clear();
    this.reads.set(key, d);
    return d;
  }

  version(d: Deps): number {
    let v = 0;
    for (const c of d.cells) v += c.n;
    return v;
  }

  /** Called by the store's connection right before a statement runs; `reader`: the driver says it only reads. */
  note(sql: string, reader: boolean): void {
    this.main.note(sql, reader);
  }

  /** Transactions followed for one more connection (a pool's). */
  session(): FeedSession {
    return new FeedSession(this, true);
  }

  /** What the statement `sql` is and touches (remembered by text). */
  compiledOf(sql: string, reader: boolean): Compiled {
    let c = this.compiled.get(sql);
    if (c === undefined) {
      c = this.compile(classifyStatement(sql, reader));
      if (this.compiled.size >= MAX_TEXTS) this.compiled.clear();
      this.compiled.set(sql, c);
    }
    return c;
  }

  /** Reads the schema again (a store whose schema is loaded ahead, when DDL has run). */
  schemaChanged(): void {
    this.graph = undefined;
    this.compiled.clear();
    this.reads.clear();
  }

  /** A write whose reach is unknown (a batch run without preparing, DDL): moves every version. */
  noteUnknown(ddl = true): void {
    this.main.wrote([this.epoch, this.any], ['*']);
    if (ddl) {
      this.schemaChanged();
      // Read the new schema once the statement has run, rather than inside the next write (a batch's first).
      queueMicrotask(() => this.schema());
    }
  }

  /** Every counter, moved once: what a store does when it cannot know what changed (another process's writes). */
  everything(): void {
    this.epoch.n++;
    this.any.n++;
    this.announce(['*']);
  }

  /**
   * Writes committed by another process sharing the store (a replica on the same PostgreSQL database), as the
   * tables they touched: their counters move, and the listeners hear of them.
   */
  external(tables: readonly string[]): void {
    for (const t of tables) this.cell(t).n++;
    this.any.n++;
    this.announce(tables);
  }

  /** The cells of a write of unknown reach. */
  get unknownCells(): readonly Cell[] {
    return [this.epoch, this.any];
  }

  /**
   * Calls `fn` with the tables of each write once it has ended: a statement outside a transaction right away
   * (it commits as it runs), a transaction's writes at its commit or rollback. `*` stands for every table.
   */
  onChange(fn: (tables: readonly string[]) => void): () => void {
    this.listeners.push(fn);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== fn);
    };
  }

  /** Tells the listeners which tables a write that has ended touched. */
  announce(tables: readonly string[]): void {
    for (const l of this.listeners) l(tables);
  }

  get listened(): boolean {
    return this.listeners.length > 0;
  }

  private compile(k: StatementKind): Compiled {
    if (k.kind !== 'write') return k;
    const graph = this.schema();
    if (!graph || !graph.has(k.table)) return { kind: 'unknown', ddl: false };
    const splitCols = this.split[k.table];
    const onlySplit = k.op === 'update' && splitCols && k.columns && k.columns.every((col) => splitCols.includes(col));
    const tables = graph.writeClosure(k.table, k.op, k.columns);
    // An insert that only adds rows moves its table's adding channel; what its triggers write moves as usual.
    const cells = tables
      .map((t) => (t !== k.table ? this.cell(t) : onlySplit ? undefined : this.cell(k.adds ? t + ADDED : t)))
      .filter((c) => !!c);
    if (onlySplit) for (const col of k.columns!) cells.push(this.cell(`${k.table}.${col}`));
    else cells.push(this.any);
    return { kind: 'write', cells, tables };
  }

  private cell(name: string): Cell {
    let c = this.cells.get(name);
    if (!c) this.cells.set(name, (c = { n: 0 }));
    return c;
  }

  private schema(): SchemaGraph | undefined {
    if (this.graph || this.loading) return this.graph;
    this.loading = true;
    try {
      this.graph = new SchemaGraph(this.loadSchema());
    } finally {
      this.loading = false;
    }
    return this.graph;
  }
}

/**
 * One connection's transactions as the feed follows them: the counters its open transaction moved, moved again
 * when it ends, and the tables to announce then.
 */
export class FeedSession {
  private readonly open = new Set<Cell>();
  private readonly openTables = new Set<string>();
  private inTx = false;
  /** The cells of the statement in flight, moved again when it has finished (see {@link finished}). */
  private pending: readonly Cell[] = [];
  /** Tables to announce once the statement in flight has finished. */
  private untold: readonly string[] | undefined;

  /**
   * `afterRun`: the connection reports when each statement has finished, and listeners hear of a write only
   * then (a pool's connections, whose statements run while others are in flight). Without it (SQLite's
   * synchronous connection, where a statement has run before any listener's own reads can) they hear at once.
   */
  constructor(
    private readonly feed: ChangeFeed,
    private readonly afterRun = false,
  ) {}

  private tell(tables: readonly string[]): void {
    if (this.afterRun) this.untold = tables;
    else this.feed.announce(tables);
  }

  /** Right before the statement `sql` runs on this connection. */
  note(sql: string, reader: boolean): void {
    const c = this.feed.compiledOf(sql, reader);
    switch (c.kind) {
      case 'read':
        return;
      case 'txStart':
        this.inTx = true;
        this.open.clear();
        this.openTables.clear();
        return;
      case 'undo':
        // The undone writes are undone now; the transaction's others still await its end.
        for (const cell of this.open) cell.n++;
        return;
      case 'txEnd': {
        for (const cell of this.open) cell.n++;
        this.pending = [...this.open];
        this.inTx = false;
        this.open.clear();
        if (this.openTables.size > 0) {
          const tables = [...this.openTables];
          this.openTables.clear();
          this.tell(tables);
        }
        return;
      }
      case 'write':
        this.wrote(c.cells, c.tables);
        return;
      case 'unknown':
        this.feed.noteUnknown(c.ddl);
        if (!this.inTx) this.pending = this.feed.unknownCells;
        return;
    }
  }

  /**
   * Right after the statement announced by the last {@link note} has finished (or failed): a commit, or a write
   * outside a transaction, moves its counters again, so nothing read while it ran is kept as current.
   */
  finished(): void {
    for (const cell of this.pending) cell.n++;
    this.pending = [];
    const told = this.untold;
    this.untold = undefined;
    if (told) this.feed.announce(told);
  }

  wrote(cells: readonly Cell[], tables: readonly string[]): void {
    for (const cell of cells) cell.n++;
    if (!this.inTx) {
      this.pending = cells;
      this.tell(tables);
      return;
    }
    for (const cell of cells) this.open.add(cell);
    if (this.feed.listened) for (const t of tables) this.openTables.add(t);
  }
}
