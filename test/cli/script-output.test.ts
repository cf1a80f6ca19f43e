/**
 * The CLI's output for scripts and the files its writes read, against a real controller: `-o json|yaml|id` (and
 * `--json`) on writes, `policy-advice` and `version`; entity file options (`config --data-file`, `config-type
 * --schema-file`) taking YAML as well as JSON, and `-` for standard input; `authenticator create|update
 * --password-stdin`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ADMIN, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, type Run, edgectlWithStdin } from '../harness/cli.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);
const ID = /^[A-Za-z0-9._-]+$/;

describe('edgectl output and file input for scripts', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let cfg: string;
  const cli = (...args: string[]) => edgectl(cfg, ...args);
  const lines = (r: Run) => r.stdout.trimEnd().split('\n');

  before(async () => {
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

  it('config --data-file and config-type --schema-file take YAML or JSON, and - for standard input', async () => {
    const schemaFile = join(tmp, 'schema.yaml');
    writeFileSync(
      schemaFile,
      'type: object\nproperties:\n  port: {type: integer}\n  host: {type: string}\nrequired: [port]\n',
    );
    ok(await cli('config-type', 'create', 'fin-type', '--schema-file', schemaFile), 'config-type --schema-file YAML');
    const type = (await admin.get('/config-types?filter=' + encodeURIComponent('name = "fin-type"'))).body.data[0];
    assert.deepEqual(type.schema.required, ['port']);
    ok(
      await edgectlWithStdin(
        cfg,
        '{"type": "object", "properties": {"a": {"type": "string"}}}',
        'config-type',
        'create',
        'fin-t2',
        '--schema-file',
        '-',
      ),
      'config-type --schema-file - (JSON)',
    );

    ok(
      await edgectlWithStdin(cfg, 'port: 8080\nhost: db.local\n', 'config', 'create', 'fin-cfg', 'fin-type', '-f', '-'),
      'config -f - (YAML)',
    );
    const dataFile = join(tmp, 'data.json');
    writeFileSync(dataFile, '{"port": 9090}');
    ok(await cli('config', 'create', 'fin-cfg2', 'fin-type', '--data-file', dataFile), 'config --data-file JSON');
    ok(
      await edgectlWithStdin(cfg, 'port: 7070\n', 'config', 'update', 'fin-cfg2', '--data-file', '-'),
      'config update --data-file -',
    );
    const data = async (name: string) =>
      (await admin.get('/configs?filter=' + encodeURIComponent(`name = "${name}"`))).body.data[0]?.data;
    assert.deepEqual(await data('fin-cfg'), { port: 8080, host: 'db.local' });
    assert.deepEqual(await data('fin-cfg2'), { port: 7070 });

    // Bad input: a usage error naming the source, nothing written.
    const badYaml = await edgectlWithStdin(cfg, 'port: [1,\n', 'config', 'create', 'fin-bad', 'fin-type', '-f', '-');
    assert.equal(badYaml.code, 2, badYaml.stderr);
    assert.match(badYaml.stderr, /standard input is not valid YAML/);
    const badJson = await edgectlWithStdin(cfg, '{"port": ', 'config', 'create', 'fin-bad', 'fin-type', '-f', '-');
    assert.equal(badJson.code, 2);
    assert.match(badJson.stderr, /standard input is not valid JSON/);
    const missing = await cli('config', 'create', 'fin-bad', 'fin-type', '-f', join(tmp, 'nope.yaml'));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read/);
    const twice = await edgectlWithStdin(
      cfg,
      'port: 1\n',
      'config',
      'create',
      'fin-bad',
      'fin-type',
      '-f',
      '-',
      '--body-file',
      '-',
    );
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /only one option can read standard input/);
    const both = await cli('config', 'create', 'fin-bad', 'fin-type', '--data', '{"port": 1}', '--data-file', dataFile);
    assert.equal(both.code, 2);
    assert.equal(await data('fin-bad'), undefined);
  });

  it('authenticator create and update take the password from standard input (--password-stdin)', async () => {
    ok(await cli('identity', 'create', 'fin-pw', '-o', 'id'), 'identity');
    const created = await edgectlWithStdin(
      cfg,
      'first-secret-1\nignored\n',
      'authenticator',
      'create',
      'fin-pw',
      '-u',
      'fin-user',
      '--password-stdin',
      '-o',
      'id',
    );
    ok(created, 'authenticator create --password-stdin');
    const caFile = join(tmp, 'ca.pem');
    const other = join(tmp, 'other');
    const login = (password: string) =>
      edgectl(other, 'login', server.url, '-u', 'fin-user', '-p', password, '--ca', caFile);
    ok(await login('first-secret-1'), 'login with the password read from stdin');

    ok(
      await edgectlWithStdin(cfg, 'second-secret-2\n', 'authenticator', 'update', 'fin-user', '--password-stdin'),
      'authenticator update --password-stdin',
    );
    assert.equal((await login('first-secret-1')).code, 1, 'the old password no longer works');
    ok(await login('second-secret-2'), 'login with the new password');

    const both = await edgectlWithStdin(
      cfg,
      'x-secret-3\n',
      'authenticator',
      'update',
      'fin-user',
      '-p',
      'y',
      '--password-stdin',
    );
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /give --password or --password-stdin, not both/);
    const empty = await edgectlWithStdin(cfg, '\n', 'authenticator', 'update', 'fin-user', '--password-stdin');
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /holds no password/);
    ok(await login('second-secret-2'), 'refused updates changed nothing');
  });

  it('the other action verbs take -o id|yaml: identity disable|enable, enrollment create|refresh', async () => {
    const idRun = await cli('identity', 'create', 'fin-act', '-o', 'id');
    ok(idRun, 'identity');
    const identityId = lines(idRun)[0]!;
    const disabled = await cli('identity', 'disable', 'fin-act', '-o', 'id');
    ok(disabled, 'disable -o id');
    assert.equal(disabled.stdout, `${identityId}\n`);
    assert.equal((await admin.get(`/identities/${identityId}`)).body.data.disabled, true);
    const enabled = await cli('identity', 'enable', 'fin-act', '-o', 'yaml');
    ok(enabled, 'enable -o yaml');
    assert.ok(typeof parseYaml(enabled.stdout) === 'object');
    assert.equal((await admin.get(`/identities/${identityId}`)).body.data.disabled, false);

    const enr = await cli('enrollment', 'create', 'fin-act', '-m', 'updb', '-u', 'fin-act-user', '-o', 'id');
    ok(enr, 'enrollment create -o id');
    assert.equal(lines(enr).length, 1, 'only the id: no JWT, no message');
    const enrollmentId = lines(enr)[0]!;
    assert.equal((await admin.get(`/enrollments/${enrollmentId}`)).body.data.method, 'updb');
    const refreshed = await cli('enrollment', 'refresh', enrollmentId, '-o', 'yaml');
    ok(refreshed, 'enrollment refresh -o yaml');
    assert.match((parseYaml(refreshed.stdout) as { data: { jwt: string } }).data.jwt, /^ey/);
    const refreshedId = await cli('enrollment', 'refresh', enrollmentId, '-o', 'id');
    assert.equal(refreshedId.stdout, `${enrollmentId}\n`);
  });
});
