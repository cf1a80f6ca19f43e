/**
 * The store alone speaks SQL (docs/design.md, "Store"): files under src/model and src/daemon neither import
 * kysely nor call the query builder, and src/store imports nothing from src/model. Files whose queries have
 * not moved yet are listed here; the list only shrinks, and a new file must not join it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../../', import.meta.url).pathname;
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [relative(root, p)] : [];
  });
const source = (file: string) => readFileSync(join(root, file), 'utf8');

/** Still building SQL outside the store: later slices of the typed-store work move these. */
const SQL_NOT_YET_MOVED = new Set([
  'src/model/crud.ts',
  'src/model/list-query.ts',
  'src/model/refs.ts',
  'src/model/role-filter.ts',
]);

/** Store modules that still read resource definitions from the model (generic CRUD, the filter compiler). */
const MODEL_IMPORTS_NOT_YET_MOVED = new Set(['src/store/constraints.ts', 'src/store/crud.ts', 'src/store/filter-sql.ts']);

const BUILDS_SQL = /from 'kysely'|\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(/;
const IMPORTS_MODEL = /from '\.\.\/(\.\.\/)*model\//;

test('no file under src/model or src/daemon imports kysely or builds a query', () => {
  const offenders = [...walk(join(root, 'src/model')), ...walk(join(root, 'src/daemon'))].filter(
    (f) => !SQL_NOT_YET_MOVED.has(f) && BUILDS_SQL.test(source(f)),
  );
  assert.deepEqual(offenders, [], 'move these queries into a src/store module');
});

test('no file under src/store imports from src/model', () => {
  const offenders = walk(join(root, 'src/store')).filter((f) => !MODEL_IMPORTS_NOT_YET_MOVED.has(f) && IMPORTS_MODEL.test(source(f)));
  assert.deepEqual(offenders, [], 'the store takes domain values, never model modules');
});
