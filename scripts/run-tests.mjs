#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner. Node 20's --test does not expand globs, so the file
// list is built here.
//
// The TypeScript is transpiled once per run (esbuild, one call for every file) into a mirror of the repository in a
// temporary dir, and the runner's processes load plain JavaScript. Loading through tsx's module hooks instead costs
// each test process (one per file) about two more seconds of CPU, more than most test files' own work. The mirror
// keeps the layout: each .ts beside its .js (tests that read sources still find them), every other file and
// top-level entry (bin, docs, dist, node_modules, .git, fixtures…) a symlink, so paths relative to a test file
// still lead where they do in the repository; the processes' working directory stays the repository. A test that
// needs the repository itself (`npm pack` does not follow the links) finds it through package.json's link
// (test/harness/cli.ts, REPOSITORY). EDGECTL_TEST_TSX=1 runs every file in place through tsx instead.
//
// The API tests also run with every test server on PostgreSQL (EDGECTL_TEST_STORE=postgres, one database per
// server, test/harness/pg.ts), but for the files whose subject only SQLite has (SQLITE_ONLY), in processes of their
// own beside the others in the same run. A PostgreSQL that cannot be reached fails the run in CI (`CI` set) and is
// a skip with its reason elsewhere; EDGECTL_TEST_STORES=sqlite (or postgres) runs one pass only.
//
// EDGECTL_TEST_TIMES=FILE records each process's wall and CPU time and each shared file's, and prints the longest
// at the end (scripts/test-times.mjs).
//
// Usage: node scripts/run-tests.mjs [path-prefix ...]   (e.g. test/unit, test/api/identity)
import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
  });
/**
 * The folders whose files take longest, first: they run other processes (a clone's build, the binary, the bench,
 * `edgectl serve`) or wait out timeouts, and started late one of them ran alone at the end while the other core
 * idled. The many short files come last and fill in. Alphabetical within a folder.
 */
const LONG_FIRST = ['test/repo/', 'test/binary/', 'test/bench/', 'test/daemon/', 'test/fuzz/'];
const rank = (f) => {
  const i = LONG_FIRST.findIndex((dir) => f.startsWith(dir));
  return i === -1 ? LONG_FIRST.length : i;
};
const prefixes = process.argv.slice(2);
const files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => prefixes.length === 0 || prefixes.some((p) => f.startsWith(p)))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
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
    // Beside each file rather than inside it: the test processes then parse half the text (about 40 ms each).
    sourcemap: 'linked',
    logLevel: 'error',
  });
}

/** API test files whose subject exists on SQLite only, with the reason; every other API file runs on both. */
const SQLITE_ONLY = new Map([
  ['test/api/write-ahead-log-stays-bounded.test.ts', 'the write-ahead log and its checkpoints are SQLite’s'],
]);

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

let failed = false;
const stores = (process.env.EDGECTL_TEST_STORES ?? 'sqlite,postgres').split(',');
const onSqlite = stores.includes('sqlite') ? files : [];
let onPostgres = stores.includes('postgres')
  ? files.filter((f) => f.startsWith('test/api/') && !SQLITE_ONLY.has(f))
  : [];
if (onPostgres.length > 0) {
  const reachable = await postgresReachable();
  if (reachable !== true) {
    onPostgres = [];
    if (process.env.CI) {
      console.error(`# FAILED: PostgreSQL is not reachable (${reachable}); CI runs the API tests on it too`);
      failed = true;
    } else
      console.log(`# SKIPPED: the API tests on PostgreSQL: it is not reachable (${reachable}); set EDGECTL_TEST_PG`);
  }
}

