#!/usr/bin/env node
// `npm test`: the build, then every test suite (scripts/run-tests.mjs) with the lint running beside them.
//
// The build is incremental (`tsc -b`, its state in dist/.tsbuildinfo): when dist/ is current, as after `npm ci` or
// an earlier build, it only compares the sources' times and hashes with that state (under a second instead of
// about 12 s of CPU). It does not notice a single output deleted by hand, so a source without its output sends
// it back to a full build.
//
// The lint needs nothing the tests make and the tests need nothing of the lint: before the tests it held them
// back about 15 s on a 2-core machine, one core idle most of that time. Beside them it fills what idle time
// they leave; its output is shown whole when it ends, and a failed lint fails the run once the tests end, as a
// failed test does. A failed build stops the run before the tests (they run dist/).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join, relative } from 'node:path';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const root = new URL('..', import.meta.url).pathname;

/**
 * Runs `npm run <script>` with its output kept; resolves its exit code once that output is printed. `background`:
 * at a lower scheduling priority (its programs inherit it), so it takes the cores the tests leave idle rather
 * than time from tests that wait on the clock.
 */
function npmRun(script, background = false) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    if (background) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // Not permitted here: it runs at the tests' priority.
      }
    }
    running.add(child);
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      running.delete(child);
      const status = code ?? (signal ? 1 : 0);
      process.stdout.write(`> npm run ${script}: ${status === 0 ? 'ok' : `failed (exit ${status})`}\n`);
      process.stdout.write(Buffer.concat(chunks));
      resolve(status);
    });
  });
}

/** Whether every source file of src/ has its compiled file in dist/. */
function outputsPresent(dir = join(root, 'src')) {
  return readdirSync(dir).every((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return outputsPresent(p);
    if (!name.endsWith('.ts') || name.endsWith('.d.ts')) return true;
    return existsSync(join(root, 'dist', relative(join(root, 'src'), p).replace(/\.ts$/, '.js')));
  });
}

const running = new Set();
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    for (const child of running) child.kill(signal);
  });

if (!outputsPresent()) rmSync(join(root, 'dist', '.tsbuildinfo'), { force: true });
if ((await npmRun('build')) !== 0) process.exit(1);
const lint = npmRun('lint', true);
const tests = new Promise((resolve) => {
  const child = spawn(process.execPath, [join(root, 'scripts', 'run-tests.mjs'), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  running.add(child);
  child.on('exit', (code, signal) => {
    running.delete(child);
    resolve(code ?? (signal ? 1 : 0));
  });
});
const [lintStatus, testStatus] = await Promise.all([lint, tests]);
if (lintStatus !== 0) console.log(`# FAILED: npm run lint (exit ${lintStatus}); its output is above`);
process.exit(lintStatus !== 0 || testStatus !== 0 ? 1 : 0);
