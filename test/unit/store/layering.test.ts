/**
 * The store alone speaks SQL (docs/design.md, "Store"): files under src/model and src/daemon neither import
 * kysely nor call the query builder, src/store imports nothing from src/model, and no module imports itself
 * back through others at run time (ESLint checks the directions between layers).
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

/** The static relative imports of a source file that remain at run time (not `import type`), as `.ts` paths. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of source(file).matchAll(/^(?:import|export)\s(?!type\s)[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)) {
    out.push(relative(root, join(root, file, '..', m[1]!.replace(/\.js$/, '.ts'))));
  }
  return out;
}

test('no import cycles among the source modules', () => {
  const files = walk(join(root, 'src'));
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of importsOf(file)) visit(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const f of files) visit(f, []);
  assert.deepEqual(cycles, [], 'break these import cycles');
});
