/**
 * Which tables a statement reads or writes, from its text and the schema (pure; the change feed's input,
 * change-feed.ts). A write reaches more than its own table: the triggers it fires write theirs (access
 * markers, search indexes, terminators) and the foreign keys it cascades through change the child tables,
 * so the schema is turned once into a closure per (table, operation, columns set).
 *
 * Every answer errs on the side of more tables: a text it cannot read is `unknown` (the feed then treats it
 * as a write of everything), a trigger's `update of` list is honoured only when the statement's own `set`
 * columns were read, and a read depends on every table or view whose name appears in it.
 */

export type WriteOp = 'insert' | 'update' | 'delete';

export type StatementKind =
  | { kind: 'read' }
  | { kind: 'txStart' }
  | { kind: 'txEnd' }
  /** `rollback to`: undoes some of the open transaction's writes and leaves it open. */
  | { kind: 'undo' }
  /**
   * `adds`: an insert that can only add rows to its table (no `or replace`, no upsert): the table's existing
   * rows stay as they were, which a cache of answers about existing rows may ignore (change-feed.ts).
   */
  | { kind: 'write'; table: string; op: WriteOp; columns?: readonly string[]; adds?: boolean }
  /** DDL, pragmas that write, or a write whose table could not be read. */
  | { kind: 'unknown'; ddl: boolean };

const READ = /^\s*(select|with|explain)\b/i;
const RETURNING = /\breturning\b/i;
const PRAGMA = /^\s*pragma\b/i;
const TX_START = /^\s*begin\b/i;
const SAVEPOINT_OR_RELEASE = /^\s*(savepoint|release)\b/i;
const UNDO = /^\s*rollback\s+to\b/i;
const TX_END = /^\s*(commit|end|rollback)\b/i;
const DDL = /^\s*(create|drop|alter)\b/i;
const NAME = String.raw`(?:"([^"]+)"|(\w+))`;
const INSERT = new RegExp(String.raw`\b(?:insert(?:\s+or\s+\w+)?|replace)\s+into\s+${NAME}`, 'i');
const UPDATE = new RegExp(String.raw`\bupdate(?:\s+or\s+\w+)?\s+${NAME}\s+set\b`, 'i');
const DELETE = new RegExp(String.raw`\bdelete\s+from\s+${NAME}`, 'i');
/** An insert that only adds rows: `insert into` or `insert or ignore/abort/fail/rollback into`. */
const ADDING_INSERT = /^\s*insert(?:\s+or\s+(?:ignore|abort|fail|rollback))?\s+into\b/i;
const UPSERT = /\bon\s+conflict\b[^;]*\bdo\s+update\b/i;
const SET_COLUMN = /(?:"([^"]+)"|\b(\w+))\s*=/g;

const nameOf = (m: RegExpExecArray): string => m[1] ?? m[2]!;

/** What the statement `sql` is; `reader` is the driver's own verdict that it returns rows and writes nothing. */
export function classifyStatement(sql: string, reader: boolean): StatementKind {
  if (reader && READ.test(sql) && !RETURNING.test(sql)) return { kind: 'read' };
  if (reader && PRAGMA.test(sql)) return { kind: 'read' };
  if (TX_START.test(sql)) return { kind: 'txStart' };
  if (SAVEPOINT_OR_RELEASE.test(sql)) return { kind: 'read' };
  if (UNDO.test(sql)) return { kind: 'undo' };
  if (TX_END.test(sql)) return { kind: 'txEnd' };
  if (DDL.test(sql)) return { kind: 'unknown', ddl: true };
  const write = firstWrite(sql);
  if (!write) return { kind: 'unknown', ddl: false };
  // Only a statement that starts with its insert (no CTE that might write first) and updates nothing on conflict.
  const adds = write.op === 'insert' && ADDING_INSERT.test(sql) && !UPSERT.test(sql);
  return { kind: 'write', ...write, ...(adds && { adds }) };
}

/** The first write in `sql` (a statement has one; a CTE before it only reads). */
function firstWrite(sql: string): { table: string; op: WriteOp; columns?: readonly string[] } | undefined {
  const found: { at: number; table: string; op: WriteOp; m: RegExpExecArray }[] = [];
  for (const [op, re] of [
    ['insert', INSERT],
    ['update', UPDATE],
    ['delete', DELETE],
  ] as const) {
    const m = re.exec(sql);
    if (m) found.push({ at: m.index, table: nameOf(m), op, m });
  }
  if (found.length === 0) return undefined;
  found.sort((a, b) => a.at - b.at);
  const first = found[0]!;
  if (first.op !== 'update') return { table: first.table, op: first.op };
  const columns = setColumns(sql.slice(first.at + first.m[0].length));
  return { table: first.table, op: 'update', ...(columns && { columns }) };
}

/** The columns of an `update`'s `set` clause, or undefined when it holds anything but `col = value` pairs. */
function setColumns(rest: string): string[] | undefined {
  const end = rest.search(/\b(where|returning|from)\b/i);
  const clause = end < 0 ? rest : rest.slice(0, end);
  // A nested select or a case could hide an `=` that is not an assignment: then all columns are assumed.
  if (/\b(select|case)\b/i.test(clause)) return undefined;
  const out: string[] = [];
  for (const m of clause.matchAll(SET_COLUMN)) out.push(m[1] ?? m[2]!);
  return out.length > 0 ? out : undefined;
}

