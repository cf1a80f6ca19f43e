/**
 * The field table: which symbols a resource exposes to the filter language and where each lives in SQL.
 *
 * Resource definitions (`src/model/resources/*`) produce one of these per entity; the type checker
 * ({@link ./typecheck.ts}) resolves filter symbols against it and the SQL compiler
 * (`src/store/filter-sql.ts`) reads the column/table names from it.
 * parity: mirrors the reference store's public symbols (docs/reference-notes.md §1.4, §1.7).
 */

/** Scalar value types a column can hold; the filter's literal conversions follow §1.4. */
export type ScalarType = 'string' | 'int' | 'float' | 'datetime' | 'bool';

export type FieldDef =
  /**
   * A column of the main table. Datetime columns hold ISO-8601 UTC strings with milliseconds
   * ("2026-01-02T03:04:05.678Z"), so string order is instant order; bools are stored as 0/1;
   * any column may be null in a row.
   */
  | {
      kind: 'scalar';
      type: ScalarType;
      column: string;
      /**
       * The column holds SHA-256 of the value (secrets such as tokens, model/tokens.ts): only equality tests
       * work, and the checker hashes their literals.
       */
      hashed?: boolean;
    }
  /** String elements stored as rows of a link table: (ownerColumn = main row's id, valueColumn = element). */
  | { kind: 'set'; table: string; ownerColumn: string; valueColumn: string }
  /** JSON object text column (e.g. tags); `<name>.<key>` addresses one entry; values are null, string, bool or number. */
  | { kind: 'map'; column: string };

/** Public symbols of one entity, keyed by the name used in filters. The main table's id column is always `id`. */
export type FieldTable = Readonly<Record<string, FieldDef>>;