const useTsx = process.env.EDGECTL_TEST_TSX === '1';
const env = { ...process.env, EDGECTL_LOG_LEVEL: process.env.EDGECTL_LOG_LEVEL ?? 'silent' };
/** EDGECTL_TEST_TIMES=FILE: where the time goes, per process and per shared file (scripts/test-times.mjs). */
const times = process.env.EDGECTL_TEST_TIMES;
const timesModule = pathToFileURL(join(root, 'scripts', 'test-times.mjs')).href;
// Appended to (a run inside a test, the repository's clone, adds its own lines): start from an empty file.
if (times) {
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import=${timesModule}`.trim();
}
// The transpiled mirror, or with tsx a directory for the shared processes' entries only.
const mirrorDir = mkdtempSync(join(tmpdir(), 'edgectl-tests-'));
if (!useTsx) {
  try {
    await transpile(mirrorDir);
    // The test servers' migrated template store, made once for the run instead of once per test process
    // (test/harness/store-template.ts).
    const template = join(mirrorDir, 'store-template.db');
    execFileSync(process.execPath, [join(mirrorDir, 'test', 'harness', 'store-template.js'), template], {
      cwd: root,
      stdio: 'inherit',
    });
    env.EDGECTL_TEST_STORE_TEMPLATE = template;
  } catch (e) {
    rmSync(mirrorDir, { recursive: true, force: true });
    throw e;
  }
}
/**
 * Files that share a test process: those of the folders of many short files (API, CLI and unit tests), up to
 * GROUP_SIZE of their folder in a process, one after the other, the folder's files split evenly. Loading the
 * controller's modules and warming them up costs an API test process about 3 s of CPU (0.6 s to import them; then
 * compiling and optimising its code, the response schemas, the body validators), more than many of these files'
 * own work; a shared process pays it once, and its memos of constants (the migrated schema reference, compiled
 * validators) serve every file. 20 API files from 2 processes took 21 s of CPU, from 1 process 18 s. The run's
 * wall time is the test processes' summed wall time over TEST_CONCURRENCY as long as none of them is near that
 * long: a few long processes cost no wall time, a few more processes' start-up did. Each
 * file is imported inside a suite named after it, so what its top level registers (tests, before/after hooks)
 * belongs to that suite: its hooks run around its own tests only, as in a process of its own. Nothing in src/
 * keeps state between stores (test/repo/module-state.test.ts), and each file makes its own servers, stores and
 * config dirs. The folders of long files (LONG_FIRST) keep a process each, so they run beside the others.
 * EDGECTL_TEST_ISOLATE=1 gives every file its own process. The API files on PostgreSQL always run from such an
 * entry, which sets EDGECTL_TEST_STORE for its process.
 */
const SHARED = ['test/api/', 'test/cli/', 'test/unit/'];
/** Files in one process, by SHARED folder: 3 processes for each pass of the API files, 2 for CLI, 3 for unit. */
const GROUP_SIZE = { 'test/api/': 21, 'test/cli/': 13, 'test/unit/': 25 };
const isolate = process.env.EDGECTL_TEST_ISOLATE === '1';
/** The file a test process loads for `f`: its transpiled JavaScript, or with tsx the TypeScript itself. */
const loaded = (f) => join(useTsx ? root : mirrorDir, useTsx ? f : f.replace(/\.ts$/, '.js'));
/** `list` in even groups of up to GROUP_SIZE files of one SHARED folder, or of one file each when isolated. */
const groupsOf = (list) =>
  isolate
    ? list.map((f) => [f])
    : SHARED.flatMap((dir) => {
        const members = list.filter((f) => f.startsWith(dir));
        const size = Math.ceil(members.length / Math.ceil(members.length / GROUP_SIZE[dir]));
        return Array.from({ length: Math.ceil(members.length / size) }, (_, i) =>
          members.slice(i * size, (i + 1) * size),
        );
      });
/**
 * The test processes' entries, one file each in `test/run/` of the mirror, numbered in the order they are to
 * start: Node's runner sorts the files it is given by path, whatever their order on its command line.
 */
let entryCount = 0;
const entryPath = (name) => {
  mkdirSync(join(mirrorDir, 'test', 'run'), { recursive: true });
  return join(mirrorDir, 'test', 'run', `${String(++entryCount).padStart(3, '0')}-${name}.test.mjs`);
};
/** The entry of a process running the one file `f` as if it were loaded itself. */
const single = (f) => {
  const path = entryPath(
    f
      .replace(/^test\//, '')
      .replace(/\.test\.ts$/, '')
      .replaceAll('/', '-'),
  );
  writeFileSync(path, `import ${JSON.stringify(pathToFileURL(loaded(f)).href)};\n`);
  return path;
};
/** Writes the entry of a shared process running `members` (on PostgreSQL when `postgres`); answers its path. */
function entry(members, postgres) {
  const path = entryPath(`shared${postgres ? '-postgres' : ''}`);
  // One import at a time, started in the file's own suite: a module evaluates in the context of the import that
  // loaded it, so imports in flight together would hand one file's tests and hooks to another file's suite.
  const suite = (f) =>
    `await file(${JSON.stringify(postgres ? `${f} on PostgreSQL` : f)}, ${JSON.stringify(pathToFileURL(loaded(f)).href)});\n`;
  // With EDGECTL_TEST_TIMES, hooks of the file's suite (registered before its own) time it.
  const timed = times ? '{ const t = fileTimer(name); before(t.start); after(t.stop); } ' : '';
  writeFileSync(
    path,
    (postgres ? "process.env.EDGECTL_TEST_STORE = 'postgres';\n" : '') +
      "import { after, before, describe } from 'node:test';\n" +
      (times ? `import { fileTimer } from ${JSON.stringify(timesModule)};\n` : '') +
      `const file = (name, url) => new Promise((done) => describe(name, () => { ${timed}return import(url).finally(done); }));\n` +
      members.map(suite).join(''),
  );
  return path;
}
const sqliteGroups = groupsOf(onSqlite.filter((f) => SHARED.some((dir) => f.startsWith(dir)))).filter(
  (g) => g.length > 1,
);
const grouped = new Set(sqliteGroups.flat());
// The long files first (the list's order), then the shared processes (PostgreSQL's first: its files take longest),
// then every other file; each through an entry numbered in that order (see entryPath). Named by their folders
// instead, the PostgreSQL processes sorted among the others and, the longest of all, ran last while a core idled.
const testFiles = [
  ...onSqlite.filter((f) => rank(f) < LONG_FIRST.length).map(single),
  ...groupsOf(onPostgres).map((g) => entry(g, true)),
  ...sqliteGroups.map((g) => entry(g, false)),
  ...onSqlite.filter((f) => rank(f) === LONG_FIRST.length && !grouped.has(f)).map(single),
];
/**
 * Test processes at once: 3 on the 2-core machine. Much of a test process's time is waiting, with its core idle:
 * for PostgreSQL (another process), for the programs it runs (`edgectl serve`, a build) and for timeouts; a third
 * process fills that time. On the shared machine test/daemon took 105 s with 2, 92 s with 3 or 4. More than 3
 * adds PostgreSQL connections (each test server's pool holds up to 10) for little more.
 */
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const loader = useTsx ? ['--import', 'tsx'] : ['--enable-source-maps'];
let child;
// The runner's own interruption ends the tests first; the mirror goes once they are gone.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    interrupted = true;
    child?.kill(signal);
  });
try {
  if (testFiles.length > 0)
    failed =
      (await new Promise((resolve) => {
        child = spawn(
          process.execPath,
          [...loader, '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...testFiles],
          { cwd: root, stdio: 'inherit', env },
        );
        child.on('exit', (code, signal) => resolve((code ?? (signal ? 1 : 0)) !== 0));
      })) || failed;
} finally {
  rmSync(mirrorDir, { recursive: true, force: true });
}
if (times) console.log((await import(timesModule)).report(times));
process.exit(failed || interrupted ? 1 : 0);
