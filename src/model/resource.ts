/**
 * Resource definitions: one declarative description per entity drives request validation (create, update,
 * patch schemas), the store mapping (columns, link tables for sets), the filterable fields, the rendered
 * record and the OpenAPI documents. A definition is pure data, cheap to import (the CLI reads it on every start):
 * entity-specific behaviour is named hooks the model's services register by resource name (resource-hooks.ts).
 */
import { Type, type TSchema } from './schema-type.js';
import type { WriteMode } from './row.js';
import { writableOf, type PropLists } from './prop-lists.js';
import type { FieldDef, FieldTable } from './filter/fields.js';
import type { StorageKind } from '../store/crud.js';
import { linkTable, linkTableField } from '../store/link-tables.js';
import { searchIndexOf } from '../store/search-index.js';

/**
 * How a property is kept in its table. `set` values live in a link table `<table>_<prop>`. A definition is
 * the store's `StoredTable` as it is (src/store/crud.ts), so the store's generic CRUD takes it directly.
 */
export type Storage = StorageKind;

export interface PropDef {
  /** JSON Schema of a non-null value. */
  schema: TSchema;
  storage: Storage;
  /** Accepted on create (and whether required there). Absent: not accepted. */
  create?: 'required' | 'optional';
  /** Accepted on full update (PUT). Absent: not changeable by PUT. */
  update?: 'required' | 'optional';
  /** Accepted on PATCH (always optional there). */
  patch?: boolean;
  /** null is an accepted value on create/update/patch and is stored as NULL. */
  nullable?: boolean;
  /** Stored when the property is absent on create (and reset to on a PUT that leaves it out). */
  default?: unknown;
  /** Part of the public, filterable fields (parity: docs/reference-notes.md §1.7). */
  filter?: boolean;
  /**
   * `contains`/`icontains` on it read the store's substring index (migration 0012) instead of every row; the
   * store must keep one for this table and column (`searchIndexOf`), else listing the resource fails.
   */
  search?: boolean;
  /** Never rendered (e.g. secrets); still stored. Events leave its values out too, unless `audited`. */
  hidden?: boolean;
  /** A hidden prop that is no secret: events show its values (model/events/entity-change.ts). */
  audited?: boolean;
  /** Rendered as null when empty instead of being left out. */
  renderNull?: boolean;
  /** Accepted in requests but not stored as such (a hook turns it into stored props). */
  virtual?: boolean;
  /** A different schema for PATCH (e.g. nested objects whose members all become optional). */
  patchSchema?: TSchema;
  /**
   * A field of one variant of a body discriminated by another field (a posture check's type fields, by
   * `typeId`): any value passes the body's schema, and the resource's hook checks it against `schema` when the
   * record's variant has the field and ignores it otherwise (clients send every variant's fields, empty).
   */
  variant?: boolean;
}

export type Access = 'anonymous' | 'session' | 'admin';

export type CrudOp = 'list' | 'create' | 'detail' | 'update' | 'patch' | 'delete';

/** A reference from another table that blocks deleting this entity (409 CAN_NOT_DELETE_REFERENCED_ENTITY). */
export interface BlockingRef {
  table: string;
  column: string;
  /** Collection name of the referencing entity, for the error cause. */
  entity: string;
  /** Column naming the referencing entity (default `id`; `ownerId` for set link tables). */
  idColumn?: string;
}

export type { Input, Row, WriteMode } from './row.js';
export type { ResourceHooks } from './ctx.js';

/**
 * A resource definition. `Props` and `Table` are the definition's own (kept by `defineResource`, read by
 * `RecordOf`: resource-record.ts); code that serves any resource uses the plain `ResourceDef`.
 */
export interface ResourceDef<
  Props extends Readonly<Record<string, PropDef>> = Readonly<Record<string, PropDef>>,
  Table extends string = string,
