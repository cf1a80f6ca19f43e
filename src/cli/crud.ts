/**
 * The generic noun-verb commands (`edgectl <noun> list|show|create|update|delete`), built from a resource
 * definition: the verbs come from `def.ops`, the flags from the props each write mode accepts, with their
 * value types read from the props' JSON Schemas. An {@link EntitySpec} adds only what a definition cannot
 * say: the noun, table columns, nicer flag names, references to resolve and create defaults
 * (docs/design.md, Layers). There is deliberately no per-entity CRUD code.
 */
import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { PropDef, ResourceDef } from '../model/resource.js';
import { ApiError, requireApi, type Api } from './api.js';
import { jsonOption } from './options.js';
import { CliError, type CliIo } from './io.js';
import {
  addOutputOptions,
  at,
  formatOf,
  isScriptFormat,
  outputOption,
  printAnswerAs,
  printListAs,
  printRecordAs,
  type Column,
  type Rec,
} from './output.js';
import { resolveId, type ListEnvelope } from './resolve.js';
import { passwordFromStdin, readStdin } from './stdin.js';

/** The members of a prop's JSON Schema that choose its flag's kind (see {@link kindOf}). */
interface SchemaInfo {
  type?: string;
  const?: unknown;
  anyOf?: SchemaInfo[];
  items?: SchemaInfo;
  properties?: Record<string, SchemaInfo>;
}

/**
 * The props that give flags: those create or PATCH accept, and `name` (records are found by it). Read-only and
 * internal props are left out, so a computed field never takes a flag's name.
 */
const cliProps = (def: ResourceDef): [string, PropDef][] =>
  Object.entries(def.props).filter(([name, p]) => p.create || p.patch || name === 'name');

/** How a flag's text becomes a JSON value. */
export type FlagKind = 'string' | 'int' | 'number' | 'bool' | 'list' | 'json' | 'file';

/** What an entity changes about the flag derived for one body path. */
export interface FlagOverride {
  /** Long flag name without dashes (default: the kebab-cased path, e.g. `primary-updb-max-attempts`). */
  name?: string;
  /** One-letter short flag. */
  short?: string;
  description?: string;
  kind?: FlagKind;
  choices?: readonly string[];
  /** The value (or each value of a list) names a record of this resource (id or name): it is resolved to the id before sending. */
  ref?: ResourceDef;
  /**
   * The value is a role list selecting records of this resource (`#attr`, `@id`, `@name`, `#all`): each `@name` is
   * resolved to `@id` before sending, since the API takes ids only (parity: docs/reference-notes.md §11).
   */
  roles?: ResourceDef;
  /** A boolean flag that sets the prop to the opposite (`--no-traversal` sets `noTraversal: true`). */
  invert?: boolean;
  /**
   * A second flag taking the value from a file (JSON or YAML for a `json` flag, text otherwise; `-` for standard
   * input), e.g. `-f, --data-file`.
   */
  fromFile?: { name: string; short?: string };
  /**
   * A flag reading a secret from standard input's first line instead (e.g. `--password-stdin`), so it stays out of
   * the shell history and the process list.
   */
  fromStdin?: string;
  /** No flag for this path (it stays settable through `--data`). */
  hidden?: boolean;
}

export interface EntitySpec {
  def: ResourceDef;
  /** Singular noun of the command, e.g. `identity`. */
  noun: string;
  aliases: readonly string[];
  /** Table columns of `list`. */
  columns: readonly Column[];
  /** The field a record can be named by in `show|update|delete ID|NAME` (default `name` when the resource has one). */
  nameField?: string;
  /** Body paths taken as positional arguments by `create`, in order; `update` keeps them as flags. */
  createArgs?: readonly string[];
  /**
   * Body paths taken as optional positional arguments after {@link createArgs}; `create` keeps their flags too
   * (e.g. `config create NAME TYPE [DATA]` besides `--data JSON`), and giving both is a usage error.
   */
  optionalCreateArgs?: readonly string[];
  /** The body `create` starts from; `--data`, arguments and flags are merged over it. */
  createDefaults?: Rec;
  /** Flag changes keyed by body path (`isAdmin`, `primary.updb.minPasswordLength`). */
  flags?: Readonly<Record<string, FlagOverride>>;
  /** Text after the generated help of `create`. */
  createHelp?: string;
  /**
   * Names of the generic body options (default `--data JSON` and `-f, --file FILE`), for an entity whose own
   * prop takes those names (a config's `--data` is the config's data, as in `ziti edge create config`).
   */
  bodyFlags?: { data: string; file: string };
  /** Generic verbs this entity leaves out (it adds its own instead, e.g. `enrollment create`). */
  omit?: readonly Verb[];
  /** More options of the generic `create`, and what runs after the record is created (e.g. writing a JWT). */
  createExtras?: {
    options(cmd: Command): void;
    /** Checks the options against the body before anything is sent (throw a CliError with exit 2). */
    check?(opts: Rec, body: Rec): void;
    /** Runs after the create; fields it returns are added to the `data` of the `--json` answer (e.g. a JWT). */
    after(ctx: CreatedContext): Promise<Rec | void>;
  };
}

