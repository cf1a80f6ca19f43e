/**
 * What a PostgreSQL store is given before its first table so that the store's SQL texts run unchanged on it:
 * `pg_trgm` for the name search's trigram indexes, and `json_each(text)` with SQLite's meaning (the elements of
 * a JSON array, as a `value` column), which expands a list of ids bound as one JSON parameter.
 * Frozen with migration 0001: what every PostgreSQL store was created with.
 */
export const PORTABLE_FUNCTIONS: readonly string[] = [
  'create extension if not exists pg_trgm',
  `create function json_each(list text) returns table (value text) language sql immutable strict parallel safe
     as $$ select jsonb_array_elements_text(list::jsonb) $$`,
];
