#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner (TypeScript through tsx).
// Node 20's --test does not expand globs, so the file list is built here.
// Usage: node scripts/run-tests.mjs [path-prefix ...]   (e.g. test/unit, test/api/identity)
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, EDGECTL_LOG_LEVEL: process.env.EDGECTL_LOG_LEVEL ?? 'silent' },
  },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
