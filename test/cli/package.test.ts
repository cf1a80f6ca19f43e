/**
 * The installable package: `npm pack` (of the already built `dist/`; scripts skipped so the test does not
 * rebuild `dist/` under the other CLI tests) holds the binary and the compiled code but no sources, tests or
 * bench, installs into an empty project without engine warnings and without build tools (install scripts
 * skipped: the native SQLite addon is not needed by `edgectl version`), and its `edgectl version` runs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPOSITORY, assertBuilt } from '../harness/cli.js';
import { VERSION } from '../../src/version.js';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

describe('the npm package', () => {
  let tmp: string;
  let tarball: string;

  before(async () => {
    assertBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-pack-'));
    const packed = await run(NPM, ['pack', '--ignore-scripts', '--pack-destination', tmp], REPOSITORY);
    assert.equal(packed.code, 0, packed.out);
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    assert.ok(tgz, packed.out);
    tarball = join(tmp, tgz);
  });

  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('holds bin/ and the compiled dist/, and no sources, tests, bench or source maps', async () => {
    const list = await run('tar', ['tzf', tarball], tmp);
    assert.equal(list.code, 0, list.out);
    const files = list.out.split('\n').filter(Boolean);
    for (const f of [
      'package/package.json',
      'package/bin/edgectl',
      'package/dist/cli/main.js',
      'package/dist/store/migrations/0007-builtin-config-types.js',
      `package/${'README.md'}`,
    ]) {
      assert.ok(files.includes(f), `${f} is packed`);
    }
    const unwanted = files.filter(
      (f) => /^package\/(src|test|bench|scripts)\//.test(f) || f.endsWith('.map') || f.endsWith('.ts'),
    );
    assert.deepEqual(unwanted, []);
  });

  it(
    'installs into an empty project without engine warnings, and `edgectl version` runs from it',
    { timeout: 150_000 },
    async () => {
      const project = join(tmp, 'project');
      mkdirSync(project);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'edgectl-install-check', private: true }));
      const installed = await run(
        NPM,
        ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
        project,
      );
      assert.equal(installed.code, 0, installed.out);
      assert.doesNotMatch(
        installed.out,
        /EBADENGINE/,
        'every dependency supports the Node versions the package allows',
      );
      const bin = join(project, 'node_modules', '.bin', 'edgectl');
      assert.ok(existsSync(bin), 'the edgectl binary is linked');
      const version = await run(bin, ['version'], project, { EDGECTL_CONFIG_DIR: join(tmp, 'config') });
      assert.equal(version.code, 0, version.out);
      assert.match(version.out, new RegExp(`^edgectl CLI: v${VERSION.replace(/\./g, '\\.')}$`, 'm'));
    },
  );
});
