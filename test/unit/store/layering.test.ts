/**
 * The store alone speaks SQL (docs/design.md, "Store"): files under src/model and src/daemon neither import
 * kysely nor call the query builder, and src/store imports nothing from src/model.
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

const BUILDS_SQL = /from 'kysely'|\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(/;
const IMPORTS_MODEL = /from '\.\.\/(\.\.\/)*model\//;

test('no file under src/model or src/daemon imports kysely or builds a query', () => {
  const offenders = [...walk(join(root, 'src/model')), ...walk(join(root, 'src/daemon'))].filter((f) =>
    BUILDS_SQL.test(source(f)),
  );
  assert.deepEqual(offenders, [], 'move these queries into a src/store module');
});

test('no file under src/store imports from src/model', () => {
  const offenders = walk(join(root, 'src/store')).filter((f) => IMPORTS_MODEL.test(source(f)));
  assert.deepEqual(offenders, [], 'the store takes domain values, never model modules');
});
