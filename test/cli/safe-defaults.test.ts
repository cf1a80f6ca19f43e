/**
 * The CLI's safe defaults and script-friendly answers, end to end against a real controller. Policies are AllOf unless
 * told otherwise, `enrollment refresh` keeps the enrollment's span, `--json` answers carry the enrollment JWTs,
 * `policy-advice` exits 1 when access is refused, and `config create` takes the data as its third argument (checked
 * against the built-in config types' schemas).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';
import { edgectl, type Run } from '../harness/cli.js';

const JWT_RE = /^[\w-]+\.[\w-]+\.[\w-]+$/;
const minutesUntil = (iso: unknown) => (Date.parse(String(iso)) - Date.now()) / 60_000;

describe('edgectl CLI defaults', () => {
  let server: TestServer;
  let tmp: string;
  let cli: (...args: string[]) => Promise<Run>;
  let ok: (...args: string[]) => Promise<Run>;

  let json: (...args: string[]) => Promise<any>;

  before(async () => {
    server = await startTestServer();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-defaults-'));
    const cfg = join(tmp, 'config');
    cli = (...args) => edgectl(cfg, ...args);
    ok = async (...args) => {
      const r = await cli(...args);
      assert.equal(r.code, 0, `edgectl ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    json = async (...args) => JSON.parse((await ok(...args, '--json')).stdout);
    await ok('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '-y');
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('creates policies as AllOf unless --semantic says otherwise: two attributes need both', async () => {
    await Promise.all([
      ok('identity', 'create', 'def-both', '-a', 'sales,vip'),
      ok('identity', 'create', 'def-sales', '-a', 'sales'),
      ok('service', 'create', 'def-crm', '-a', 'crm'),
    ]);
    const [allOf, anyOf] = await Promise.all([
      json(
        'service-policy',
        'create',
        'def-dial',
        'Dial',
        '--identity-roles',
        '#sales,#vip',
        '--service-roles',
        '#crm',
      ),
      json(
        'edge-router-policy',
        'create',
        'def-erp',
        '--identity-roles',
        '#sales,#vip',
        '--edge-router-roles',
        '#all',
        '--semantic',
        'AnyOf',
      ),
    ]);
    const [sp, erp] = await Promise.all([
      json('service-policy', 'show', allOf.data.id),
      json('edge-router-policy', 'show', anyOf.data.id),
    ]);
    assert.equal(sp.data.semantic, 'AllOf');
    assert.equal(erp.data.semantic, 'AnyOf', '--semantic is still honoured');
    const users = (await json('service', 'identities', 'def-crm')).data.map((r: { name: string }) => r.name).sort();
    assert.deepEqual(users, ['def-both'], 'an identity holding only #sales is not granted');
  });

  it('identity create --ott --json prints the JWT in data.enrollment.ott; with --jwt-out it stays in the file', async () => {
    const res = await json('identity', 'create', 'def-ott', '--ott');
    assert.match(res.data.id, /\S/);
    assert.match(res.data.enrollment.ott.jwt, JWT_RE);
    const shown = await json('identity', 'show', res.data.id);
    assert.equal(res.data.enrollment.ott.jwt, shown.data.enrollment.ott.jwt, 'the JWT of the identity created');

    const file = join(tmp, 'def-ott2.jwt');
    const r = await ok('identity', 'create', 'def-ott2', '--ott', '--jwt-out', file, '--json');
    const body = JSON.parse(r.stdout);
    assert.equal(body.data.enrollment, undefined);
    assert.doesNotMatch(r.stdout, /eyJ/, 'no JWT on stdout');
    assert.ok(existsSync(file));
  });

  it('enrollment refresh without a duration keeps the span the enrollment had (180 minutes, not 30)', async () => {
    const id = (await json('identity', 'create', 'def-refresh', '--ott')).data.id;
    const enr = (await json('enrollment', 'list', `identity = "${id}"`)).data[0];
    assert.ok(minutesUntil(enr.expiresAt) > 170, 'created with the configured 180 minutes');
    const refreshed = await json('enrollment', 'refresh', enr.id);
    assert.match(refreshed.data.jwt, JWT_RE, '--json carries the new JWT');
    const after1 = (await json('enrollment', 'show', enr.id)).data;
    assert.ok(
      minutesUntil(after1.expiresAt) > 178 && minutesUntil(after1.expiresAt) <= 181,
      `180 minutes again (${minutesUntil(after1.expiresAt)})`,
    );
    assert.equal(refreshed.data.jwt, after1.jwt);

    await ok('enrollment', 'refresh', enr.id, '--duration-minutes', '45');
    await ok('enrollment', 'refresh', enr.id);
    const after2 = (await json('enrollment', 'show', enr.id)).data;
    assert.ok(
      minutesUntil(after2.expiresAt) > 43 && minutesUntil(after2.expiresAt) <= 46,
      `the span last given is kept (${minutesUntil(after2.expiresAt)})`,
    );
  });

  it('enrollment create --json carries the JWT', async () => {
    await ok('identity', 'create', 'def-enr');
    const res = await json('enrollment', 'create', 'def-enr', '--method', 'ott');
    assert.match(res.data.jwt, JWT_RE);
    assert.ok(
      minutesUntil(res.data.expiresAt) > 28 && minutesUntil(res.data.expiresAt) <= 30,
      'the CLI default of 30 minutes for a new enrollment',
    );
  });

  it('policy-advice exits 1 when access is refused, with the reason; 0 when the policies allow it', async () => {
    await ok('service', 'create', 'def-open', '-a', 'open');
    await Promise.all([
      ok('service-policy', 'create', 'def-open-dial', 'Dial', '--identity-roles', '#sales', '--service-roles', '#open'),
      ok('edge-router', 'create', 'def-er', '-a', 'def'),
      ok('edge-router-policy', 'create', 'def-erp-sales', '--identity-roles', '#sales', '--edge-router-roles', '#def'),
      ok('service-edge-router-policy', 'create', 'def-serp', '--service-roles', '#open', '--edge-router-roles', '#def'),
    ]);
    const [refused, refusedJson, allowed, allowedJson] = await Promise.all([
      cli('policy-advice', 'def-sales', 'def-crm'),
      cli('policy-advice', 'def-sales', 'def-crm', '--json'),
      cli('policy-advice', 'def-sales', 'def-open'),
      cli('policy-advice', 'def-sales', 'def-open', '--json'),
    ]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stdout, /^ERROR: no service policy grants the identity Dial or Bind on the service$/m);
    assert.match(refused.stderr, /^error: the identity cannot use the service: no service policy grants/);
    assert.equal(refusedJson.code, 1);
    assert.equal(JSON.parse(refusedJson.stdout).data.isDialAllowed, false, 'the JSON answer is still printed');
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /^WARNING: no common edge router is online$/m, 'an offline router is not a refusal');
    assert.equal(allowedJson.code, 0);
    assert.equal(JSON.parse(allowedJson.stdout).data.isDialAllowed, true);
  });

  it('config create NAME TYPE DATA takes the data positionally, checked against the built-in types', async () => {
    const intercept = JSON.stringify({
      protocols: ['tcp'],
      addresses: ['crm.ziti'],
      portRanges: [{ low: 443, high: 443 }],
    });
    const created = await ok('config', 'create', 'def-intercept', 'intercept.v1', intercept);
    assert.match(created.stdout, /^created config \S+/);
    const c = (await json('config', 'show', 'def-intercept')).data;
    assert.equal(c.configTypeId, 'g7cIWbcGg');
    assert.deepEqual(c.data.addresses, ['crm.ziti']);
    await ok(
      'config',
      'create',
      'def-host',
      'host.v1',
      '--data',
      JSON.stringify({ protocol: 'tcp', address: 'localhost', port: 443 }),
    );

    const [both, badJson, badData] = await Promise.all([
      cli('config', 'create', 'def-both', 'host.v1', '{}', '--data', '{}'),
      cli('config', 'create', 'def-bad', 'host.v1', '{nope'),
      cli('config', 'create', 'def-bad2', 'host.v1', JSON.stringify({ protocol: 'tcp', port: 443 })),
    ]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /not both/);
    assert.equal(badJson.code, 2);
    assert.match(badJson.stderr, /argument data: expected JSON/);
    assert.equal(badData.code, 1);
    assert.match(badData.stderr, /^error: COULD_NOT_VALIDATE: .*data\.address/);
  });

  it('lists the built-in config types, which cannot be deleted', async () => {
    const list = await ok('config-type', 'list', 'name = "host.v2"');
    assert.match(list.stdout, /│ host\.v2 +│ host\.v2 +│/);
    const del = await cli('config-type', 'delete', 'intercept.v1');
    assert.equal(del.code, 1);
    assert.match(del.stderr, /^error: ENTITY_CAN_NOT_BE_DELETED/);
  });
});
