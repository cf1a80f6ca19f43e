/**
 * The field table: which symbols a resource exposes to the filter language and where each lives in SQL.
 *
 * Resource definitions (`src/model/resources/*`) produce one of these per entity; the type checker
 * ({@link ./typecheck.ts}) resolves filter symbols against it and the SQL compiler
 * (`src/store/filter-sql.ts`) reads the column/table names from the checked query. The types belong to the
 * store (`src/store/filter-ast.ts`), which must not import the model; they are re-exported here.
 * parity: mirrors the reference store's public symbols (docs/reference-notes.md §1.4, §1.7).
 */

export type { FieldDef, FieldTable, ScalarType } from '../../store/filter-ast.js';