/** One object of the schema as SQLite lists it (`sqlite_master`), with a table's foreign keys. */
export interface SchemaObject {
  type: 'table' | 'view' | 'trigger' | 'index';
  name: string;
  /** The table a trigger or index belongs to. */
  table: string;
  sql: string | null;
  /** For a table: its foreign keys, each naming the parent table and the actions on its delete and update. */
  foreignKeys?: readonly { parent: string; onDelete: string; onUpdate: string }[];
}

interface Trigger {
  op: WriteOp;
  /** `update of` columns; undefined: any update. */
  columns?: readonly string[];
  /** The writes of its body. */
  writes: readonly { table: string; op: WriteOp; columns?: readonly string[] }[];
}

const TRIGGER_HEAD = new RegExp(
  String.raw`\b(?:before|after|instead\s+of)\s+(insert|delete|update)(?:\s+of\s+(.+?))?\s+on\s+${NAME}`,
  'i',
);

/** The tables, views and write closures of one schema. */
export class SchemaGraph {
  /** Every table, view and virtual table, by lower-cased name. */
  private readonly relations = new Map<string, string>();
  private readonly views = new Map<string, readonly string[]>();
  private readonly triggers = new Map<string, Trigger[]>();
  /** Child tables whose rows change when a parent row is deleted (cascade, set null, set default). */
  private readonly onDelete = new Map<string, Set<string>>();
  private readonly onUpdate = new Map<string, Set<string>>();

  constructor(objects: readonly SchemaObject[]) {
    for (const o of objects)
      if (o.type === 'table' || o.type === 'view') this.relations.set(o.name.toLowerCase(), o.name);
    for (const o of objects) {
      if (o.type === 'view') this.views.set(o.name, this.namesIn(o.sql ?? ''));
      if (o.type === 'trigger' && o.sql) this.addTrigger(o.table, o.sql);
      for (const fk of o.foreignKeys ?? []) {
        if (changesChild(fk.onDelete)) add(this.onDelete, fk.parent, o.name);
        if (changesChild(fk.onUpdate)) add(this.onUpdate, fk.parent, o.name);
      }
    }
  }

  private addTrigger(table: string, sql: string): void {
    const head = TRIGGER_HEAD.exec(sql);
    const begin = sql.search(/\bbegin\b/i);
    if (!head || begin < 0) return;
    const columns = head[2]?.split(',').map((c) => c.trim().replace(/^"|"$/g, ''));
    const body = sql.slice(begin + 5).split(';');
    const writes = body.flatMap((s) => {
      const w = firstWrite(s);
      return w ? [w] : [];
    });
    const t: Trigger = { op: head[1]!.toLowerCase() as WriteOp, ...(columns && { columns }), writes };
    const list = this.triggers.get(table) ?? [];
    list.push(t);
    this.triggers.set(table, list);
  }

  /** Every table or view named in `sql` (views expanded to what they read), as the schema spells them. */
  readsOf(sql: string): string[] {
    const out = new Set<string>();
    for (const name of this.namesIn(sql)) {
      out.add(name);
      for (const t of this.views.get(name) ?? []) out.add(t);
    }
    return [...out];
  }

  private namesIn(sql: string): string[] {
    const out = new Set<string>();
    for (const m of sql.matchAll(/"([^"]+)"|\b(\w+)\b/g)) {
      const name = this.relations.get((m[1] ?? m[2]!).toLowerCase());
      if (name) out.add(name);
    }
    return [...out];
  }

  /**
   * Every table a write of `table` may change: the table itself, the tables its triggers write and the child
   * tables its foreign keys cascade to, transitively. `columns`: the columns an update sets (undefined: any).
   */
  writeClosure(table: string, op: WriteOp, columns?: readonly string[]): string[] {
    const out = new Set<string>();
    const seen = new Set<string>();
    const visit = (t: string, o: WriteOp, cols: readonly string[] | undefined): void => {
      const key = `${t}\u0000${o}\u0000${cols?.join(',') ?? '*'}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.add(t);
      for (const tr of this.triggers.get(t) ?? []) {
        if (tr.op !== o) continue;
        if (o === 'update' && tr.columns && cols && !cols.some((c) => tr.columns!.includes(c))) continue;
        for (const w of tr.writes) visit(w.table, w.op, w.columns);
      }
      // A parent's delete deletes (cascade) or updates (set null/default) the children: both fire their triggers.
      if (o === 'delete') {
        for (const child of this.onDelete.get(t) ?? []) {
          visit(child, 'delete', undefined);
          visit(child, 'update', undefined);
        }
      }
      if (o === 'update') for (const child of this.onUpdate.get(t) ?? []) visit(child, 'update', undefined);
    };
    visit(table, op, columns);
    return [...out];
  }

  /** Whether `name` is a table or view of this schema. */
  has(name: string): boolean {
    return this.relations.has(name.toLowerCase());
  }
}

const changesChild = (action: string): boolean => /^(cascade|set null|set default)$/i.test(action);

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let s = map.get(key);
  if (!s) map.set(key, (s = new Set()));
  s.add(value);
}
