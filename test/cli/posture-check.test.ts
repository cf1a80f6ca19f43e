/**
 * Posture checks with the CLI against a real controller: `posture-check create TYPE NAME` with the flags of several
 * types, list/show/update/delete, a flag of another type refused as a usage error, and `identity posture-data` /
 * `identity failed-service-requests`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createIdentity, startTestServer, type TestServer } from '../harness/server.js';
import { edgectl, type Run } from '../harness/cli.js';

describe('edgectl posture-check', () => {
  let server: TestServer;
  let tmp: string;
  let cli: (...args: string[]) => Promise<Run>;
  let ok: (...args: string[]) => Promise<Run>;
  let json: (...args: string[]) => Promise<{ data: Record<string, unknown> }>;

  before(async () => {
    server = await startTestServer();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-posture-'));
    const cfg = join(tmp, 'config');
    cli = (...args) => edgectl(cfg, ...args);
    ok = async (...args) => {
      const r = await cli(...args);
      assert.equal(r.code, 0, `edgectl ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    json = async (...args) => JSON.parse((await ok(...args, '-o', 'json')).stdout);
    await ok('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '-y');
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('creates checks of several types with their own flags, shows, lists, updates and deletes them', async () => {
    await ok(
      'posture-check',
      'create',
      'OS',
      'win10',
      '--operating-systems',
      '[{"type":"Windows","versions":[">=10.0.19041"]}]',
      '--role-attributes',
      'corp',
    );
    await ok(
      'posture-check',
      'create',
      'PROCESS',
      'agent',
      '--os-type',
      'Linux',
      '--path',
      '/usr/bin/agent',
      '--hashes',
      'ab'.repeat(64),
    );
    await ok('posture-check', 'create', 'MAC', 'macs', '--mac-addresses', 'aa:bb:cc:dd:ee:ff,00:11:22:33:44:55');
    await ok('posture-check', 'create', 'MFA', 'mfa', '--timeout-seconds', '300', '--prompt-on-wake');

    const os = (await json('posture-check', 'show', 'win10')).data;
    assert.equal(os.typeId, 'OS');
    assert.deepEqual(os.operatingSystems, [{ type: 'Windows', versions: ['>=10.0.19041'] }]);
    assert.deepEqual(os.roleAttributes, ['corp']);
    const proc = (await json('posture-check', 'show', 'agent')).data;
    assert.deepEqual(proc.process, { osType: 'Linux', path: '/usr/bin/agent', hashes: ['ab'.repeat(64)] });
    const mac = (await json('posture-check', 'show', 'macs')).data;
    assert.deepEqual(mac.macAddresses, ['aa:bb:cc:dd:ee:ff', '00:11:22:33:44:55']);
    const mfa = (await json('posture-check', 'show', 'mfa')).data;
    assert.equal(mfa.timeoutSeconds, 300);
    assert.equal(mfa.promptOnWake, true);

    const table = await ok('posture-check', 'list');
    for (const n of ['win10', 'agent', 'macs', 'mfa']) assert.match(table.stdout, new RegExp(n));

    await ok('posture-check', 'update', 'macs', '--mac-addresses', '11:22:33:44:55:66');
    const updated = (await json('posture-check', 'show', 'macs')).data;
    assert.deepEqual(updated.macAddresses, ['11:22:33:44:55:66']);
    assert.equal(updated.version, 2);

    // A flag of another type is a usage error (the controller would ignore it); nothing is created.
    const bad = await cli('posture-check', 'create', 'DOMAIN', 'dom', '--domains', 'corp.example', '--path', '/x');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /process is a field of PROCESS checks, not of DOMAIN/);
    assert.notEqual((await cli('posture-check', 'show', 'dom')).code, 0);

    await ok('posture-check', 'delete', 'agent');
    assert.notEqual((await cli('posture-check', 'show', 'agent')).code, 0);
  });

  it('shows an identity posture data and failed service requests', async () => {
    const admin = await server.admin();
    const id = await createIdentity(admin);
    const data = (await json('identity', 'posture-data', id)).data;
    assert.deepEqual(data.processes, []);
    assert.deepEqual(data.apiSessionPostureData, {});
    const failed = JSON.parse((await ok('identity', 'failed-service-requests', id)).stdout);
    assert.deepEqual(failed.data, []);
  });
});