export type Verb = 'list' | 'show' | 'create' | 'update' | 'delete';

/** What {@link EntitySpec.createExtras} gets after a create: the options given, the body sent, the new id. */
export interface CreatedContext {
  api: Api;
  io: CliIo;
  id: string;
  opts: Rec;
  body: Rec;
}

type Mode = 'create' | 'patch';

/** A flag derived for one body path. */
export interface FlagDef {
  path: string;
  name: string;
  short?: string;
  kind: FlagKind;
  choices?: readonly string[];
  ref?: ResourceDef;
  roles?: ResourceDef;
  invert?: boolean;
  fromFile?: { name: string; short?: string };
  fromStdin?: string;
  description: string;
  modes: ReadonlySet<Mode>;
}

const kebab = (path: string): string =>
  path
    .split('.')
    .map((s) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))
    .join('-');

const human = (path: string): string => kebab(path).replace(/-/g, ' ');

/** `an identity`, `a service`. */
export const withArticle = (label: string): string => `${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label}`;

/** The flag kind and choices a JSON Schema implies; `null` branches of a union are ignored. */
function kindOf(schema: SchemaInfo, storage?: PropDef['storage']): { kind: FlagKind; choices?: string[] } {
  const anyOf = schema.anyOf;
  if (anyOf) {
    const branches = anyOf.filter((s) => s.type !== 'null');
    const choices = branches.flatMap((s) => (typeof s.const === 'string' ? [s.const] : []));
    if (branches.length > 0 && choices.length === branches.length) return { kind: 'string', choices };
    if (branches.length === 1) return kindOf(branches[0]!, storage);
    return { kind: 'json' };
  }
  switch (schema.type) {
    case 'boolean':
      return { kind: 'bool' };
    case 'integer':
      return { kind: 'int' };
    case 'number':
      return { kind: 'number' };
    case 'string':
      return { kind: 'string' };
    case 'array':
      return schema.items?.type === 'string' ? { kind: 'list' } : { kind: 'json' };
    case 'object':
      return { kind: 'json' };
  }
  if (storage === 'set') return { kind: 'list' };
  if (storage === 'bool') return { kind: 'bool' };
  if (storage === 'int') return { kind: 'int' };
  if (storage === 'json') return { kind: 'json' };
  return { kind: 'string' };
}

const objectProps = (schema: SchemaInfo): Record<string, SchemaInfo> | undefined => {
  const props = schema.type === 'object' ? schema.properties : undefined;
  return props && Object.keys(props).length > 0 ? props : undefined;
};

const KIND_HINT: Record<FlagKind, string> = {
  string: '',
  int: '',
  number: '',
  bool: '',
  list: 'comma-separated; repeatable',
  json: 'JSON',
  file: '',
};

/** Flags every write verb has; derived flags must not take these names. */
const RESERVED: ReadonlySet<string> = new Set(['data', 'file', 'tags', 'json', 'output', 'help']);

/**
 * The write flags of an entity: one per prop accepted on create or PATCH, plus one per leaf of a nested
 * object prop (so `primary.updb.minPasswordLength` gets `--updb-min-password-length` besides `--primary JSON`).
 * A leaf is named by its path below the prop, unless that name is taken, then by its full path.
 */
