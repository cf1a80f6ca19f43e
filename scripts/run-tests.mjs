#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner. Node 20's --test does not expand globs, so the file
// list is built here.
//
// The TypeScript is transpiled once per run (esbuild, one call for every file) into a mirror of the repository in a
// temporary dir, and the runner's processes load plain JavaScript. Loading through tsx's module hooks instead costs
// each test process (one per file) about two more seconds of CPU, more than most test files' own work. The mirror
// keeps the layout: each .ts beside its .js (tests that read sources still find them), every other file and
// top-level entry (bin, docs, dist, node_modules, .git, fixtures…) a symlink, so paths relative to a test file
// still lead where they do in the repository; the processes' working directory stays the repository.
// The few files that need the repository itself (IN_PLACE) run through tsx after the others; EDGECTL_TEST_TSX=1
// runs every file that way.
//
// The API tests then run a second time with every test server on PostgreSQL (EDGECTL_TEST_STORE=postgres, one
// database per server, test/harness/pg.ts), but for the files whose subject only SQLite has (SQLITE_ONLY). A
// PostgreSQL that cannot be reached fails the run in CI (`CI` set) and is a skip with its reason elsewhere;
// EDGECTL_TEST_STORES=sqlite (or postgres) runs one pass only.
//
// Usage: node scripts/run-tests.mjs [path-prefix ...]   (e.g. test/unit, test/api/identity)
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
  });
const prefixes = process.argv.slice(2);
const files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => prefixes.length === 0 || prefixes.some((p) => f.startsWith(p)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

/** The directories whose TypeScript is transpiled; tests import from all of them. */
const COMPILED = ['src', 'test', 'bench', 'scripts'];

/** Builds the mirror in `out`; answers nothing, throws if esbuild refuses a file. */
async function transpile(out) {
  const entries = [];
  const mirror = (rel) => {
    mkdirSync(join(out, rel), { recursive: true });
    for (const name of readdirSync(join(root, rel))) {
      const r = join(rel, name);
      if (statSync(join(root, r)).isDirectory()) mirror(r);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
        copyFileSync(join(root, r), join(out, r));
        entries.push(join(root, r));
      } else symlinkSync(join(root, r), join(out, r));
    }
  };
  for (const name of readdirSync(root)) {
    if (COMPILED.includes(name)) mirror(name);
    else symlinkSync(join(root, name), join(out, name));
  }
  const { build } = await import('esbuild');
  await build({
    entryPoints: entries,
    outdir: out,
    outbase: root,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
  });
}

/**
 * Test files that need the repository itself, not the mirror: `npm pack` does not follow the mirror's symlinks
 * (it would pack nothing). They run through tsx, in place, after the others.
 */
const IN_PLACE = new Set(['test/cli/package.test.ts']);

/** API test files whose subject exists on SQLite only, with the reason; every other API file runs on both. */
const SQLITE_ONLY = new Map([
  ['test/api/write-ahead-log-stays-bounded.test.ts', 'the write-ahead log and its checkpoints are SQLite’s'],
]);

const stores = (process.env.EDGECTL_TEST_STORES ?? 'sqlite,postgres').split(',');
const onPostgres = stores.includes('postgres')
  ? files.filter((f) => f.startsWith('test/api/') && !SQLITE_ONLY.has(f))
  : [];

/** Whether the PostgreSQL server the tests use answers (test/harness/pg.ts's default, or EDGECTL_TEST_PG). */
async function postgresReachable() {
  const { default: pg } = await import('pg');
  const c = new pg.Client({
    connectionString: process.env.EDGECTL_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test',
    connectionTimeoutMillis: 5000,
  });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch (e) {
    return e.message;
  } finally {
    await c.end().catch(() => {});
  }
}

const useTsx = process.env.EDGECTL_TEST_TSX === '1';
const transpiled = !stores.includes('sqlite') ? [] : useTsx ? [] : files.filter((f) => !IN_PLACE.has(f));
const inPlace = !stores.includes('sqlite') ? [] : useTsx ? files : files.filter((f) => IN_PLACE.has(f));
let mirrorDir;
if (transpiled.length > 0 || onPostgres.length > 0) {
  mirrorDir = mkdtempSync(join(tmpdir(), 'edgectl-tests-'));
  try {
    await transpile(mirrorDir);
  } catch (e) {
    rmSync(mirrorDir, { recursive: true, force: true });
    throw e;
  }
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
let current;
/** One `node --test` run over `testFiles` with `loader` flags; resolves its exit code. */
const runTests = (loader, testFiles, env = {}) =>
  new Promise((resolve) => {
    current = spawn(
      process.execPath,
      [...loader, '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...testFiles],
      {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, EDGECTL_LOG_LEVEL: process.env.EDGECTL_LOG_LEVEL ?? 'silent', ...env },
      },
    );
    current.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
// The runner's own interruption ends the tests first; the mirror goes once they are gone.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    interrupted = true;
    current?.kill(signal);
  });
let failed = false;
try {
  if (transpiled.length > 0) {
    const js = transpiled.map((f) => join(mirrorDir, f.replace(/\.ts$/, '.js')));
    failed = (await runTests(['--enable-source-maps'], js)) !== 0;
  }
  if (inPlace.length > 0 && !interrupted) failed = (await runTests(['--import', 'tsx'], inPlace)) !== 0 || failed;
  if (onPostgres.length > 0 && !interrupted) {
    const reachable = await postgresReachable();
    if (reachable === true) {
      console.log(`\n# The API tests again, on PostgreSQL (${onPostgres.length} files)\n`);
      const js = onPostgres.map((f) => join(mirrorDir, f.replace(/\.ts$/, '.js')));
      failed = (await runTests(['--enable-source-maps'], js, { EDGECTL_TEST_STORE: 'postgres' })) !== 0 || failed;
    } else if (process.env.CI) {
      console.error(`\n# FAILED: PostgreSQL is not reachable (${reachable}); CI runs the API tests on it too`);
      failed = true;
    } else {
      console.log(`\n# SKIPPED: the API tests on PostgreSQL: it is not reachable (${reachable}); set EDGECTL_TEST_PG`);
    }
  }
} finally {
  if (mirrorDir) rmSync(mirrorDir, { recursive: true, force: true });
}
process.exit(failed || interrupted ? 1 : 0);
