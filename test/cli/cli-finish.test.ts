/**
 * The last of the CLI's script-facing input and output, through the BUILT binary (`npm run build` first) against a
 * real controller: `-o json|yaml|id` (and `--json`) on writes, `policy-advice` and `version`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ADMIN, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, ROOT, type Run } from '../harness/cli.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);
const ID = /^[A-Za-z0-9._-]+$/;

describe('edgectl finishing touches for scripts', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let cfg: string;
  const cli = (...args: string[]) => edgectl(cfg, ...args);
  const lines = (r: Run) => r.stdout.trimEnd().split('\n');

  before(async () => {
    assert.ok(
      existsSync(join(ROOT, 'dist', 'cli', 'main.js')),
      'dist/cli/main.js is missing: run `npm run build` before the CLI tests',
    );
    server = await startTestServer();
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-finish-'));
    cfg = join(tmp, 'cfg');
    const caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
    ok(await cli('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile), 'login');
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('create, update and delete print only ids with -o id, the API answer with -o json|yaml or --json', async () => {
    const created = await cli('service', 'create', 'fin-a', '-o', 'id');
    ok(created, 'create -o id');
    assert.equal(lines(created).length, 1, created.stdout);
    const idA = lines(created)[0]!;
    assert.match(idA, ID);
    assert.equal((await admin.get(`/services/${idA}`)).body.data.name, 'fin-a');

    const yaml = await cli('service', 'create', 'fin-b', '-o', 'yaml');
    ok(yaml, 'create -o yaml');
    const idB = (parseYaml(yaml.stdout) as { data: { id: string } }).data.id;
    assert.equal((await admin.get(`/services/${idB}`)).body.data.name, 'fin-b');
    const json = await cli('service', 'create', 'fin-c', '--json');
    ok(json, 'create --json');
    const idC = (JSON.parse(json.stdout) as { data: { id: string } }).data.id;

    const updated = await cli('service', 'update', 'fin-a', '-a', 'x', '-o', 'id');
    ok(updated, 'update -o id');
    assert.equal(updated.stdout, `${idA}\n`);
    const updatedYaml = await cli('service', 'update', idB, '-a', 'y', '-o', 'yaml');
    ok(updatedYaml, 'update -o yaml');
    assert.ok(parseYaml(updatedYaml.stdout) !== null && typeof parseYaml(updatedYaml.stdout) === 'object');
    assert.deepEqual((await admin.get(`/services/${idB}`)).body.data.roleAttributes, ['y']);

    const disagree = await cli('service', 'update', 'fin-a', '-a', 'z', '--json', '-o', 'yaml');
    assert.equal(disagree.code, 2, disagree.stderr);
    const badFormat = await cli('service', 'create', 'fin-d', '-o', 'xml');
    assert.equal(badFormat.code, 2);
    assert.equal((await admin.get('/services?filter=' + encodeURIComponent('name = "fin-d"'))).body.data.length, 0);

    const deleted = await cli('service', 'delete', '--filter', 'name contains "fin-"', '--yes', '-o', 'id');
    ok(deleted, 'delete -o id');
    assert.deepEqual(lines(deleted).sort(), [idA, idB, idC].sort());
    const none = await cli('service', 'delete', '--filter', 'name contains "fin-"', '--yes', '-o', 'id');
    ok(none, 'delete -o id of nothing');
    assert.equal(none.stdout, '', 'no ids, and no text a script would take for one');
  });

  it('create -o id keeps stdout to the id even when the create also makes an enrollment JWT', async () => {
    const r = await cli('identity', 'create', 'fin-ott', '-o', 'id');
    ok(r, 'identity create -o id');
    assert.equal(lines(r).length, 1, r.stdout);
    assert.equal((await admin.get(`/identities/${lines(r)[0]}`)).body.data.name, 'fin-ott');
  });

  it('ca create keeps its own -o (ottca) and takes --output', async () => {
    const help = await cli('ca', 'create', '--help');
    ok(help, 'ca create --help');
    assert.match(help.stdout, /-o, --ottca/);
    assert.match(help.stdout, /\s--output <format>/);
  });

  it('policy-advice and version take -o json|yaml|id', async () => {
    ok(await cli('identity', 'create', 'fin-pa'), 'identity');
    ok(await cli('service', 'create', 'fin-svc'), 'service');
    const [yaml, id] = await Promise.all([
      cli('policy-advice', 'fin-pa', 'fin-svc', '-o', 'yaml'),
      cli('policy-advice', 'fin-pa', 'fin-svc', '-o', 'id'),
    ]);
    assert.equal(yaml.code, 1, 'refused access still exits 1');
    assert.equal((parseYaml(yaml.stdout) as { data: { isDialAllowed: boolean } }).data.isDialAllowed, false);
    assert.equal(id.code, 1);
    const identityId = (await admin.get('/identities?filter=' + encodeURIComponent('name = "fin-pa"'))).body.data[0].id;
    assert.equal(lines(id)[0], identityId);
    assert.equal(lines(id).length, 2);

    const [vJson, vYaml, vId, vBoth] = await Promise.all([
      cli('version', '--json'),
      cli('version', '-o', 'yaml'),
      cli('version', '-o', 'id'),
      cli('version', '-j', '-o', 'id'),
    ]);
    ok(vJson, 'version --json');
    const cliVersion = (JSON.parse(vJson.stdout) as { cli: string }).cli;
    assert.equal((parseYaml(vYaml.stdout) as { cli: string }).cli, cliVersion);
    assert.ok((parseYaml(vYaml.stdout) as { controller: unknown }).controller, 'logged in: the controller answers');
    assert.equal(vId.stdout, `${cliVersion}\n`);
    assert.equal(vBoth.code, 2);
  });
});
