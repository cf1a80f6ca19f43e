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

const useTsx = process.env.EDGECTL_TEST_TSX === '1';
const env = { ...process.env, EDGECTL_LOG_LEVEL: process.env.EDGECTL_LOG_LEVEL ?? 'silent' };
let mirrorDir;
if (!useTsx) {
  mirrorDir = mkdtempSync(join(tmpdir(), 'edgectl-tests-'));
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
 * GROUP_SIZE in a process, one after the other. Loading the controller's modules and warming them up costs a test
 * process about a second of CPU, more than many of these files' own work; a shared process pays it once. Each
 * file is imported inside a suite named after it, so what its top level registers (tests, before/after hooks)
 * belongs to that suite: its hooks run around its own tests only, as in a process of its own. Nothing in src/
 * keeps state between stores (test/repo/module-state.test.ts), and each file makes its own servers, stores and
 * config dirs. The folders of long files (LONG_FIRST) keep a process each, so they run beside the others.
 * EDGECTL_TEST_ISOLATE=1 gives every file its own process.
 */
const SHARED = ['test/api/', 'test/cli/', 'test/unit/'];
const GROUP_SIZE = 6;
const isolate = useTsx || process.env.EDGECTL_TEST_ISOLATE === '1';
const js = (f) => (useTsx ? f : join(mirrorDir, f.replace(/\.ts$/, '.js')));
const groups = isolate
  ? []
  : SHARED.flatMap((dir) => {
      const members = files.filter((f) => f.startsWith(dir));
      return Array.from({ length: Math.ceil(members.length / GROUP_SIZE) }, (_, i) =>
        members.slice(i * GROUP_SIZE, (i + 1) * GROUP_SIZE),
      ).filter((g) => g.length > 1);
    });
const grouped = new Set(groups.flat());
const entries = groups.map((members, i) => {
  const entry = join(mirrorDir, 'test', `shared-process-${i + 1}.test.js`);
  // One import at a time, started in the file's own suite: a module evaluates in the context of the import that
  // loaded it, so imports in flight together would hand one file's tests and hooks to another file's suite.
  const suite = (f) => `await file(${JSON.stringify(f)}, ${JSON.stringify(pathToFileURL(js(f)).href)});\n`;
  writeFileSync(
    entry,
    "import { describe } from 'node:test';\n" +
      'const file = (name, url) => new Promise((loaded) => describe(name, () => import(url).finally(loaded)));\n' +
      members.map(suite).join(''),
  );
  return entry;
});
// The long files first (the list's order), then the shared processes, then every other file.
const testFiles = [
  ...files.filter((f) => rank(f) < LONG_FIRST.length).map(js),
  ...entries,
  ...files.filter((f) => rank(f) === LONG_FIRST.length && !grouped.has(f)).map(js),
];
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const loader = useTsx ? ['--import', 'tsx'] : ['--enable-source-maps'];
let child;
// The runner's own interruption ends the tests first; the mirror goes once they are gone.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    interrupted = true;
    child?.kill(signal);
  });
let failed = true;
try {
  failed = await new Promise((resolve) => {
    child = spawn(
      process.execPath,
      [...loader, '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...testFiles],
      { cwd: root, stdio: 'inherit', env },
    );
    child.on('exit', (code, signal) => resolve((code ?? (signal ? 1 : 0)) !== 0));
  });
} finally {
  if (mirrorDir) rmSync(mirrorDir, { recursive: true, force: true });
}
process.exit(failed || interrupted ? 1 : 0);
