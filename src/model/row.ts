/**
 * Typed reads of an untyped row (`Row`: what code serving any resource, a request body or a policy kind holds; a
 * definition's own records are typed, `RecordOf` in resource-record.ts). Each checks what the store's column
 * holds (src/store/schema.ts) instead of asserting it, so a wrong column fails loudly.
 */

/** A record as the generic CRUD reads it (rendered props by name). */
export type Row = Record<string, unknown>;
/** The body of a generic write, validated against the definition's schema. */
export type Input = Record<string, unknown>;
export type WriteMode = 'create' | 'update' | 'patch';

/** A not-null text column (ids, references): a string, or an internal error. */
export function textOf(row: Row, key: string): string {
  const v = row[key];
  if (typeof v !== 'string') throw new Error(`column ${key} is not text`);
  return v;
}

/** A list of strings (a `set` prop or a role list), or undefined when absent or not one. */
export function textList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
}

/** A value that should be text (a nullable column, a validated body field), or `fallback` when it is not. */
export const textOr = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);

/** A value that should be a number, or `fallback` when it is not. */
export const numberOr = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);

/** A value that should be a boolean, or `fallback` when it is not. */
export const boolOr = (v: unknown, fallback: boolean): boolean => (typeof v === 'boolean' ? v : fallback);

/**
 * A shallow copy to add keys to, for the objects of every write (a record, a request's context). Not
 * `{ ...o, key }` nor keys added to `{ ...o }`: on the runtime's V8 (Node 20) those cost 4-20 times an
 * `Object.assign` copy (an identity create's input of ~17 props: ~9 µs against ~0.5, measured in a loop). Only
 * for objects whose keys the program chose (a copy by assignment would run a `__proto__` key's setter).
 */
export const copyOf = <T extends object>(o: T): T => Object.assign({}, o);
