/**
 * The one place stored values change shape: booleans are 0/1 integers, JSON values are text. A PostgreSQL
 * dialect would map these to native `boolean`/`jsonb` here and nowhere else.
 */

/** A domain boolean as stored. */
export const boolToDb = (v: unknown): number => (v ? 1 : 0);

/** A stored boolean (0/1, or a driver's native boolean) as a domain boolean. */
export const boolFromDb = (v: unknown): boolean => v === 1 || v === true || v === '1';

/** A domain JSON value as stored (null stays null). */
export const jsonToDb = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));

/** A stored JSON value as a domain value (a driver that already parsed it is passed through). */
export const jsonFromDb = <T = unknown>(v: unknown): T =>
  // The empty object is most stored maps' value (tags, appData…): a fresh one without parsing.
  typeof v === 'string' ? ((v === '{}' ? {} : JSON.parse(v)) as T) : (v as T);

/** A count as a driver returns it (number or bigint, or a numeric string on some dialects) as a number. */
export const countFromDb = (v: unknown): number => Number(v ?? 0);
