/**
 * The repository is self-contained: a clone of HEAD in an empty directory builds and passes an API test file,
 * and no code, test or script refers to a path outside the repository or cites a document it does not hold.
 * Uncommitted files are not in the clone: that is the point.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository itself, also when this file runs from the test runner's transpiled mirror (whose package.json is a
 * link to the repository's): the subject is what the repository holds, not the runner's generated JavaScript.
 */
const ROOT = dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
/** Small and quick, and it starts a real controller: enough to show that nothing outside the clone is needed. */
const API_FILE = 'test/api/console-compat.test.ts';
const SCANNED_DIRS = ['src', 'test', 'scripts', 'bin', 'bench'];
const SCANNED_EXT = /\.(ts|mts|mjs|js|cjs|json|ya?ml|sh)$|^edgectl$/;

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return [];
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function scannedFiles(root: string): string[] {
  const top = ['package.json', ...readdirSync(root).filter((n) => /^tsconfig.*\.json$/.test(n))].map((n) =>
    join(root, n),
  );
  return [...top, ...SCANNED_DIRS.flatMap((d) => walk(join(root, d)))].filter((f) => SCANNED_EXT.test(basename(f)));
}

// Built from pieces so that this file does not match itself.
const OUTSIDE = [
  new RegExp(['', 'work', ''].join('\\/')),
  new RegExp(['\\.\\.', 'shared'].join('\\/')),
  new RegExp(['shared', 'reference'].join('\\/')),
  new RegExp(['', '(home|Users)', '[\\w.-]+'].join('\\/')),
];
const CITED_DOC = /[\w./-]*\b[\w-]+\.md\b/g;

/** Problems found in the working tree: paths outside the repository and citations of documents it lacks. */
function staticProblems(root: string): { files: number; problems: string[] } {
  const files = scannedFiles(root);
  const docs = walk(root).filter((f) => f.endsWith('.md'));
  const docNames = new Set(docs.map((f) => basename(f)));
  const docPaths = new Set(docs.map((f) => relative(root, f)));
  const problems: string[] = [];
  for (const file of files) {
    const rel = relative(root, file);
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const re of OUTSIDE)
          if (re.test(line)) problems.push(`${rel}:${i + 1}: refers outside the repository: ${line.trim()}`);
        for (const cited of line.match(CITED_DOC) ?? []) {
          const known = cited.includes('/') ? docPaths.has(cited.replace(/^\.\//, '')) : docNames.has(cited);
          if (!known) problems.push(`${rel}:${i + 1}: cites ${cited}, which the repository does not hold`);
        }
      });
  }
  return { files: files.length, problems };
}

const run = (cmd: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}) => {
  // Without NODE_TEST_CONTEXT: a test runner that believes it runs inside a test skips its files and passes.
  const { NODE_TEST_CONTEXT: _inTest, ...env } = process.env;
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...env, EDGECTL_LOG_LEVEL: 'silent', ...extraEnv },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
};

function isGitCheckout(root: string): boolean {
  const r = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' && relative(r.stdout.trim(), root) === '';
}

test('no code, test or script refers outside the repository or cites a document it does not hold', () => {
  const { files, problems } = staticProblems(ROOT);
  assert.ok(files > 50, `the check looked at the sources (${files} files)`);
  assert.deepEqual(problems, []);
});

test('a clone of HEAD in an empty directory builds and passes an API test file', { timeout: 600_000 }, (t) => {
  if (!isGitCheckout(ROOT)) {
    // An unpacked tarball: no HEAD to clone. The static check above is then the proof; run it here too so
    // this test never passes on nothing.
    t.diagnostic('not a git checkout: static check only');
    const { files, problems } = staticProblems(ROOT);
    assert.ok(files > 50);
    assert.deepEqual(problems, []);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-clone-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clone = join(dir, 'edgectl');
  const cloned = run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], dir);
  assert.ok(cloned.ok, cloned.out);
  assert.ok(existsSync(join(clone, API_FILE)), `${API_FILE} is committed`);
  // The installed packages are reused (a fresh install compiles native modules for minutes); they are not ours.
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  const build = run('npm', ['run', 'build'], clone);
  assert.ok(build.ok, `build in the clone failed:\n${build.out}`);
  // On SQLite only: the file's pass on PostgreSQL would run the same sources again and show nothing more about
  // what the clone holds.
  const tested = run(process.execPath, ['scripts/run-tests.mjs', API_FILE], clone, { EDGECTL_TEST_STORES: 'sqlite' });
  assert.ok(tested.ok, `${API_FILE} failed in the clone:\n${tested.out.slice(-8000)}`);
  assert.match(tested.out, /ℹ pass [1-9]/);
  assert.match(tested.out, /ℹ fail 0/);
  assert.deepEqual(staticProblems(clone).problems, []);
});
