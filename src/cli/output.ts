/**
 * Output for people (tables) and for scripts (`--json`: the response body exactly as the API sent it, so
 * scripts see the wire contract and not a CLI-specific shape). parity: list tables end with
 * `results: A-B of N` or `results: none`, as `ziti edge list` does (docs/reference-notes.md §11).
 */
import Table from 'cli-table3';
import type { CliIo } from './io.js';

export type Rec = Record<string, unknown>;

export interface Column {
  header: string;
  value(rec: Rec): unknown;
}

export interface Pagination {
  limit: number;
  offset: number;
  totalCount: number;
}

/** Drops `_links` at every depth: they matter to API clients, not to people reading a table. */
function withoutLinks(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutLinks);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v as Rec).filter(([k]) => k !== '_links').map(([k, x]) => [k, withoutLinks(x)]));
}

/**
 * A cell as text: lists joined by commas, references to other records as `name (id)`, other objects as
 * compact JSON without links, null and undefined empty.
 */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(cell).join(',');
  if (typeof v === 'object') {
    const r = v as Rec;
    if (isRef(r)) return r.name ? `${cell(r.name)} (${cell(r.id)})` : cell(r.id);
    return JSON.stringify(withoutLinks(v));
  }
  return String(v);
}

/** The value at a dotted path (`authPolicy.name`). */
export function at(rec: unknown, path: string): unknown {
  let cur: unknown = rec;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Rec)[seg];
  }
  return cur;
}

/** A column showing the value at a dotted path. */
export const col = (header: string, path: string): Column => ({ header, value: (r) => at(r, path) });

/** No colours: tables are also read by tests, pipes and screen readers, and cli-table3's defaults add ANSI codes. */
const PLAIN = { head: [] as string[], border: [] as string[] };

export function renderTable(columns: readonly Column[], rows: readonly Rec[]): string {
  const table = new Table({ head: columns.map((c) => c.header), style: PLAIN });
  for (const r of rows) table.push(columns.map((c) => cell(c.value(r))));
  return table.toString();
}

export function resultsLine(count: number, p: Pagination | undefined): string {
  if (count === 0) return 'results: none';
  const offset = p?.offset ?? 0;
  return `results: ${offset + 1}-${offset + count} of ${p?.totalCount ?? count}`;
}

export function printList(io: CliIo, columns: readonly Column[], rows: readonly Rec[], p: Pagination | undefined): void {
  if (rows.length > 0) io.out(renderTable(columns, rows));
  io.out(resultsLine(rows.length, p));
}

const isRef = (v: Rec) => typeof v.entity === 'string' && typeof v.id === 'string';

/** Nested objects become dotted rows (`primary.updb.maxAttempts`), so no cell holds a wall of JSON. */
function flatten(rec: Rec, prefix: string, out: [string, string][]): [string, string][] {
  for (const [k, v] of Object.entries(rec)) {
    if (k === '_links') continue;
    const key = prefix + k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !isRef(v as Rec) && Object.keys(v).length > 0) flatten(v as Rec, `${key}.`, out);
    else out.push([key, cell(v)]);
  }
  return out;
}

/** One record as a two-column table of its fields (links left out: they are for API clients). */
export function printRecord(io: CliIo, rec: Rec): void {
  // No rule between rows: a record has many short fields and reads better dense.
  const table = new Table({ style: PLAIN, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } });
  for (const [k, v] of flatten(rec, '', [])) table.push({ [k]: v });
  io.out(table.toString());
}

export function printJson(io: CliIo, body: unknown): void {
  io.out(JSON.stringify(body, null, 2));
}