> {
  /** Collection path segment and `_links` prefix, e.g. `identities`. */
  name: string;
  /** Singular label for messages and refs, e.g. `identity`. */
  label: string;
  table: Table;
  props: Props;
  /** Props whose values must be unique: duplicates give a field error `<prop> must be unique`. */
  unique?: string[];
  blockingRefs?: BlockingRef[];
  /** Extra filterable fields that are not plain props (computed or joined). */
  extraFields?: FieldTable;
  /** Extra `_links` of a record besides `self`. */
  links?: (id: string) => Record<string, string>;
  /** Management API operations and their operationIds; absent ops are not served. */
  ops: Partial<Record<CrudOp, string>>;
  /**
   * The sub-path of a record that update, patch and delete take, when the spec puts them there rather than on
   * `/{id}` (controller settings: `/effective`).
   */
  writePath?: `/${string}`;
  /** Access per op (default admin). */
  access?: Partial<Record<CrudOp, Access>>;
  /** Names of the reference's envelopes, for the OpenAPI documents. */
  envelopes?: { list?: string; detail?: string };
  /** The list operation takes `roleFilter`/`roleSemantic` (matched against `roleAttributes`). */
  roleFilter?: boolean;
  /** Schema definition name prefix in the OpenAPI documents (e.g. `identity`). */
  schemaName: string;
  /** `isSystem` is part of the wire record (edge router policies); elsewhere it stays internal. */
  showSystem?: boolean;
  /** Lists every write asks for, worked out once by `defineResource` (prop-lists.ts). */
  readonly lists?: PropLists;
}

/** Base fields every record has; filterable on every entity (parity: §1.7). */
export const BASE_FIELDS: FieldTable = {
  id: { kind: 'scalar', type: 'string', column: 'id' },
  createdAt: { kind: 'scalar', type: 'datetime', column: 'createdAt' },
  updatedAt: { kind: 'scalar', type: 'datetime', column: 'updatedAt' },
  tags: { kind: 'map', column: 'tags' },
  isSystem: { kind: 'scalar', type: 'bool', column: 'isSystem' },
};

/** The stored (non-virtual) props. */
export const storedProps = (def: ResourceDef): [string, PropDef][] =>
  Object.entries(def.props).filter(([, p]) => !p.virtual);

/** Name of the link table holding a set property. */
export const setTable = (def: ResourceDef, prop: string): string => linkTable(def.table, prop);

const STORAGE_TYPE: Record<Exclude<Storage, 'set' | 'json'>, 'string' | 'int' | 'float' | 'bool' | 'datetime'> = {
  text: 'string',
  int: 'int',
  real: 'float',
  bool: 'bool',
  datetime: 'datetime',
};

/** The public filter/sort fields of a resource, derived from its props. */
/** The substring index of a prop marked `search`; a mark without an index in the store is a programming error. */
function searchIndexField(def: ResourceDef, name: string): { searchIndex?: string } {
  if (!def.props[name]?.search) return {};
  const searchIndex = searchIndexOf(def.table, name);
  if (!searchIndex) throw new Error(`${def.name}.${name} is marked search but the store keeps no index for it`);
  return { searchIndex };
}

export function filterFields(def: ResourceDef): FieldTable {
  const out: Record<string, FieldDef> = { ...BASE_FIELDS };
  for (const [name, p] of Object.entries(def.props)) {
    if (!p.filter || p.virtual) continue;
    if (p.storage === 'set') out[name] = linkTableField(def.table, name);
    else if (p.storage === 'json') out[name] = { kind: 'map', column: name };
    else out[name] = { kind: 'scalar', type: STORAGE_TYPE[p.storage], column: name, ...searchIndexField(def, name) };
  }
  return { ...out, ...def.extraFields };
}

/** `tags`: a map of string keys to null, string or boolean values (parity: docs/reference-notes.md §12, the `tags` schema). */
export const TagsSchema = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Boolean(), Type.Null(), Type.Number()]),
);

const nullableOf = (s: TSchema): TSchema => Type.Union([s, Type.Null()]);

const VARIANT_NOTE = "checked when the record's type has this field (see the type's schema); ignored otherwise";

/** The JSON Schema of a request body for one write mode, derived from the props. */
export function bodySchema(def: ResourceDef, mode: WriteMode): TSchema {
  const properties: Record<string, TSchema> = { tags: Type.Optional(nullableOf(TagsSchema)) };
  for (const [name, p] of Object.entries(def.props)) {
    const accepted = mode === 'create' ? p.create : mode === 'update' ? p.update : p.patch ? 'optional' : undefined;
    if (!accepted) continue;
    const base = mode === 'patch' && p.patchSchema ? p.patchSchema : p.schema;
    const checked = p.nullable || mode === 'patch' ? nullableOf(base) : base;
    const schema = p.variant ? Type.Unknown({ description: VARIANT_NOTE }) : checked;
    properties[name] = accepted === 'required' ? schema : Type.Optional(schema);
  }
  // Unknown properties are ignored, as the reference's generated server does.
  return Type.Object(properties, { additionalProperties: true });
}

/** The props a write mode may set (worked out when the definition was made: prop-lists.ts). */
export const writableProps = (def: ResourceDef, mode: WriteMode): readonly string[] =>
  def.lists?.writable[mode] ?? writableOf(def.props, mode);
