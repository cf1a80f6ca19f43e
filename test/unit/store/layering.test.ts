/**
 * The store alone speaks SQL (docs/design.md, "Store"): files under src/model and src/daemon neither import
 * kysely nor call the query builder, src/store imports nothing from src/model, and no module imports itself
 * back through others, by any kind of import (ESLint checks the directions between layers).
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

/**
 * Every relative import of a source file, as `.ts` paths: static and side-effect imports, re-exports, the
 * type-only forms of both (a type circle still ties the modules together: neither can be understood, moved or
 * split alone) and dynamic `import('…')` calls (a lazy import hides a circle, it does not remove it). Comments
 * are left out, since they quote imports.
 */
function importsOf(text: string, file: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const re =
    /\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const m of code.matchAll(re)) {
    out.push(relative(root, join(root, file, '..', (m[1] ?? m[2])!.replace(/\.js$/, '.ts'))));
  }
  return out;
}

/** The import circles among `files` (relative paths), each as the chain of files that closes it. */
function cyclesAmong(files: string[], read: (file: string) => string): string[] {
  const known = new Set(files);
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of importsOf(read(file), file)) if (known.has(next)) visit(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const f of files) visit(f, []);
  return cycles;
}

test('no import circles among the source modules, counting type-only and dynamic imports', () => {
  assert.deepEqual(cyclesAmong(walk(join(root, 'src')), source), [], 'break these import circles');
});

test('the circle check sees every kind of import', () => {
  const circle = (a: string, b: string) =>
    cyclesAmong(['src/a.ts', 'src/b.ts'], (f) => (f === 'src/a.ts' ? a : b)).length > 0;
  const back = "import { a } from './a.js';";
  assert.equal(circle("import { b } from './b.js';", back), true, 'static import');
  assert.equal(circle("import type { B } from './b.js';", back), true, 'type-only import');
  assert.equal(circle("import {\n  type B,\n  c,\n} from './b.js';", back), true, 'multi-line import');
  assert.equal(circle("export type { B } from './b.js';", back), true, 'type-only re-export');
  assert.equal(circle("export * from './b.js';", back), true, 're-export');
  assert.equal(circle("import './b.js';", back), true, 'side-effect import');
  assert.equal(circle("const b = await import('./b.js');", back), true, 'dynamic import');
  assert.equal(circle("// import { b } from './b.js';\n/* import('./b.js') */", back), false, 'comments');
  assert.equal(circle("import { c } from './c.js';", back), false, 'no circle');
});
