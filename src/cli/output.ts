/**
 * Output for people (tables fitted to the terminal) and for scripts (`-o json|yaml`: the response body exactly
 * as the API sent it, so scripts see the wire contract and not a CLI-specific shape; `-o id`: one id a line).
 * parity: list tables end with `results: A-B of N` or `results: none`, as `ziti edge list` does
 * (docs/reference-notes.md §11).
 */
import Table from 'cli-table3';
import { type Command, Option } from 'commander';
import { CliError, type CliIo } from './io.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'id'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `-o FORMAT` of every read; `-j, --json` stays as the alias of `-o json`. */
export const outputOption = () =>
  new Option(
    '-o, --output <format>',
    'table (fitted to the terminal width), wide (not fitted), json or yaml (the API answer as sent), id (one id a line)',
  ).choices(OUTPUT_FORMATS as unknown as string[]);

/** The format asked for by `-o` and/or `--json`; both, disagreeing, is a usage error. */
export function formatOf(opts: { output?: string; json?: boolean }): OutputFormat {
  if (opts.json && opts.output !== undefined && opts.output !== 'json')
    throw new CliError(`error: --json and -o ${opts.output} disagree: give one`, 2);
  return opts.json ? 'json' : ((opts.output as OutputFormat | undefined) ?? 'table');
}

/** The terminal width tables are fitted to: the terminal's, else `$COLUMNS`, else none (pipes get whole rows). */
export function widthOf(io: CliIo): number | undefined {
  if (io.columns !== undefined && io.columns > 0) return io.columns;
  const env = Number(io.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : undefined;
}

/**
 * Column widths (padding included) that fit `rows` into `width` characters with their borders: columns that
 * fit their share keep their natural width, the rest share what is left (at least 6 each, so a very narrow
 * terminal still gets a readable, if wider, table). Undefined when the natural widths already fit.
 */
export function fitWidths(rows: readonly (readonly string[])[], width: number): number[] | undefined {
  const n = rows[0]?.length ?? 0;
  if (n === 0) return undefined;
  const natural = Array.from(
    { length: n },
    (_, i) => 2 + Math.max(...rows.map((r) => Math.max(...(r[i] ?? '').split('\n').map((l) => l.length)))),
  );
  const room = width - (n + 1);
  if (natural.reduce((a, b) => a + b, 0) <= room) return undefined;
  const out = new Array<number>(n).fill(0);
  let left = room;
  const order = natural.map((w, i) => [w, i] as const).sort((a, b) => a[0] - b[0]);
  order.forEach(([w, i], k) => {
    const share = Math.floor(left / (n - k));
    out[i] = Math.max(6, Math.min(w, share));
    left -= out[i]!;
  });
  return out;
}

export async function printYaml(io: CliIo, body: unknown): Promise<void> {
  // Loaded only when asked for: start-up time matters (test/cli/cli-startup.test.ts).
  const { stringify } = await import('yaml');
  io.out(stringify(body).trimEnd());
}

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
  return Object.fromEntries(
    Object.entries(v as Rec)
      .filter(([k]) => k !== '_links')
      .map(([k, x]) => [k, withoutLinks(x)]),
  );
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

export function renderTable(columns: readonly Column[], rows: readonly Rec[], width?: number): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.value(r))));
  const colWidths = width === undefined ? undefined : fitWidths([columns.map((c) => c.header), ...cells], width);
  const table = new Table({
    head: columns.map((c) => c.header),
    style: PLAIN,
    ...(colWidths ? { colWidths, wordWrap: true, wrapOnWordBoundary: false } : {}),
  });
  for (const r of cells) table.push(r);
  return table.toString();
}

export function resultsLine(count: number, p: Pagination | undefined): string {
  if (count === 0) return 'results: none';
  const offset = p?.offset ?? 0;
  return `results: ${offset + 1}-${offset + count} of ${p?.totalCount ?? count}`;
}

export function printList(
  io: CliIo,
  columns: readonly Column[],
  rows: readonly Rec[],
  p: Pagination | undefined,
  width: number | null = widthOf(io) ?? null,
): void {
  // null: not fitted (`-o wide`, pipes).
  if (rows.length > 0) io.out(renderTable(columns, rows, width ?? undefined));
  io.out(resultsLine(rows.length, p));
}

