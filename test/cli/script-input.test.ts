/**
 * Input for scripts against a real controller: `--password-stdin`, `create|update -f FILE` with `-` for stdin and YAML
 * as well as JSON, delete of several records or `--filter` (refused without `--yes` when there is no terminal), the
 * filterable fields named on an unknown filter field, examples in help, and `completion bash|zsh|fish`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, type Run, edgectlWithStdin } from '../harness/cli.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);

describe('edgectl input for scripts', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let cfg: string;
  let caFile: string;
  const cli = (...args: string[]) => edgectl(cfg, ...args);
  const names = async (filter: string) =>
    ((await admin.get('/services?filter=' + encodeURIComponent(filter))).body.data as { name: string }[])
      .map((s) => s.name)
      .sort();

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-input-'));
    cfg = join(tmp, 'cfg');
    caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('logs in with --password-stdin (first line), refusing it together with -p', async () => {
    const wrong = await edgectlWithStdin(
      cfg,
      'not-the-password\n',
      'login',
      server.url,
      '-u',
      ADMIN.username,
      '--password-stdin',
      '--ca',
      caFile,
    );
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /INVALID_AUTH/);
    const both = await edgectlWithStdin(
      cfg,
      `${ADMIN.password}\n`,
      'login',
      server.url,
      '-u',
      ADMIN.username,
      '-p',
      'x',
      '--password-stdin',
      '--ca',
      caFile,
    );
    assert.equal(both.code, 2);
    ok(
      await edgectlWithStdin(
        cfg,
        `${ADMIN.password}\nignored second line\n`,
        'login',
        server.url,
        '-u',
        ADMIN.username,
        '--password-stdin',
        '--ca',
        caFile,
      ),
      'login --password-stdin',
    );
    ok(await cli('whoami'), 'whoami');
  });

  it('creates from YAML or JSON on stdin (-f -) and from a YAML file, and updates from one', async () => {
    ok(
      await edgectlWithStdin(
        cfg,
        'name: in-yaml\nencryptionRequired: true\nroleAttributes: [a, b]\n',
        'service',
        'create',
        'in-yaml',
        '-f',
        '-',
      ),
      'create -f - (YAML)',
    );
    ok(
      await edgectlWithStdin(cfg, '{"roleAttributes":["j"]}', 'service', 'create', 'in-json', '-f', '-'),
      'create -f - (JSON)',
    );
    const file = join(tmp, 'svc.yaml');
    writeFileSync(file, '# a comment\nroleAttributes:\n  - from-file\n');
    ok(await cli('service', 'create', 'in-file', '-f', file), 'create -f FILE.yaml');
    ok(
      await edgectlWithStdin(cfg, 'roleAttributes: [changed]\n', 'service', 'update', 'in-file', '-f', '-'),
      'update -f -',
    );
    const got = (await admin.get('/services?filter=' + encodeURIComponent('name contains "in-"'))).body.data as {
      name: string;
      roleAttributes: string[];
    }[];
    const attrs = Object.fromEntries(got.map((s) => [s.name, s.roleAttributes]));
    assert.deepEqual(attrs, { 'in-yaml': ['a', 'b'], 'in-json': ['j'], 'in-file': ['changed'] });

    const notObject = await edgectlWithStdin(cfg, '- a\n- b\n', 'service', 'create', 'bad', '-f', '-');
    assert.equal(notObject.code, 2);
    assert.match(notObject.stderr, /standard input must hold one JSON or YAML object/);
    const broken = await edgectlWithStdin(cfg, 'a: [1, 2\n', 'service', 'create', 'bad', '-f', '-');
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /standard input is not valid YAML: /);
    const brokenJson = await edgectlWithStdin(cfg, '{"roleAttributes": [}', 'service', 'create', 'bad', '-f', '-');
    assert.equal(brokenJson.code, 2);
    assert.match(brokenJson.stderr, /standard input is not valid JSON: /);
  });

  it('deletes several records or every match of --filter, only with --yes without a terminal', async () => {
    for (const n of ['tmp-1', 'tmp-2', 'tmp-3', 'tmp-4']) ok(await cli('service', 'create', n), `create ${n}`);
    const refused = await cli('service', 'delete', 'tmp-1', 'tmp-2');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /deletes 2 service\(s\); pass --yes/);
    assert.deepEqual(await names('name contains "tmp-"'), ['tmp-1', 'tmp-2', 'tmp-3', 'tmp-4'], 'nothing deleted');

    const two = await cli('service', 'delete', 'tmp-1', 'tmp-2', '--yes');
    ok(two, 'delete two');
    assert.equal(two.stdout.match(/^deleted service /gm)?.length, 2);
    assert.deepEqual(await names('name contains "tmp-"'), ['tmp-3', 'tmp-4']);

    const filterRefused = await cli('service', 'delete', '--filter', 'name contains "tmp-"');
    assert.equal(filterRefused.code, 2, 'a filter is confirmed even for one match');
    ok(await cli('service', 'delete', '--filter', 'name contains "tmp-"', '-y'), 'delete --filter');
    assert.deepEqual(await names('name contains "tmp-"'), []);
    const none = await cli('service', 'delete', '--filter', 'name contains "tmp-"', '-y');
    ok(none, 'delete --filter with no match');
    assert.match(none.stdout, /nothing deleted/);

    const both = await cli('service', 'delete', 'x', '--filter', 'true');
    assert.equal(both.code, 2);
    const nothing = await cli('service', 'delete');
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /give the services to delete, or --filter/);
  });

  it('names the filterable fields when a filter uses an unknown one', async () => {
    const r = await cli('service', 'list', 'nmae = "x"');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: INVALID_FILTER/);
    assert.match(r.stderr, /filterable fields: .*\bname\b/);
    const del = await cli('service', 'delete', '--filter', 'nmae = "x"', '-y');
    assert.match(del.stderr, /filterable fields: /);
  });

  it('shows examples in the help of commands', async () => {
    for (const args of [['login'], ['context'], ['client'], ['service', 'delete'], ['completion'], ['whoami']]) {
      const r = await cli(...args, '--help');
      ok(r, `${args.join(' ')} --help`);
      assert.match(r.stdout, /Examples?:\n  \S/, `${args.join(' ')} --help has examples`);
    }
  });

  it('prints completion scripts for bash, zsh and fish that complete commands and options', async () => {
    const [b, z, fsh, bad] = await Promise.all([
      cli('completion', 'bash'),
      cli('completion', 'zsh'),
      cli('completion', 'fish'),
      cli('completion', 'tcsh'),
    ]);
    ok(b, 'completion bash');
    ok(z, 'completion zsh');
    ok(fsh, 'completion fish');
    assert.equal(bad.code, 2);
    assert.match(z.stdout, /bashcompinit/);
    assert.match(fsh.stdout, /complete -c edgectl/);
    const script = join(tmp, 'c.bash');
    writeFileSync(script, b.stdout);
    const complete = (...words: string[]) =>
      spawnSync(
        'bash',
        [
          '-c',
          `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _edgectl; echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      ).stdout.trim();
    assert.equal(complete('edgectl', 'who'), 'whoami');
    assert.equal(complete('edgectl', '--context', 'x', 'client', 'session', 'c'), 'create');
    assert.match(complete('edgectl', 'service', 'list', '--o'), /--offset --output/);
  });
});