export function deriveFlags(spec: EntitySpec): FlagDef[] {
  const out: FlagDef[] = [];
  const taken = (name: string) =>
    RESERVED.has(name) || out.some((f) => f.name === name) || cliProps(spec.def).some(([p]) => kebab(p) === name);
  const defaultName = (path: string) => {
    const below = path.split('.').slice(1).join('.');
    return below && !taken(kebab(below)) ? kebab(below) : kebab(path);
  };
  const add = (path: string, schema: SchemaInfo, storage: PropDef['storage'] | undefined, modes: Set<Mode>) => {
    const o = spec.flags?.[path] ?? {};
    const leaves = objectProps(schema);
    // Nested objects get flags for their leaves only; a JSON flag for the whole prop is enough above them.
    if (!o.hidden && !(leaves && path.includes('.'))) {
      const k = kindOf(schema, storage);
      const kind = o.kind ?? k.kind;
      const choices = o.choices ?? k.choices;
      const hint = [
        choices ? '' : KIND_HINT[kind],
        o.ref ? `id or name of ${withArticle(o.ref.label)}` : '',
        o.roles ? `#attribute, #all, @id or @name of ${withArticle(o.roles.label)}` : '',
      ]
        .filter(Boolean)
        .join('; ');
      out.push({
        path,
        name: o.name ?? defaultName(path),
        short: o.short,
        kind,
        choices,
        ref: o.ref,
        roles: o.roles,
        invert: o.invert,
        fromFile: o.fromFile,
        fromStdin: o.fromStdin,
        description: (o.description ?? human(path)) + (hint ? ` (${hint})` : ''),
        modes,
      });
    }
    if (leaves) for (const [k, s] of Object.entries(leaves)) add(`${path}.${k}`, s, undefined, modes);
  };
  for (const [prop, p] of cliProps(spec.def)) {
    const modes = new Set<Mode>();
    if (p.create) modes.add('create');
    if (p.patch) modes.add('patch');
    if (modes.size > 0) add(prop, p.schema as SchemaInfo, p.storage, modes);
  }
  return out;
}

/** Parses one flag value by kind; a bad value is a usage error (exit 2). */
function parseValue(kind: FlagKind, raw: string, previous: unknown): unknown {
  switch (kind) {
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) throw new InvalidArgumentError('expected an integer');
      return Number(raw);
    }
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n)) throw new InvalidArgumentError('expected a number');
      return n;
    }
    case 'list': {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      return [...((previous as string[] | undefined) ?? []), ...items];
    }
    case 'json':
      try {
        return JSON.parse(raw);
      } catch (e) {
        throw new InvalidArgumentError(`expected JSON: ${(e as Error).message}`);
      }
    case 'file':
      try {
        return readFileSync(raw, 'utf8');
      } catch (e) {
        throw new InvalidArgumentError(`cannot read ${raw}: ${(e as Error).message}`);
      }
    default:
      return raw;
  }
}

