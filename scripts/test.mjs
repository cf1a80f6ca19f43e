#!/usr/bin/env node
// `npm test`: the build and the lint side by side, then every test suite (scripts/run-tests.mjs). The build and
// the lint do not depend on each other and each leaves part of a core idle; one after the other they took about
// 22 s of the run on a 2-core machine, side by side about 17 s. Each one's output is shown when it ends, whole;
// the tests run only when both passed, as with `npm run build && npm run lint && …`.
import { spawn } from 'node:child_process';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs `npm run <script>` with its output kept; resolves its exit code once that output is printed. */
function npmRun(script) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      const status = code ?? (signal ? 1 : 0);
      process.stdout.write(`> npm run ${script}: ${status === 0 ? 'ok' : `failed (exit ${status})`}\n`);
      process.stdout.write(Buffer.concat(chunks));
      resolve(status);
    });
  });
}

const [build, lint] = await Promise.all([npmRun('build'), npmRun('lint')]);
if (build !== 0 || lint !== 0) process.exit(1);
const tests = spawn(process.execPath, [new URL('run-tests.mjs', import.meta.url).pathname, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => tests.kill(signal));
tests.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
