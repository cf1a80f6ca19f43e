/** The commands people start with show examples in their `--help`. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, edgectl, edgectlProcess } from '../harness/cli.js';

test('serve, enroll, enrollment refresh and policy-advice show examples in --help', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-help-'));
  try {
    assertBuilt();
    for (const command of [['serve'], ['enroll'], ['enrollment', 'refresh'], ['policy-advice']]) {
      // `serve` runs only as a process of its own.
      const r =
        command[0] === 'serve'
          ? await edgectlProcess(dir, [...command, '--help'])
          : await edgectl(dir, ...command, '--help');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\nExamples:\n {2}edgectl /, `${command.join(' ')} --help`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
