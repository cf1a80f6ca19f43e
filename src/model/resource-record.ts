/**
 * The record types of resource definitions. `defineResource` keeps a definition's props and table as literal
 * types and checks, at compile time, that the store's table keeps each stored prop as its kind says; `RecordOf`
 * is then the record the generic CRUD reads for it. Types and one small function only (it adds the lists every
 * write asks for: prop-lists.ts): the definitions import this and must stay cheap to load (docs/design.md,
 * "Cheap definitions").
 */
import type { ColumnName, ColumnValue, StorageKind, TableName } from '../store/crud.js';
import type { PropDef, ResourceDef } from './resource.js';
import { propLists } from './prop-lists.js';
import type { Row } from './row.js';

/**
 * Declares a resource definition, keeping its props' and table's literal types so that its records are typed
 * (`RecordOf`); the table must be one of the store's.
 */
export const defineResource = <const Props extends Readonly<Record<string, PropDef>>, const Table extends TableName>(
  def: ResourceDef<Props, Table> & ColumnCheck<Props, Table>,
): ResourceDef<Props, Table> => ({ ...def, lists: propLists(def.props) });

/** How the store keeps each kind (booleans as 0/1, JSON as text: src/store/values.ts; sets in link tables). */
interface KindColumns {
  text: string;
  datetime: string;
  int: number;
  real: number;
  bool: number;
  json: string;
}

/** The stored props the table does not keep as their kind says: no such column, or one of another type. */
type ColumnMismatches<P, T extends TableName> = {
  [K in StoredNames<P>]: P[K] extends { storage: infer S extends StorageKind }
    ? S extends keyof KindColumns
      ? K extends ColumnName<T>
        ? NonNullable<ColumnValue<T, K>> extends KindColumns[S]
          ? never
          : K
        : K
      : `${T}_${K & string}` extends TableName
        ? never
        : K
    : K;
}[StoredNames<P>];

/** Refuses, at compile time, a definition whose stored props do not match its table's columns. */
type ColumnCheck<P, T extends TableName> = {
  [K in ColumnMismatches<P, T> as `no column for prop ${K & string} as declared`]: never;
};

/** What a stored prop's value is in a record, by storage kind (the store's `fromRow`, src/store/crud.ts). */
interface KindValues {
  text: string;
  datetime: string;
  int: number;
  real: number;
  bool: boolean;
  json: unknown;
  set: string[];
}

/** The stored (non-virtual) props' names. */
type StoredNames<P> = { [K in keyof P]: P[K] extends { virtual: true } ? never : K }[keyof P];

/** null when the table's column may hold NULL (the generated store schema), or the table has no such column. */
type NullIn<T extends string, K> = T extends TableName
  ? K extends ColumnName<T>
    ? null extends ColumnValue<T, K>
      ? null
      : never
    : null
  : null;

/** The fields every record has (the store's `fromRow`). */
export type BaseRecord = { id: string; createdAt: string; updatedAt: string; tags: unknown; isSystem: boolean };

/**
 * The record a definition's generic CRUD reads (`getRow`): the base fields and each stored prop, typed by its
 * storage kind, with null where the store's column allows it (sets are never null). A definition whose props
 * are only known as a `Record` (code serving any resource) gives a plain `Row`.
 */
export type RecordOf<D extends ResourceDef> = string extends keyof D['props']
  ? Row
  : BaseRecord & {
      [K in StoredNames<D['props']>]: D['props'][K] extends { storage: infer S extends StorageKind }
        ? KindValues[S] | (S extends 'set' ? never : NullIn<D['table'], K>)
        : never;
    };

/** A record with the fields its resource's `decorate` hook adds (detail and list answers). */
export type Decorated<D extends ResourceDef> = RecordOf<D> & Row;