/** A list answer (`{data: [...], meta}`) in the format asked for. */
export async function printListAs(
  io: CliIo,
  format: OutputFormat,
  columns: readonly Column[],
  body: { data?: Rec[]; meta?: { pagination?: unknown } },
): Promise<void> {
  const rows = body.data ?? [];
  if (format === 'json') printJson(io, body);
  else if (format === 'yaml') await printYaml(io, body);
  else if (format === 'id') for (const r of rows) io.out(String(r.id ?? ''));
  else
    printList(
      io,
      columns,
      rows,
      body.meta?.pagination as Pagination | undefined,
      format === 'wide' ? null : (widthOf(io) ?? null),
    );
}

/** A detail answer (`{data: {...}}`) in the format asked for; tables show it as a vertical key/value list. */
export async function printRecordAs(io: CliIo, format: OutputFormat, body: { data?: Rec }): Promise<void> {
  const rec = body.data ?? {};
  if (format === 'json') printJson(io, body);
  else if (format === 'yaml') await printYaml(io, body);
  else if (format === 'id') io.out(String(rec.id ?? ''));
  else printRecord(io, rec, format === 'wide' ? null : (widthOf(io) ?? null));
}

const isRef = (v: Rec) => typeof v.entity === 'string' && typeof v.id === 'string';

/** Nested objects become dotted rows (`primary.updb.maxAttempts`), so no cell holds a wall of JSON. */
function flatten(rec: Rec, prefix: string, out: [string, string][]): [string, string][] {
  for (const [k, v] of Object.entries(rec)) {
    if (k === '_links') continue;
    const key = prefix + k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !isRef(v as Rec) && Object.keys(v).length > 0)
      flatten(v as Rec, `${key}.`, out);
    else out.push([key, cell(v)]);
  }
  return out;
}

/** One record as a two-column table of its fields (links left out: they are for API clients). */
export function printRecord(io: CliIo, rec: Rec, width: number | null = widthOf(io) ?? null): void {
  const rows = flatten(rec, '', []);
  const colWidths = width === null ? undefined : fitWidths(rows, width);
  // No rule between rows: a record has many short fields and reads better dense.
  const table = new Table({
    style: PLAIN,
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    ...(colWidths ? { colWidths, wordWrap: true, wrapOnWordBoundary: false } : {}),
  });
  for (const [k, v] of rows) table.push({ [k]: v });
  io.out(table.toString());
}

/** A format for scripts: the human text of a command is left out and only the answer is printed. */
export const isScriptFormat = (f: OutputFormat): f is 'json' | 'yaml' | 'id' =>
  f === 'json' || f === 'yaml' || f === 'id';

/**
 * `-o FORMAT` of a write or action command (create, update, delete…), `-j, --json` its alias. `-o` is left to the
 * command when it already has its own `-o` (e.g. `ca create -o` for ottca), leaving `--output`.
 */
export function addOutputOptions(cmd: Command): Command {
  const taken = cmd.options.some((o) => o.short === '-o');
  return cmd.addOption(writeOutputOption(taken)).addOption(new Option('-j, --json', 'same as -o json'));
}

/** The `-o FORMAT` option of a write or action command (without `-o` when `shortTaken`). */
export const writeOutputOption = (shortTaken = false) =>
  new Option(
    `${shortTaken ? '' : '-o, '}--output <format>`,
    'table (the usual message), json or yaml (the API answer as sent), id (only the id(s), one a line)',
  ).choices(OUTPUT_FORMATS as unknown as string[]);

/**
 * The answer of a write in a script format: JSON or YAML as the API sent it, or the ids alone, one a line (`ids`
 * default to the answer's `data.id`, or each element's `id` of a list of answers).
 */
export async function printAnswerAs(
  io: CliIo,
  format: 'json' | 'yaml' | 'id',
  body: unknown,
  ids?: readonly string[],
): Promise<void> {
  if (format === 'json') printJson(io, body);
  else if (format === 'yaml') await printYaml(io, body);
  else for (const id of ids ?? idsOf(body)) io.out(id);
}

function idsOf(body: unknown): string[] {
  if (Array.isArray(body)) return body.flatMap(idsOf);
  const data = (body as { data?: unknown } | null)?.data;
  const id = data !== null && typeof data === 'object' ? (data as Rec).id : undefined;
  return typeof id === 'string' ? [id] : [];
}

export function printJson(io: CliIo, body: unknown): void {
  io.out(JSON.stringify(body, null, 2));
}
