/**
 * Modelling a network with the CLI end to end against a real controller. Config type and config, services, edge and
 * transit routers, the three policy kinds with `@name` and `#attr` roles, sub-collections, policy advice, edge router
 * re-enrollment and deleting it all again. Subtests run in order and build on each other.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';
import { edgectl, type Run } from '../harness/cli.js';

const lastLine = (s: string) => s.trimEnd().split('\n').at(-1);

/** A JWT's payload, without verifying it. */
const jwtClaims = (jwt: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jwt.trim().split('.')[1]!, 'base64url').toString('utf8'));

describe('edgectl network model', () => {
  let server: TestServer;
  let tmp: string;
  let cli: (...args: string[]) => Promise<Run>;
  /** Runs a command that must succeed (exit 0). */
  let ok: (...args: string[]) => Promise<Run>;
  /** The parsed `--json` output of a command that must succeed. */
  let json: (...args: string[]) => Promise<{ data: Record<string, unknown> & Record<string, unknown>[] }>;
  /** Names of the records of a `--json` listing. */
  let names: (...args: string[]) => Promise<string[]>;
  const ids: Record<string, string> = {};

  before(async () => {
    server = await startTestServer();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-net-'));
    const cfg = join(tmp, 'config');
    cli = (...args) => edgectl(cfg, ...args);
    ok = async (...args) => {
      const r = await cli(...args);
      assert.equal(r.code, 0, `edgectl ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    json = async (...args) => JSON.parse((await ok(...args, '--json')).stdout);
    names = async (...args) => ((await json(...args)).data as unknown as { name: string }[]).map((r) => r.name).sort();
    await ok('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '-y');
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const created = (r: Run, label: string): string => {
    const id = r.stdout.match(new RegExp(`created ${label} (\\S+)`))?.[1];
    assert.ok(id, r.stdout);
    return id;
  };

  it('creates a config type from a schema file and a config of it, whose data is checked', async () => {
    const schemaFile = join(tmp, 'host.schema.json');
    writeFileSync(
      schemaFile,
      JSON.stringify({
        type: 'object',
        properties: { address: { type: 'string' }, port: { type: 'integer' } },
        required: ['address', 'port'],
      }),
    );
    ids.ct = created(await ok('config-type', 'create', 'cli-host.v1', '-f', schemaFile), 'config type');

    const dataFile = join(tmp, 'web.json');
    writeFileSync(dataFile, JSON.stringify({ address: '10.0.0.1', port: 80 }));
    const [byFile, byData, bad] = await Promise.all([
      cli('config', 'create', 'cli-web-host', 'cli-host.v1', '-f', dataFile),
      cli('config', 'create', 'cli-db-host', ids.ct, '--data', '{"address":"10.0.0.2","port":5432}'),
      cli('config', 'create', 'cli-bad-host', 'cli-host.v1', '--data', '{"address":"10.0.0.3"}'),
    ]);
    ids.webHost = created(byFile, 'config');
    ids.dbHost = created(byData, 'config');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: COULD_NOT_VALIDATE: /);

    const c = (await json('config', 'show', 'cli-web-host')).data;
    assert.equal(c.configTypeId, ids.ct, 'the type given by name is sent as its id');
    assert.deepEqual(c.data, { address: '10.0.0.1', port: 80 });
    const schema = (await json('config-type', 'show', 'cli-host.v1')).data.schema as { required: string[] };
    assert.deepEqual(schema.required, ['address', 'port']);
  });

  it('creates services with configs by name, attributes, encryption and terminator strategy', async () => {
    const [web, db] = await Promise.all([
      cli(
        'service',
        'create',
        'cli-web',
        '--configs',
        'cli-web-host',
        '-a',
        'web,eng',
        '--terminator-strategy',
        'weighted',
      ),
      cli('service', 'create', 'cli-db', '-c', ids.dbHost!, '-a', 'db', '--no-encryption-required'),
    ]);
    ids.web = created(web, 'service');
    ids.db = created(db, 'service');
    const [w, d] = await Promise.all([json('service', 'show', 'cli-web'), json('services', 'show', ids.db)]);
    assert.deepEqual(w.data.configs, [ids.webHost]);
    assert.deepEqual(w.data.roleAttributes, ['web', 'eng']);
    assert.equal(w.data.encryptionRequired, true, 'encryption is required unless --no-encryption-required');
    assert.equal(w.data.terminatorStrategy, 'weighted');
    assert.equal(d.data.encryptionRequired, false);
    assert.deepEqual(d.data.configs, [ids.dbHost]);
  });

  it('creates edge routers (one tunneler-enabled) writing the enrollment JWT 0600, and a transit router', async () => {
    const jwtFile = join(tmp, 'er1.jwt');
    const [er1, er2, tr] = await Promise.all([
      cli(
        'edge-router',
        'create',
        'cli-er1',
        '-a',
        'edge,east',
        '--cost',
        '10',
        '--no-traversal',
        '--app-data',
        '{"zone":"a"}',
        '--jwt-out',
        jwtFile,
      ),
      cli('edge-router', 'create', 'cli-er2', '--tunneler-enabled', '-a', 'edge'),
      cli('router', 'create', 'cli-tr1', '--cost', '5'),
    ]);
    ids.er1 = created(er1, 'edge router');
    ids.er2 = created(er2, 'edge router');
    ids.tr1 = created(tr, 'router');
    assert.match(er1.stdout, new RegExp(`wrote the erott enrollment JWT to ${jwtFile.replace(/[.]/g, '\\.')}`));
    assert.equal(statSync(jwtFile).mode & 0o777, 0o600);
    const jwt = readFileSync(jwtFile, 'utf8').trim();
    assert.equal(jwtClaims(jwt).em, 'erott');

    const [r1, r2, t1] = await Promise.all([
      json('edge-router', 'show', 'cli-er1'),
      json('er', 'show', 'cli-er2'),
      json('router', 'show', 'cli-tr1'),
    ]);
    assert.equal(r1.data.cost, 10);
    assert.equal(r1.data.noTraversal, true);
    assert.deepEqual(r1.data.roleAttributes, ['edge', 'east']);
    assert.deepEqual(r1.data.appData, { zone: 'a' });
    assert.equal(r1.data.isTunnelerEnabled, false);
    assert.equal(r1.data.enrollmentJwt, jwt);
    assert.equal(r2.data.isTunnelerEnabled, true);
    assert.equal(r2.data.noTraversal, false);
    assert.equal(t1.data.cost, 5);
    assert.equal(typeof t1.data.enrollmentJwt, 'string');
  });

  it('updates an edge router (PATCH): --traversal clears noTraversal', async () => {
    await ok('edge-router', 'update', 'cli-er1', '--traversal', '--cost', '20');
    const r = (await json('edge-router', 'show', ids.er1!)).data;
    assert.equal(r.noTraversal, false);
    assert.equal(r.cost, 20);
    assert.deepEqual(r.roleAttributes, ['edge', 'east'], 'fields not given keep their values');
  });

  it('creates the three policy kinds with @name and #attr roles, sending ids', async () => {
    const [alice, bob] = await Promise.all([
      ok('identity', 'create', 'cli-alice', '-a', 'eng'),
      ok('identity', 'create', 'cli-bob', '-a', 'ops'),
    ]);
    ids.alice = created(alice, 'identity');
    ids.bob = created(bob, 'identity');
    const [sp1, sp2, erp, serp] = await Promise.all([
      cli(
        'service-policy',
        'create',
        'cli-web-dial',
        'Dial',
        '--service-roles',
        '@cli-web',
        '--identity-roles',
        '#eng',
      ),
      cli(
        'sp',
        'create',
        'cli-db-bind',
        'bind',
        '--service-roles',
        '#db',
        '--identity-roles',
        '@cli-bob',
        '--semantic',
        'AllOf',
      ),
      cli('edge-router-policy', 'create', 'cli-erp', '--edge-router-roles', '#edge', '--identity-roles', '#all'),
      cli(
        'service-edge-router-policy',
        'create',
        'cli-serp',
        '--service-roles',
        '#all',
        '--edge-router-roles',
        '@cli-er1',
      ),
    ]);
    ids.sp1 = created(sp1, 'service policy');
    ids.sp2 = created(sp2, 'service policy');
    ids.erp = created(erp, 'edge router policy');
    ids.serp = created(serp, 'service edge router policy');

    const [p1, p2, e, s] = await Promise.all([
      json('service-policy', 'show', 'cli-web-dial'),
      json('service-policy', 'show', 'cli-db-bind'),
      json('edge-router-policy', 'show', 'cli-erp'),
      json('serp', 'show', 'cli-serp'),
    ]);
    assert.deepEqual(p1.data.serviceRoles, [`@${ids.web}`], '@name is sent as @id');
    assert.deepEqual(p1.data.identityRoles, ['#eng']);
    assert.equal(p1.data.type, 'Dial');
    assert.equal(p1.data.semantic, 'AllOf', 'AllOf unless --semantic, as the reference CLI');
    assert.equal(p2.data.type, 'Bind', 'the type is matched case-insensitively');
    assert.deepEqual(p2.data.identityRoles, [`@${ids.bob}`]);
    assert.equal(p2.data.semantic, 'AllOf');
    assert.deepEqual(e.data.identityRoles, ['#all']);
    assert.deepEqual(s.data.edgeRouterRoles, [`@${ids.er1}`]);
  });

  it('lists every noun as a table ending with the results line', async () => {
    const [ct, cf, sv, er, tr, sp, erp, serp] = await Promise.all([
      ok('config-type', 'list', 'name = "cli-host.v1"'),
      ok('config', 'list'),
      ok('service', 'list'),
      ok('edge-router', 'list'),
      ok('router', 'list'),
      ok('service-policy', 'list'),
      ok('edge-router-policy', 'list', 'name = "cli-erp"'),
      ok('service-edge-router-policy', 'list'),
    ]);
    assert.match(ct.stdout, /│ ID +│ NAME +│ SCHEMA +│/);
    assert.match(ct.stdout, /│ cli-host\.v1 +│ yes +│/);
    assert.equal(lastLine(ct.stdout), 'results: 1-1 of 1');
    assert.match(cf.stdout, /│ cli-web-host +│ cli-host\.v1 +│ {"address":"10\.0\.0\.1","port":80} +│/);
    assert.equal(lastLine(cf.stdout), 'results: 1-2 of 2');
    assert.match(sv.stdout, /│ ID +│ NAME +│ ENCRYPTION +│ TERMINATOR STRATEGY +│ ATTRIBUTES +│ CONFIGS +│/);
    assert.match(sv.stdout, /│ cli-db +│ false +│ smartrouting +│ db +│/);
    assert.equal(lastLine(sv.stdout), 'results: 1-2 of 2');
    assert.match(er.stdout, /│ cli-er1 +│ false +│ false +│ 20 +│ false +│ false +│ edge,east +│/);
    assert.match(er.stdout, /│ cli-er2 +│ false +│ false +│ 0 +│ false +│ true +│ edge +│/);
    assert.equal(lastLine(er.stdout), 'results: 1-2 of 2');
    assert.match(tr.stdout, /│ cli-tr1 +│ false +│ false +│ 5 +│/);
    assert.equal(lastLine(tr.stdout), 'results: 1-1 of 1');
    assert.match(
      sp.stdout,
      /│ cli-web-dial +│ Dial +│ AllOf +│ @cli-web +│ #eng +│/,
      'roles are shown by current name',
    );
    assert.match(sp.stdout, /│ cli-db-bind +│ Bind +│ AllOf +│ #db +│ @cli-bob +│/);
    assert.equal(lastLine(sp.stdout), 'results: 1-2 of 2');
    assert.match(erp.stdout, /│ cli-erp +│ AllOf +│ #edge +│ #all +│/);
    assert.equal(lastLine(erp.stdout), 'results: 1-1 of 1');
    assert.match(serp.stdout, /│ cli-serp +│ AllOf +│ #all +│ @cli-er1 +│/);
    assert.equal(lastLine(serp.stdout), 'results: 1-1 of 1');
  });

  it('shows records as field tables', async () => {
    const [sv, sp] = await Promise.all([
      ok('service', 'show', 'cli-web'),
      ok('service-policy', 'show', 'cli-web-dial'),
    ]);
    assert.match(sv.stdout, new RegExp(`│ id +│ ${ids.web} +│`));
    assert.match(sv.stdout, /│ terminatorStrategy +│ weighted +│/);
    assert.match(sp.stdout, /│ type +│ Dial +│/);
  });

  it('lists sub-collections: what identities, services, routers and policies relate to', async () => {
    const checks: [string[], string[]][] = [
      [['identity', 'services', 'cli-alice'], ['cli-web']],
      [['identity', 'services', 'cli-bob'], ['cli-db']],
      [
        ['identity', 'edge-routers', 'cli-alice'],
        ['cli-er1', 'cli-er2'],
      ],
      [['identity', 'service-policies', 'cli-alice'], ['cli-web-dial']],
      [['identity', 'edge-router-policies', 'cli-alice'], ['cli-erp']],
      [['service', 'identities', 'cli-web'], ['cli-alice']],
      [['service', 'edge-routers', 'cli-web'], ['cli-er1']],
      [['service', 'configs', 'cli-web'], ['cli-web-host']],
      [['service', 'service-policies', 'cli-web'], ['cli-web-dial']],
      [['service', 'service-edge-router-policies', 'cli-web'], ['cli-serp']],
      [
        ['edge-router', 'services', 'cli-er1'],
        ['cli-db', 'cli-web'],
      ],
      [['edge-router', 'services', 'cli-er2'], []],
      [['edge-router', 'edge-router-policies', 'cli-er1'], ['cli-erp']],
      [['edge-router', 'service-edge-router-policies', 'cli-er1'], ['cli-serp']],
      [['service-policy', 'identities', 'cli-db-bind'], ['cli-bob']],
      [['service-policy', 'services', 'cli-web-dial'], ['cli-web']],
      [['service-policy', 'posture-checks', 'cli-web-dial'], []],
      [
        ['edge-router-policy', 'edge-routers', 'cli-erp'],
        ['cli-er1', 'cli-er2'],
      ],
      [
        ['service-edge-router-policy', 'services', 'cli-serp'],
        ['cli-db', 'cli-web'],
      ],
      [['service-edge-router-policy', 'edge-routers', 'cli-serp'], ['cli-er1']],
      [
        ['config-type', 'configs', 'cli-host.v1'],
        ['cli-db-host', 'cli-web-host'],
      ],
    ];
    const got = await Promise.all(checks.map(([args]) => names(...args)));
    for (const [i, [args, want]] of checks.entries()) assert.deepEqual(got[i], want, `edgectl ${args.join(' ')}`);

    // #all identities: the edge router policy selects everyone, the two new identities among them.
    const everyone = await names('edge-router', 'identities', 'cli-er1');
    assert.ok(everyone.includes('cli-alice') && everyone.includes('cli-bob'), everyone.join(','));
    assert.deepEqual(await names('edge-router-policy', 'identities', ids.erp!), everyone);

    // Tables, filters and paging are those of `list`.
    const [table, filtered, page] = await Promise.all([
      ok('identity', 'services', 'cli-alice'),
      ok('edge-router', 'services', 'cli-er1', 'name = "cli-db"'),
      ok('edge-router', 'services', ids.er1!, '--limit', '1', '--offset', '1'),
    ]);
    assert.match(table.stdout, /│ ID +│ NAME +│ ENCRYPTION +│/);
    assert.match(table.stdout, /│ cli-web +│ true +│ weighted +│/);
    assert.equal(lastLine(table.stdout), 'results: 1-1 of 1');
    assert.match(filtered.stdout, /cli-db/);
    assert.doesNotMatch(filtered.stdout, /cli-web/);
    assert.equal(lastLine(filtered.stdout), 'results: 1-1 of 1');
    assert.equal(lastLine(page.stdout), 'results: 2-2 of 2');
    assert.equal(
      lastLine((await ok('identity', 'edge-routers', 'cli-alice', '--filter', 'name = "nothing"')).stdout),
      'results: none',
    );
  });

  it("updates a policy's roles and the sub-collections follow", async () => {
    const u = await ok('service-policy', 'update', 'cli-web-dial', '--identity-roles', '@cli-bob,#nobody-has-this');
    assert.match(u.stdout, new RegExp(`updated service policy ${ids.sp1}`));
    const [p, webIds, aliceSvcs, bobSvcs] = await Promise.all([
      json('service-policy', 'show', 'cli-web-dial'),
      names('service', 'identities', 'cli-web'),
      names('identity', 'services', 'cli-alice'),
      names('identity', 'services', 'cli-bob'),
    ]);
    assert.deepEqual(p.data.identityRoles, [`@${ids.bob}`, '#nobody-has-this']);
    assert.deepEqual(p.data.serviceRoles, [`@${ids.web}`], 'roles not given keep their values');
    assert.deepEqual(webIds, ['cli-bob']);
    assert.deepEqual(aliceSvcs, []);
    assert.deepEqual(bobSvcs, ['cli-db', 'cli-web']);
  });

  it('gives policy advice for an identity and a service', async () => {
    const [bob, alice, j] = await Promise.all([
      ok('policy-advice', 'cli-bob', 'cli-web'),
      cli('policy-advice', 'cli-alice', ids.db!),
      json('policy-advice', ids.bob!, 'cli-db'),
    ]);
    assert.equal(alice.code, 1, 'access refused: exit 1');
    assert.match(bob.stdout, /│ identity +│ cli-bob \(\S+\) +│/);
    assert.match(bob.stdout, /│ service +│ cli-web \(\S+\) +│/);
    assert.match(bob.stdout, /│ dial allowed +│ yes +│/);
    assert.match(bob.stdout, /│ bind allowed +│ no +│/);
    assert.match(bob.stdout, /│ identity edge routers +│ 2 +│/);
    assert.match(bob.stdout, /│ service edge routers +│ 1 +│/);
    assert.match(bob.stdout, /│ common edge routers +│ 1 \(0 online\) +│/);
    assert.match(bob.stdout, new RegExp(`│ cli-er1 +│ ${ids.er1} +│ false +│`));
    assert.match(
      bob.stdout,
      /^WARNING: no common edge router is online$/m,
      'no router is connected in the tests: a warning, exit 0',
    );

    assert.match(alice.stdout, /│ dial allowed +│ no +│/);
    assert.match(alice.stdout, /^ERROR: no service policy grants the identity Dial or Bind on the service$/m);

    assert.equal(j.data.isBindAllowed, true);
    assert.equal(j.data.isDialAllowed, false);
    assert.equal(j.data.serviceRouterCount, 1);
    assert.deepEqual(
      (j.data.commonRouters as unknown as { id: string }[]).map((r) => r.id),
      [ids.er1],
    );
  });

  it('re-enrolls an edge router: a new enrollment JWT, written 0600 or printed', async () => {
    const before = readFileSync(join(tmp, 'er1.jwt'), 'utf8').trim();
    const out = join(tmp, 'er1-again.jwt');
    const r = await ok('edge-router', 're-enroll', 'cli-er1', '--jwt-out', out);
    assert.match(r.stdout, new RegExp(`re-enrolled edge router ${ids.er1}`));
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const jwt = readFileSync(out, 'utf8').trim();
    assert.notEqual(jwt, before, 'a new token');
    assert.equal(jwtClaims(jwt).em, 'erott');
    assert.equal((await json('edge-router', 'show', 'cli-er1')).data.enrollmentJwt, jwt);

    const printed = await ok('edge-router', 're-enroll', ids.er1!);
    assert.match(printed.stdout, /^erott enrollment JWT/m);
    const last = lastLine(printed.stdout)!;
    assert.equal(last.split('.').length, 3, 'the JWT is printed');
    assert.notEqual(last, jwt);
  });

  it('fails with exit 1 and names the role for an unknown @name; nothing is created', async () => {
    const [svc, ident, er] = await Promise.all([
      cli(
        'service-policy',
        'create',
        'cli-broken',
        'Dial',
        '--service-roles',
        '@no-such-service',
        '--identity-roles',
        '#eng',
      ),
      cli('service-policy', 'update', 'cli-web-dial', '--identity-roles', '@no-such-identity'),
      cli('serp', 'create', 'cli-broken-serp', '--edge-router-roles', '@cli-web', '--service-roles', '#all'),
    ]);
    assert.equal(svc.code, 1);
    assert.match(
      svc.stderr,
      /^error: NOT_FOUND: no service with id or name "no-such-service" \(in --service-roles @no-such-service\)/,
    );
    assert.equal(ident.code, 1);
    assert.match(
      ident.stderr,
      /no identity with id or name "no-such-identity" \(in --identity-roles @no-such-identity\)/,
    );
    assert.equal(er.code, 1, 'a service name is not an edge router');
    assert.match(er.stderr, /no edge router with id or name "cli-web"/);
    assert.equal(lastLine((await ok('service-policy', 'list', 'name contains "cli-broken"')).stdout), 'results: none');
    assert.deepEqual(
      (await json('service-policy', 'show', 'cli-web-dial')).data.identityRoles,
      [`@${ids.bob}`, '#nobody-has-this'],
      'the failed update changed nothing',
    );

    const [type, semantic] = await Promise.all([
      cli('service-policy', 'create', 'cli-broken', 'Connect'),
      cli('edge-router-policy', 'create', 'cli-broken', '--semantic', 'OneOf'),
    ]);
    assert.equal(type.code, 2, 'a type other than Dial or Bind is a usage error');
    assert.match(type.stderr, /expected one of Dial, Bind/);
    assert.equal(semantic.code, 2);
  });

  it('deletes everything by name', async () => {
    const policies = await Promise.all([
      ok('service-policy', 'delete', 'cli-web-dial'),
      ok('service-policy', 'delete', 'cli-db-bind'),
      ok('edge-router-policy', 'delete', 'cli-erp'),
      ok('service-edge-router-policy', 'delete', 'cli-serp'),
    ]);
    assert.match(policies[0]!.stdout, new RegExp(`deleted service policy ${ids.sp1}`));
    // A config in use by a service cannot be deleted, nor a config type with configs (409).
    const inUse = await cli('config', 'delete', 'cli-web-host');
    assert.equal(inUse.code, 1);
    assert.match(inUse.stderr, /^error: \S+: /);
    await Promise.all([ok('service', 'delete', 'cli-web'), ok('service', 'delete', 'cli-db')]);
    await Promise.all([ok('config', 'delete', 'cli-web-host'), ok('config', 'delete', ids.dbHost!)]);
    await ok('config-type', 'delete', 'cli-host.v1');
    await Promise.all([
      ok('edge-router', 'delete', 'cli-er1'),
      ok('edge-router', 'delete', 'cli-er2'),
      ok('router', 'delete', 'cli-tr1'),
      ok('identity', 'delete', 'cli-alice'),
      ok('identity', 'delete', 'cli-bob'),
    ]);

    const lists = await Promise.all(
      [
        ['config-type', 'list', 'name = "cli-host.v1"'],
        ['config', 'list'],
        ['service', 'list'],
        ['edge-router', 'list'],
        ['router', 'list'],
        ['service-policy', 'list'],
        ['edge-router-policy', 'list'],
        ['service-edge-router-policy', 'list'],
      ].map((args) => ok(...args)),
    );
    for (const l of lists) assert.equal(lastLine(l.stdout), 'results: none', l.stdout);
  });
});
