/**
 * The CLI for people and scripts against a real controller: contexts (several saved logins, `--context`,
 * `$EDGECTL_CONTEXT`, `context list|use|delete`, the old single login format), `whoami`, a device's own view over the
 * Client API (`client services|sessions|session create|edge-routers`), the hint a non-admin gets from the Management
 * API, `-o table|wide|json|yaml|id`, tables fitted to `$COLUMNS`, `--version` and usage errors. Subtests run in order
 * and build on each other.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ADMIN, startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { edgectl, edgectlEnv, type Run } from '../harness/cli.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);

describe('edgectl for people and scripts', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let cfg: string;
  let caFile: string;
  const f = (name: string) => join(tmp, name);
  const cli = (...args: string[]) => edgectl(cfg, ...args);
  let serviceId = '';

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-people-'));
    cfg = f('cfg');
    caFile = f('ca.pem');
    writeFileSync(caFile, server.ca);
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('prints its version with --version and -V', async () => {
    const [long, short] = await Promise.all([cli('--version'), cli('-V')]);
    ok(long, '--version');
    assert.match(long.stdout, /^\d+\.\d+\.\d+/);
    assert.equal(short.stdout, long.stdout);
  });

  it('answers a usage error with its line and a pointer to --help, not the whole help', async () => {
    const r = await cli('identity', 'list', '--no-such-flag');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown option '--no-such-flag'/);
    assert.match(r.stderr, /--help/);
    assert.doesNotMatch(r.stderr, /Usage:/);
    assert.ok(r.stderr.trim().split('\n').length <= 3, r.stderr);
  });

  it('logs in an admin into the default context, and whoami tells who the session belongs to', async () => {
    ok(await cli('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile), 'admin login');
    const who = await cli('whoami');
    ok(who, 'whoami');
    assert.match(who.stdout, /context\s*│?\s*default/);
    assert.match(who.stdout, /identity\s*│\s*Default Admin/);
    assert.match(who.stdout, /isAdmin\s*│\s*true/);
    const json = JSON.parse((await cli('whoami', '-o', 'json')).stdout);
    assert.equal(json.data.isAdmin, true);
  });

  it('keeps a device login in its own context without replacing the admin', async () => {
    // A non-admin device that may Dial one service through one router.
    const created = await cli('identity', 'create', 'laptop', '--ott', '--jwt-out', f('laptop.jwt'));
    ok(created, 'identity create');
    const laptopId = created.stdout.match(/created identity (\S+)/)![1]!;
    ok(await edgectl(f('cfg-none'), 'enroll', f('laptop.jwt'), '--out', f('laptop.json')), 'enroll');
    serviceId = await createRecord(admin, '/services', { name: 'crm', encryptionRequired: true });
    await createRecord(admin, '/configs', {
      name: 'crm-intercept',
      configTypeId: 'intercept.v1',
      data: { protocols: ['tcp'], addresses: ['crm.ziti'], portRanges: [{ low: 443, high: 443 }] },
    }).catch(() => undefined);
    const routerId = await createRecord(admin, '/edge-routers', { name: 'er1' });
    await createRecord(admin, '/service-policies', {
      name: 'crm-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${laptopId}`],
      serviceRoles: [`@${serviceId}`],
    });
    await createRecord(admin, '/edge-router-policies', {
      name: 'laptop-er',
      semantic: 'AnyOf',
      identityRoles: [`@${laptopId}`],
      edgeRouterRoles: [`@${routerId}`],
    });
    await createRecord(admin, '/service-edge-router-policies', {
      name: 'crm-er',
      semantic: 'AnyOf',
      serviceRoles: [`@${serviceId}`],
      edgeRouterRoles: [`@${routerId}`],
    });

    const login = await cli('login', '--identity', f('laptop.json'), '--context', 'laptop');
    ok(login, 'login --identity --context laptop');
    assert.match(login.stdout, /context laptop/);
    assert.match(login.stderr, /current context is still default/);
    const saved = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'));
    assert.equal(saved.default, 'default');
    assert.deepEqual(Object.keys(saved.logins).sort(), ['default', 'laptop']);
    assert.equal(statSync(join(cfg, 'config.json')).mode & 0o777, 0o600);

    // The admin's session still works; the device's is picked with --context or $EDGECTL_CONTEXT.
    ok(await cli('identity', 'list'), 'admin still logged in');
    assert.match((await cli('--context', 'laptop', 'whoami')).stdout, /identity\s*│?\s*laptop/);
    assert.match((await cli('whoami', '--context', 'laptop')).stdout, /identity\s*│?\s*laptop/);
    assert.match((await edgectlEnv(cfg, { EDGECTL_CONTEXT: 'laptop' }, 'whoami')).stdout, /isAdmin\s*│?\s*false/);
    const none = await cli('--context', 'nobody', 'identity', 'list');
    assert.equal(none.code, 1);
    assert.match(none.stderr, /not logged in in context "nobody"/);
    const bad = await cli('--context', '../x', 'whoami');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid context name/);
  });

  it('lists, switches and deletes contexts, never showing tokens', async () => {
    const list = await cli('context', 'list');
    ok(list, 'context list');
    assert.match(list.stdout, /\*\s*│\s*default/);
    assert.match(list.stdout, /laptop\s*│[^\n]*cert/);
    assert.match(list.stdout, /results: 1-2 of 2/);
    const json = await cli('context', 'list', '-o', 'json');
    const saved = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'));
    assert.ok(!json.stdout.includes(saved.logins.default.token), 'no token in the listing');
    assert.deepEqual(
      JSON.parse(json.stdout).data.map((c: { name: string; current: boolean }) => [c.name, c.current]),
      [
        ['default', true],
        ['laptop', false],
      ],
    );
    assert.equal((await cli('context', 'list', '-o', 'id')).stdout, 'default\nlaptop\n');

    const unknown = await cli('context', 'use', 'nope');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no context named "nope" \(saved: default, laptop\)/);
    ok(await cli('context', 'use', 'laptop'), 'context use laptop');
    assert.match((await cli('whoami')).stdout, /identity\s*│?\s*laptop/);
    ok(await cli('context', 'use', 'default'), 'context use default');
  });

  it('shows a device its own services, sessions and edge routers over the Client API', async () => {
    const dev = (...args: string[]) => cli('--context', 'laptop', ...args);
    const services = await dev('client', 'services');
    ok(services, 'client services');
    assert.match(services.stdout, /crm\s*│\s*Dial/);
    assert.match(services.stdout, /results: 1-1 of 1/);
    const sj = JSON.parse((await dev('client', 'services', '-o', 'json')).stdout);
    assert.deepEqual(sj.data[0].permissions, ['Dial']);
    assert.equal((await dev('client', 'services', 'name = "crm"', '-o', 'id')).stdout.trim(), serviceId);

    const created = await dev('client', 'session', 'create', 'crm');
    ok(created, 'client session create');
    assert.match(created.stdout, /^Dial session \S+ for service crm/);
    const bind = await dev('client', 'session', 'create', 'crm', '--bind');
    assert.equal(bind.code, 1, 'no Bind permission');
    assert.match(bind.stderr, /^error: /);
    const missing = await dev('client', 'session', 'create', 'nope');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no service "nope" that laptop may use/);

    const sessions = await dev('client', 'sessions', '-o', 'yaml');
    ok(sessions, 'client sessions -o yaml');
    const parsed = parseYaml(sessions.stdout) as { data: { type: string; serviceId: string }[] };
    assert.equal(parsed.data.length, 1);
    assert.equal(parsed.data[0]!.type, 'Dial');
    assert.equal(parsed.data[0]!.serviceId, serviceId);

    const routers = await dev('client', 'edge-routers', '-o', 'json');
    ok(routers, 'client edge-routers');
    assert.ok(Array.isArray(JSON.parse(routers.stdout).data));
  });

  it('tells a device that the Management API is for admins instead of asking it to log in again', async () => {
    const r = await cli('--context', 'laptop', 'identity', 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: UNAUTHORIZED/);
    assert.match(r.stderr, /laptop is not an admin/);
    assert.match(r.stderr, /edgectl client/);
    assert.doesNotMatch(r.stderr, /expired/);
  });

  it('prints reads as table, wide, json, yaml or id; --json stays an alias; tables fit $COLUMNS', async () => {
    const [json, alias, yaml, ids, show] = await Promise.all([
      cli('service', 'list', '-o', 'json'),
      cli('service', 'list', '--json'),
      cli('service', 'list', '-o', 'yaml'),
      cli('service', 'list', '-o', 'id'),
      cli('service', 'show', 'crm', '-o', 'yaml'),
    ]);
    assert.equal(json.stdout, alias.stdout);
    assert.deepEqual(parseYaml(yaml.stdout), JSON.parse(json.stdout));
    assert.equal(ids.stdout.trim(), serviceId);
    assert.equal((parseYaml(show.stdout) as { data: { name: string } }).data.name, 'crm');
    const clash = await cli('service', 'list', '--json', '-o', 'yaml');
    assert.equal(clash.code, 2);
    const badFormat = await cli('service', 'list', '-o', 'xml');
    assert.equal(badFormat.code, 2);
    assert.match(badFormat.stderr, /Allowed choices are table, wide, json, yaml, id/);

    const long = 'x'.repeat(120);
    await createRecord(admin, '/identities', {
      name: `wide-${long}`,
      type: 'User',
      isAdmin: false,
      roleAttributes: ['a-very-long-attribute-name', 'another-long-attribute-name'],
    });
    const width = (s: string) => Math.max(...s.split('\n').map((l) => l.length));
    const fitted = await edgectlEnv(cfg, { COLUMNS: '80' }, 'identity', 'list', 'name contains "wide-"');
    ok(fitted, 'identity list with COLUMNS=80');
    assert.ok(width(fitted.stdout) <= 80, `fits 80 columns:\n${fitted.stdout}`);
    assert.match(fitted.stdout, /results: 1-1 of 1/);
    const wide = await edgectlEnv(cfg, { COLUMNS: '80' }, 'identity', 'list', 'name contains "wide-"', '-o', 'wide');
    assert.ok(width(wide.stdout) > 120, 'wide is not fitted');
    const shown = await edgectlEnv(cfg, { COLUMNS: '60' }, 'identity', 'show', `wide-${long}`);
    ok(shown, 'identity show');
    assert.ok(width(shown.stdout) <= 60, `a show fits too:\n${shown.stdout}`);
    assert.match(shown.stdout, /^│ id /m, 'a show is a vertical key/value list');
  });

  it('reads the old single-login file as the context default and deletes contexts', async () => {
    const old = f('cfg-old');
    mkdirSync(old, { mode: 0o700 });
    const saved = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).logins.default;
    writeFileSync(join(old, 'config.json'), JSON.stringify(saved), { mode: 0o600 });
    const who = await edgectl(old, 'whoami');
    ok(who, 'whoami with a bare login file');
    assert.match(who.stdout, /context\s*│?\s*default/);

    const del = await cli('context', 'delete', 'laptop');
    ok(del, 'context delete');
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).logins), ['default']);
    const again = await cli('context', 'delete', 'laptop');
    assert.equal(again.code, 1);
    ok(await cli('logout'), 'logout');
    assert.equal(existsSync(join(cfg, 'config.json')), false);
  });
});