/** `--tags k=v` (comma-separated, repeatable) into the `tags` map. */
function parseTags(raw: string, previous: Rec | undefined): Rec {
  const out: Rec = { ...previous };
  for (const pair of raw.split(',').filter((s) => s.trim() !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InvalidArgumentError(`expected key=value, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return out;
}

/**
 * A document: JSON, or else YAML (a superset people write by hand; loaded only when needed, as start-up time
 * matters).
 */
async function parseAnyDocument(text: string, what: string): Promise<unknown> {
  let v: unknown;
  // Text that opens like JSON is judged as JSON, so its error is the one that helps; anything else as YAML.
  if (/^\s*[[{]/.test(text)) {
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new CliError(`error: ${what} is not valid JSON: ${(e as Error).message.split('\n')[0]}`, 2);
    }
  } else {
    const { parse } = await import('yaml');
    try {
      v = parse(text);
    } catch (e) {
      throw new CliError(`error: ${what} is not valid YAML: ${(e as Error).message.split('\n')[0]}`, 2);
    }
  }
  return v;
}

/** A request body document (JSON or YAML): must be one object. */
async function parseDocument(text: string, what: string): Promise<Rec> {
  const v = await parseAnyDocument(text, what);
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new CliError(`error: ${what} must hold one JSON or YAML object`, 2);
  return v as Rec;
}

function parseJsonObject(text: string, what: string): Rec {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CliError(`error: ${what} is not JSON: ${(e as Error).message}`, 2);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new CliError(`error: ${what} must be a JSON object`, 2);
  return v as Rec;
}

const isPlainObject = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Merges `src` into `dst` object by object; arrays and scalars replace. */
function deepMerge(dst: Rec, src: Rec): Rec {
  for (const [k, v] of Object.entries(src)) {
    dst[k] = isPlainObject(v) && isPlainObject(dst[k]) ? deepMerge({ ...(dst[k] as Rec) }, v) : v;
  }
  return dst;
}

function setPath(body: Rec, path: string, value: unknown): void {
  const segs = path.split('.');
  let cur = body;
  for (const seg of segs.slice(0, -1)) {
    if (!isPlainObject(cur[seg])) cur[seg] = {};
    cur = cur[seg] as Rec;
  }
  cur[segs[segs.length - 1]!] = value;
}

const PLACEHOLDER: Record<FlagKind, string> = {
  string: 'value',
  int: 'n',
  number: 'n',
  bool: '',
  list: 'a,b',
  json: 'json',
  file: 'file',
};

/** Adds the option(s) of one flag; returns the attribute names of the flag and of its file and stdin variants. */
function addFlag(cmd: Command, f: FlagDef): { attr: string; fileAttr?: string; stdinAttr?: string } {
  const long = `--${f.name}`;
  const flags = (f.short ? `-${f.short}, ` : '') + long + (f.kind === 'bool' ? '' : ` <${PLACEHOLDER[f.kind]}>`);
  const opt = new Option(flags, f.description);
  if (f.choices) opt.choices(f.choices as string[]);
  else if (f.kind !== 'bool' && f.kind !== 'string')
    opt.argParser((raw: string, prev: unknown) => parseValue(f.kind, raw, prev));
  cmd.addOption(opt);
  if (f.kind === 'bool')
    cmd.addOption(new Option(`--no-${f.name}`, `set ${human(f.path)} to ${f.invert ? 'true' : 'false'}`));
  let fileAttr: string | undefined;
  if (f.fromFile) {
    const what = f.kind === 'json' ? 'a JSON or YAML file' : 'a file';
    // Read (and parsed) when the body is built: standard input can only be read asynchronously.
    const fileOpt = new Option(
      `${f.fromFile.short ? `-${f.fromFile.short}, ` : ''}--${f.fromFile.name} <file>`,
      `${human(f.path)} from ${what}, - for standard input (instead of --${f.name})`,
    );
    cmd.addOption(fileOpt);
    fileAttr = fileOpt.attributeName();
  }
  let stdinAttr: string | undefined;
  if (f.fromStdin) {
    const stdinOpt = new Option(
      `--${f.fromStdin}`,
      `read the ${human(f.path)} from standard input (first line) instead of --${f.name}`,
    );
    cmd.addOption(stdinOpt);
    stdinAttr = stdinOpt.attributeName();
  }
  return { attr: opt.attributeName(), fileAttr, stdinAttr };
}

/** `Dial` for `dial`: an argument with choices, matched case-insensitively; anything else is a usage error. */
function choose(f: FlagDef, raw: string): string {
  if (!f.choices) return raw;
  const hit = f.choices.find((c) => c.toLowerCase() === raw.toLowerCase());
  if (hit === undefined) throw new InvalidArgumentError(`expected one of ${f.choices.join(', ')}`);
  return hit;
}

/**
 * A role list with every `@name` replaced by `@id` of the record of `def` it names (an `@id` stays as it is:
 * ids are tried first). A collection the controller cannot list (yet) is left to the server to check.
 */
export async function resolveRoles(
  api: Api,
  def: ResourceDef,
  roles: readonly string[],
  flag: string,
): Promise<string[]> {
  if (!def.ops.list) return [...roles];
  return Promise.all(
    roles.map(async (role) => {
      if (!role.startsWith('@') || role.length < 2) return role;
      try {
        return `@${await resolveId(api, def, role.slice(1))}`;
      } catch (e) {
        if (e instanceof CliError && !(e instanceof ApiError))
          throw new CliError(`${e.message} (in ${flag} ${role})`, e.exitCode);
        throw e;
      }
    }),
  );
}

/** A file's text, or standard input's for `-`; an unreadable file is a usage error. */
async function readText(io: CliIo, file: string, flag: string): Promise<string> {
  try {
    return file === '-' ? await readStdin(io, `${flag} -`) : readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`error: cannot read ${file}: ${(e as Error).message}`, 2);
  }
}

const nameOf = (file: string) => (file === '-' ? 'standard input' : file);

interface WriteOptions extends Rec {
  data?: string;
  file?: string;
  tags?: Rec;
  json?: boolean;
  output?: string;
}

/** Adds the body options of one write mode and returns a builder of the request body from parsed options. */
function writeOptions(
  cmd: Command,
  io: CliIo,
  spec: EntitySpec,
  mode: Mode,
  positional: readonly FlagDef[],
  optionalPositional: readonly FlagDef[] = [],
) {
  const modeFlags = deriveFlags(spec).filter((f) => f.modes.has(mode));
  const flags = modeFlags.filter(
    (f) => !positional.some((p) => p.path === f.path) || optionalPositional.some((p) => p.path === f.path),
  );
  const attrs = flags.map((f) => ({ f, ...addFlag(cmd, f) }));
  const dataFlag = spec.bodyFlags?.data ?? 'data';
  const bodyData = new Option(`--${dataFlag} <json>`, 'request body fields as a JSON object; flags override it');
  const bodyFile = new Option(
    spec.bodyFlags ? `--${spec.bodyFlags.file} <file>` : '-f, --file <file>',
    `read request body fields from a JSON or YAML file (- for standard input); --${dataFlag} and flags override it`,
  );
  cmd
    .option('--tags <key=value>', 'tags (comma-separated; repeatable)', (raw: string, prev: Rec | undefined) =>
      parseTags(raw, prev),
    )
    .addOption(bodyData)
    .addOption(bodyFile);
  addOutputOptions(cmd);
  // Shallower paths first, so `--primary JSON` is applied before `--primary-updb-max-attempts`.
  attrs.sort((a, b) => a.f.path.split('.').length - b.f.path.split('.').length);

  return async (api: Api, opts: WriteOptions, args: readonly string[]): Promise<Rec> => {
    let body: Rec = mode === 'create' && spec.createDefaults ? structuredClone(spec.createDefaults) : {};
    const fileName = opts[bodyFile.attributeName()] as string | undefined;
    const dataText = opts[bodyData.attributeName()] as string | undefined;
    // Standard input can be read once: one option may take it.
    const stdinUsers = [
      ...(fileName === '-' ? [bodyFile.long!] : []),
      ...attrs
        .filter((a) => a.fileAttr !== undefined && opts[a.fileAttr] === '-')
        .map((a) => `--${a.f.fromFile!.name}`),
      ...attrs.filter((a) => a.stdinAttr !== undefined && opts[a.stdinAttr] === true).map((a) => `--${a.f.fromStdin}`),
    ];
    if (stdinUsers.length > 1)
      throw new CliError(`error: only one option can read standard input (-): ${stdinUsers.join(', ')}`, 2);
    if (fileName !== undefined)
      body = deepMerge(body, await parseDocument(await readText(io, fileName, bodyFile.long!), nameOf(fileName)));
    if (dataText !== undefined) body = deepMerge(body, parseJsonObject(dataText, `--${dataFlag}`));
    const resolve = async (f: FlagDef, v: unknown) => {
      if (!f.ref) return v;
      if (typeof v === 'string') return resolveId(api, f.ref, v);
      if (Array.isArray(v)) return Promise.all(v.map((x) => (typeof x === 'string' ? resolveId(api, f.ref!, x) : x)));
      return v;
    };
    const fromArgs = new Set<string>();
    for (const [i, f] of positional.entries()) {
      if (args[i] === undefined) continue; // an optional argument not given
      fromArgs.add(f.path);
      let v: unknown;
      try {
        v = parseValue(f.kind, choose(f, args[i]!), undefined);
      } catch (e) {
        // Commander reports option values it parses; an argument parsed here needs its own message.
        throw new CliError(`error: argument ${f.name}: ${(e as Error).message}`, 2);
      }
      setPath(body, f.path, await resolve(f, v));
    }
    for (const { f, attr, fileAttr, stdinAttr } of attrs) {
      let v = opts[attr];
      if (stdinAttr !== undefined && opts[stdinAttr] === true) {
        if (v !== undefined) throw new CliError(`error: give --${f.name} or --${f.fromStdin}, not both`, 2);
        v = await passwordFromStdin(io, `--${f.fromStdin}`);
      }
      const file = fileAttr !== undefined ? (opts[fileAttr] as string | undefined) : undefined;
      let fromFile: unknown;
      if (file !== undefined) {
        const text = await readText(io, file, `--${f.fromFile!.name}`);
        fromFile = f.kind === 'json' ? await parseAnyDocument(text, nameOf(file)) : text;
      }
      if (v !== undefined && fromFile !== undefined)
        throw new CliError(`error: give --${f.name} or --${f.fromFile!.name}, not both`, 2);
      v ??= fromFile;
      if (v === undefined) continue;
      if (fromArgs.has(f.path))
        throw new CliError(
          `error: give ${f.name.toUpperCase()} as an argument or with --${f.name}${f.fromFile ? `/--${f.fromFile.name}` : ''}, not both`,
          2,
        );
      if (f.invert && typeof v === 'boolean') v = !v;
      setPath(body, f.path, await resolve(f, v));
    }
    // `@name` → `@id` in role lists, wherever they came from (flags, --data or a file).
    for (const f of modeFlags) {
      const roles = f.roles ? at(body, f.path) : undefined;
      if (Array.isArray(roles))
        setPath(body, f.path, await resolveRoles(api, f.roles!, roles as string[], `--${f.name}`));
    }
    if (opts.tags) body.tags = { ...(isPlainObject(body.tags) ? body.tags : {}), ...opts.tags };
    return body;
  };
}

export interface ListOptions {
  filter?: string;
  limit?: number;
  offset?: number;
  json?: boolean;
  output?: string;
}

/** The options of a paged listing: `--filter`, `--limit`, `--offset`, `-o FORMAT` (`--json`). */
export function listOptions(cmd: Command): Command {
  return cmd
    .option('--filter <filter>', 'filter expression (instead of the argument)')
    .option('--limit <n>', 'page size (the server caps it at 500)', (raw) => parseValue('int', raw, undefined))
    .option('--offset <n>', 'records to skip', (raw) => parseValue('int', raw, undefined))
    .addOption(outputOption())
    .addOption(jsonOption());
}

/** GETs one page of the listing at `path` and prints it as a table ending with the results line, or as JSON. */
export async function printPage(
  io: CliIo,
  api: Api,
  path: string,
  columns: readonly Column[],
  filterArg: string | undefined,
  opts: ListOptions,
): Promise<void> {
  if (filterArg !== undefined && opts.filter !== undefined)
    throw new CliError('error: give the filter either as an argument or with --filter, not both', 2);
  const format = formatOf(opts);
  const qs = new URLSearchParams();
  const filter = filterArg ?? opts.filter;
  if (filter !== undefined) qs.set('filter', filter);
  if (opts.limit !== undefined) qs.set('limit', String(opts.limit));
  if (opts.offset !== undefined) qs.set('offset', String(opts.offset));
  const q = qs.toString();
  const body = await withFilterHint(api, path, () =>
    api.call<ListEnvelope>('GET', `${path}${q ? `${path.includes('?') ? '&' : '?'}${q}` : ''}`),
  );
  await printListAs(io, format, columns, body as { data?: Rec[] });
}

/** Ids of every record at `path` matching `filter`, page by page. */
async function matching(api: Api, path: string, filter: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ;) {
    const body = await withFilterHint(api, path, () =>
      api.call<ListEnvelope>('GET', `${path}?filter=${encodeURIComponent(filter)}&limit=500&offset=${offset}`),
    );
    const rows = body.data ?? [];
    for (const r of rows) if (typeof r.id === 'string') ids.push(r.id);
    offset += rows.length;
    const total = (body.meta?.pagination as { totalCount?: number } | undefined)?.totalCount ?? 0;
    if (rows.length === 0 || offset >= total) return ids;
  }
}

/** Several deletes go ahead only after a yes: asked on a terminal, `--yes` otherwise. */
async function confirmDelete(io: CliIo, label: string, ids: readonly string[], yes: boolean): Promise<void> {
  if (yes) return;
  if (!io.isTTY)
    throw new CliError(`error: this deletes ${ids.length} ${label}(s); pass --yes to confirm without a terminal`, 2);
  const { confirm } = await import('@inquirer/prompts');
  const shown = ids.length > 10 ? `${ids.slice(0, 10).join(', ')}, … (${ids.length - 10} more)` : ids.join(', ');
  if (!(await confirm({ message: `Delete ${ids.length} ${label}(s): ${shown}?`, default: false })))
    throw new CliError('error: nothing deleted', 1);
}

/**
 * An unknown field in a filter gets the fields the listing accepts (its `filterableFields`), so the one
 * misspelt name is fixed without a trip to the docs.
 */
export async function withFilterHint<T>(api: Api, path: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (!(e instanceof ApiError) || !/unknown symbol/.test(e.message)) throw e;
    let fields: unknown;
    try {
      fields = (await api.call<ListEnvelope>('GET', `${path}${path.includes('?') ? '&' : '?'}limit=1`)).meta
        ?.filterableFields;
    } catch {
      throw e;
    }
    if (!Array.isArray(fields) || fields.length === 0) throw e;
    throw new CliError(`${e.message}\nfilterable fields: ${[...fields].map(String).sort().join(', ')}`, e.exitCode);
  }
}

/** The field a record of this entity can be named by, if any. */
const nameFieldOf = (spec: EntitySpec): string | undefined =>
  spec.nameField ?? ('name' in spec.def.props ? 'name' : undefined);

/** `ID|NAME` → id for this entity. */
const idOf = (api: Api, spec: EntitySpec, idOrName: string) => resolveId(api, spec.def, idOrName, nameFieldOf(spec));

/** Registers `<noun>` with the verbs its resource definition serves. */
export function registerEntity(program: Command, io: CliIo, spec: EntitySpec): Command {
  const { def } = spec;
  const noun = program.command(spec.noun).description(`manage ${def.name} (Management API /${def.name})`);
  for (const a of spec.aliases) noun.alias(a);
  const nameField = nameFieldOf(spec);
  const ref = nameField ? `ID|${nameField.toUpperCase()}` : 'ID';
  const refHelp = `the ${def.label}'s id${nameField ? ` or ${nameField}` : ''}`;

  const serves = (verb: Verb, op: string | undefined) => op !== undefined && !spec.omit?.includes(verb);

  if (serves('list', def.ops.list)) {
    const cmd = noun
      .command('list')
      .alias('ls')
      .description(`list ${def.name}, optionally filtered (ZitiQL, e.g. 'name contains "a" sort by name limit 5')`)
      .argument('[filter]', 'filter expression')
      .addHelpText(
        'after',
        `\nExamples:\n  edgectl ${spec.noun} list\n  edgectl ${spec.noun} list 'name contains "a" sort by name limit 5' -o wide\n  edgectl ${spec.noun} list -o id | xargs edgectl ${spec.noun} delete --yes`,
      );
    listOptions(cmd).action(async (filterArg: string | undefined, opts: ListOptions) => {
      await printPage(io, requireApi(io), `/${def.name}`, spec.columns, filterArg, opts);
    });
  }

  if (serves('show', def.ops.detail)) {
    noun
      .command('show')
      .description(`show one ${def.label}`)
      .argument(ref.toLowerCase(), refHelp)
      .addHelpText(
        'after',
        `\nExamples:\n  edgectl ${spec.noun} show ${nameField ? nameField.toUpperCase() : 'ID'}\n  edgectl ${spec.noun} show ID -o yaml`,
      )
      .addOption(outputOption())
      .addOption(jsonOption())
      .action(async (idOrName: string, opts: { json?: boolean; output?: string }) => {
        const format = formatOf(opts);
        const api = requireApi(io);
        const id = await idOf(api, spec, idOrName);
        const body = await api.call<{ data: Rec }>('GET', `/${def.name}/${encodeURIComponent(id)}`);
        await printRecordAs(io, format, body);
      });
  }

  if (serves('create', def.ops.create)) {
    const all = deriveFlags(spec);
    const flagOf = (path: string) => {
      const f = all.find((x) => x.path === path);
      if (!f) throw new Error(`${spec.noun}: create argument ${path} is not a create prop`);
      return f;
    };
    const required = (spec.createArgs ?? []).map(flagOf);
    const optional = (spec.optionalCreateArgs ?? []).map(flagOf);
    const positional = [...required, ...optional];
    const cmd = noun.command('create').description(`create ${withArticle(def.label)}`);
    for (const f of required) cmd.argument(f.name, f.description);
    for (const f of optional) cmd.argument(`[${f.name}]`, `${f.description}; or --${f.name}`);
    const build = writeOptions(cmd, io, spec, 'create', positional, optional);
    spec.createExtras?.options(cmd);
    if (spec.createHelp) cmd.addHelpText('after', spec.createHelp);
    cmd.addHelpText(
      'after',
      `\nExamples:\n  edgectl ${spec.noun} create ${positional.map((f) => f.name.toUpperCase()).join(' ')}${positional.length ? ' ' : ''}--tags team=ops\n  edgectl ${spec.noun} create ${required.map((f) => f.name.toUpperCase()).join(' ')}${required.length ? ' ' : ''}-f ${spec.noun}.yaml    # fields from a YAML or JSON file (- for stdin); flags override them`,
    );
    cmd.action(async (...params: unknown[]) => {
      const args = params.slice(0, positional.length) as string[];
      const opts = params[positional.length] as WriteOptions;
      const format = formatOf(opts);
      const script = isScriptFormat(format) ? format : undefined;
      // The extras print for people unless told `json`: every script format keeps stdout to the answer alone.
      opts.json = script !== undefined;
      const api = requireApi(io);
      const sent = await build(api, opts, args);
      spec.createExtras?.check?.(opts, sent);
      const body = await api.call<{ data: { id: string } }>('POST', `/${def.name}`, sent);
      if (!script) io.out(`created ${def.label} ${body.data.id}`);
      const extra = await spec.createExtras?.after({ api, io, id: body.data.id, opts, body: sent });
      if (script) await printAnswerAs(io, script, extra ? { ...body, data: { ...body.data, ...extra } } : body);
    });
  }

  if (serves('update', def.ops.patch)) {
    const cmd = noun
      .command('update')
      .description(`change the given fields of ${withArticle(def.label)} (PATCH: fields not given keep their values)`)
      .argument(ref.toLowerCase(), refHelp)
      .addHelpText(
        'after',
        `\nExamples:\n  edgectl ${spec.noun} update ID --tags team=ops\n  echo '{"tags": {"team": "ops"}}' | edgectl ${spec.noun} update ID -f -`,
      );
    const build = writeOptions(cmd, io, spec, 'patch', []);
    cmd.action(async (idOrName: string, opts: WriteOptions) => {
      const format = formatOf(opts);
      const api = requireApi(io);
      const body = await build(api, opts, []);
      if (Object.keys(body).length === 0)
        throw new CliError(
          `error: nothing to update: give at least one field (see edgectl ${spec.noun} update --help)`,
          2,
        );
      const id = await idOf(api, spec, idOrName);
      const res = await api.call('PATCH', `/${def.name}/${encodeURIComponent(id)}${def.writePath ?? ''}`, body);
      if (isScriptFormat(format)) await printAnswerAs(io, format, res, [id]);
      else io.out(`updated ${def.label} ${id}`);
    });
  }

  if (serves('delete', def.ops.delete)) {
    const del = noun
      .command('delete')
      .alias('rm')
      .description(
        `delete ${def.name}: one or more by ${nameField ? `id or ${nameField}` : 'id'}, or every match of --filter`,
      )
      .argument(`[${ref.toLowerCase()}...]`, `${refHelp} (several allowed)`)
      .option('--filter <filter>', `delete every ${def.label} this filter matches (instead of ids)`)
      .option('-y, --yes', 'delete several records without asking (required without a terminal)')
      .addHelpText(
        'after',
        `\nExamples:\n  edgectl ${spec.noun} delete ${nameField ? 'NAME' : 'ID'}\n  edgectl ${spec.noun} delete ID1 ID2 --yes\n  edgectl ${spec.noun} delete --filter 'name contains "test-"' --yes`,
      );
    addOutputOptions(del);
    del.action(async (refs: string[], opts: { filter?: string; yes?: boolean; json?: boolean; output?: string }) => {
      const format = formatOf(opts);
      const script = isScriptFormat(format) ? format : undefined;
      if (refs.length > 0 && opts.filter !== undefined) throw new CliError('error: give ids or --filter, not both', 2);
      if (refs.length === 0 && opts.filter === undefined)
        throw new CliError(
          `error: give the ${def.label}s to delete, or --filter (see edgectl ${spec.noun} delete --help)`,
          2,
        );
      const api = requireApi(io);
      const targets =
        opts.filter !== undefined
          ? await matching(api, `/${def.name}`, opts.filter)
          : await Promise.all(refs.map((r) => idOf(api, spec, r)));
      const ids = [...new Set(targets)];
      if (ids.length === 0) {
        // A script reading ids gets none; the note goes to stderr so its stdout stays parseable.
        if (script) io.err(`no ${def.label} matches the filter: nothing deleted`);
        else io.out(`no ${def.label} matches the filter: nothing deleted`);
        return;
      }
      // One named record is deleted as asked; several, or any filter, are confirmed first.
      if (ids.length > 1 || opts.filter !== undefined) await confirmDelete(io, def.label, ids, opts.yes === true);
      const results: unknown[] = [];
      const deleted: string[] = [];
      let failed = 0;
      for (const id of ids) {
        try {
          results.push(await api.call('DELETE', `/${def.name}/${encodeURIComponent(id)}${def.writePath ?? ''}`));
          deleted.push(id);
          if (!script) io.out(`deleted ${def.label} ${id}`);
        } catch (e) {
          if (!(e instanceof CliError) || ids.length === 1) throw e;
          failed++;
          io.err(`${e.message.split('\n')[0]} (${def.label} ${id})`);
        }
      }
      if (script) await printAnswerAs(io, script, ids.length === 1 ? results[0] : results, deleted);
      if (failed > 0) throw new CliError(`error: ${failed} of ${ids.length} deletes failed`, 1);
    });
  }

  return noun;
}

/** The id-or-name argument resolver, for verbs an entity adds beyond CRUD. */
export const resolveEntityId = idOf;
