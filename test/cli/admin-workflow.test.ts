/**
 * The admin CLI end to end: commands run in-process (test/harness/cli.ts) against a real controller on an ephemeral
 * port, with the saved login in a temporary `EDGECTL_CONFIG_DIR`. Subtests run in order and build on each other (login
 * → create → update → … → logout).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';
import { edgectl, type Run } from '../harness/cli.js';

const lastLine = (s: string) => s.trimEnd().split('\n').at(-1);

describe('edgectl admin CLI', () => {
  let server: TestServer;
  let tmp: string;
  let cfg: string; // logged in through the published CA bundle (-y)
  let cfgCa: string; // logged in with --ca
  let cli: (...args: string[]) => Promise<Run>;

  before(async () => {
    server = await startTestServer();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-cli-'));
    cfg = join(tmp, 'config');
    cfgCa = join(tmp, 'config-ca');
    cli = (...args) => edgectl(cfg, ...args);
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('refuses commands before login with a clear message and exit 1', async () => {
    const r = await cli('identity', 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: not logged in/);
  });

  it('does not trust the published CA bundle without a terminal unless -y is given (exit 2)', async () => {
    const r = await cli('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /not trusted/);
    assert.match(r.stderr, /SHA-256 [0-9a-f:]+/, 'the fingerprints of the offered CAs are shown');
    assert.match(r.stderr, /pass -y/);
    assert.equal(existsSync(join(cfg, 'config.json')), false, 'nothing is saved');
  });

  it('requires -u and -p without a terminal (exit 2)', async () => {
    const r = await cli('login', server.url, '-y');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /-u USERNAME and -p PASSWORD are required/);
  });

  it('logs in with -u/-p trusting the fetched CA bundle (-y) and saves the session readable by the owner only', async () => {
    const r = await cli('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '-y');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /logged in to https:\/\/127\.0\.0\.1:\d+ as admin/);
    const file = join(cfg, 'config.json');
    assert.equal(statSync(file).mode & 0o777, 0o600, 'config.json is 0600');
    assert.equal(statSync(cfg).mode & 0o777, 0o700, 'the config dir is 0700');
    const saved = JSON.parse(readFileSync(file, 'utf8')).logins.default;
    assert.equal(saved.url, server.url);
    assert.equal(saved.username, ADMIN.username);
    assert.match(saved.token, /\S/);
    assert.match(saved.caCert, /-----BEGIN CERTIFICATE-----/);
    assert.ok(!Number.isNaN(Date.parse(saved.loginTime)));
  });

  it('logs in with --ca FILE, accepting host:port without a scheme', async () => {
    const caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
    const r = await edgectl(
      cfgCa,
      'login',
      server.url.replace(/^https:\/\//, ''),
      '-u',
      ADMIN.username,
      '-p',
      ADMIN.password,
      '--ca',
      caFile,
    );
    assert.equal(r.code, 0, r.stderr);
    const list = await edgectl(cfgCa, 'identity', 'list');
    assert.equal(list.code, 0, list.stderr);
  });

  it('fails login with a wrong password: INVALID_AUTH, exit 1', async () => {
    const r = await edgectl(
      join(tmp, 'config-bad'),
      'login',
      server.url,
      '-u',
      ADMIN.username,
      '-p',
      'wrong-password',
      '-y',
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: INVALID_AUTH: /m);
  });

  it('prints the CLI and controller versions', async () => {
    const r = await cli('version');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /edgectl CLI: v\d+\.\d+\.\d+/);
    assert.match(r.stdout, /controller: +v\d+\.\d+\.\d+ at https:/);
  });

  it('lists identities as a table ending with the results line', async () => {
    const r = await cli('identity', 'list');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /│ ID +│ NAME +│ TYPE/);
    assert.match(r.stdout, /Default Admin/);
    assert.equal(lastLine(r.stdout), 'results: 1-1 of 1');
  });

  it('prints the raw response body with --json', async () => {
    const r = await cli('identities', 'list', '--json');
    assert.equal(r.code, 0, r.stderr);
    const body = JSON.parse(r.stdout);
    assert.equal(body.data.length, 1);
    assert.equal(body.data[0].isDefaultAdmin, true);
    assert.deepEqual(body.meta.pagination, { limit: 10, offset: 0, totalCount: 1 });
  });

  let aliceId = '';

  it('creates an identity with role attributes and shows it by name', async () => {
    const c = await cli('identity', 'create', 'cli-alice', '-a', 'eng,ops', '--tags', 'team=blue');
    assert.equal(c.code, 0, c.stderr);
    aliceId = c.stdout.match(/created identity (\S+)/)?.[1] ?? '';
    assert.ok(aliceId, c.stdout);

    const [table, shown] = await Promise.all([
      cli('identity', 'show', 'cli-alice'),
      cli('identity', 'show', 'cli-alice', '-j'),
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, new RegExp(`│ id +│ ${aliceId} +│`));
    assert.match(table.stdout, /│ roleAttributes +│ eng,ops +│/);

    const json = JSON.parse(shown.stdout);
    assert.equal(json.data.id, aliceId);
    assert.deepEqual(json.data.roleAttributes, ['eng', 'ops']);
    assert.equal(json.data.isAdmin, false, 'create defaults to a non-admin');
    assert.equal(json.data.typeId, 'User', 'create defaults to type User');
    assert.deepEqual(json.data.tags, { team: 'blue' });
  });

  it('updates only the given fields (PATCH)', async () => {
    const u = await cli('identity', 'update', 'cli-alice', '--role-attributes', 'dev', '--external-id', 'ext-alice');
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, new RegExp(`updated identity ${aliceId}`));
    const d = JSON.parse((await cli('identity', 'show', aliceId, '--json')).stdout).data;
    assert.deepEqual(d.roleAttributes, ['dev']);
    assert.equal(d.externalId, 'ext-alice');
    assert.equal(d.name, 'cli-alice', 'fields not given keep their values');
    assert.deepEqual(d.tags, { team: 'blue' });
  });

  it('filters lists by a positional filter or --filter', async () => {
    const [byName, byAttr, none, page] = await Promise.all([
      cli('identity', 'list', 'name = "cli-alice"'),
      cli('identity', 'list', '--filter', 'anyOf(roleAttributes) = "dev"', '-j'),
      cli('identity', 'list', 'name = "nobody"'),
      cli('identity', 'list', '--limit', '1', '--offset', '1'),
    ]);
    assert.equal(byName.code, 0, byName.stderr);
    assert.match(byName.stdout, /cli-alice/);
    assert.equal(lastLine(byName.stdout), 'results: 1-1 of 1');
    assert.deepEqual(
      JSON.parse(byAttr.stdout).data.map((i: { id: string }) => i.id),
      [aliceId],
    );
    assert.equal(lastLine(none.stdout), 'results: none');
    assert.equal(lastLine(page.stdout), 'results: 2-2 of 2', 'the results line counts from the offset');
  });

  it('disables and enables an identity', async () => {
    const d = await cli('identity', 'disable', 'cli-alice', '--duration-minutes', '10');
    assert.equal(d.code, 0, d.stderr);
    let rec = JSON.parse((await cli('identity', 'show', 'cli-alice', '-j')).stdout).data;
    assert.equal(rec.disabled, true);
    assert.ok(rec.disabledUntil, 'a timed disable has an end');

    const e = await cli('identity', 'enable', 'cli-alice');
    assert.equal(e.code, 0, e.stderr);
    rec = JSON.parse((await cli('identity', 'show', 'cli-alice', '-j')).stdout).data;
    assert.equal(rec.disabled, false);
  });

  it('creates a password authenticator for the identity and lists it', async () => {
    const c = await cli('authenticator', 'create', 'cli-alice', '-u', 'cli-alice-login', '-p', 'Alice-Passw0rd!');
    assert.equal(c.code, 0, c.stderr);
    const l = await cli('authenticator', 'list', `identity = "${aliceId}"`);
    assert.equal(l.code, 0, l.stderr);
    assert.match(l.stdout, /│ updb +│ cli-alice +│ cli-alice-login/);
    assert.equal(lastLine(l.stdout), 'results: 1-1 of 1');
    // The new credential works.
    const login = await edgectl(
      join(tmp, 'config-alice'),
      'login',
      server.url,
      '-u',
      'cli-alice-login',
      '-p',
      'Alice-Passw0rd!',
      '-y',
    );
    assert.equal(login.code, 0, login.stderr);
  });

  it('creates, lists and deletes an auth policy from flags', async () => {
    // TOTP is served: a policy requiring it is stored (sessions of its identities start partial).
    const totp = await cli('auth-policy', 'create', 'cli-totp', '--require-totp');
    assert.equal(totp.code, 0, totp.stderr);
    assert.equal((await cli('auth-policy', 'delete', 'cli-totp')).code, 0);
    const c = await cli(
      'auth-policy',
      'create',
      'cli-strict',
      '--updb-min-password-length',
      '12',
      '--updb-max-attempts',
      '3',
      '--no-cert-allowed',
    );
    assert.equal(c.code, 0, c.stderr);
    const [l, shown] = await Promise.all([
      cli('auth-policy', 'list'),
      cli('auth-policies', 'show', 'cli-strict', '-j'),
    ]);
    assert.match(l.stdout, /│ cli-strict +│ ext-jwt,updb +│[^│]*│ 12 +│ 3 +│/);
    assert.equal(lastLine(l.stdout), 'results: 1-2 of 2');

    const p = JSON.parse(shown.stdout).data;
    assert.equal(p.primary.updb.minPasswordLength, 12);
    assert.equal(p.primary.cert.allowed, false);
    assert.equal(p.primary.updb.allowed, true, 'members without a flag keep the defaults');

    const u = await cli('auth-policy', 'update', 'cli-strict', '--updb-max-attempts', '5');
    assert.equal(u.code, 0, u.stderr);
    const p2 = JSON.parse((await cli('auth-policy', 'show', 'cli-strict', '-j')).stdout).data;
    assert.equal(p2.primary.updb.maxAttempts, 5);
    assert.equal(p2.primary.updb.minPasswordLength, 12, 'a nested PATCH keeps the other members');

    const d = await cli('auth-policy', 'delete', 'cli-strict');
    assert.equal(d.code, 0, d.stderr);
    const gone = await cli('auth-policy', 'show', 'cli-strict');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^error: NOT_FOUND: /);
  });

  it('lists API sessions and deletes one, which ends that login', async () => {
    const token = JSON.parse(readFileSync(join(cfgCa, 'config.json'), 'utf8')).logins.default.token;
    const [l, mine] = await Promise.all([
      cli('api-session', 'list'),
      cli('api-sessions', 'list', `token = "${token}"`, '-j'),
    ]);
    assert.equal(l.code, 0, l.stderr);
    assert.match(l.stdout, /│ ID +│ IDENTITY +│ IP ADDRESS/);
    assert.match(lastLine(l.stdout) ?? '', /^results: 1-\d+ of \d+$/);

    const sessions = JSON.parse(mine.stdout).data;
    assert.equal(sessions.length, 1);
    const d = await cli('api-session', 'delete', sessions[0].id);
    assert.equal(d.code, 0, d.stderr);

    const after = await edgectl(cfgCa, 'identity', 'list');
    assert.equal(after.code, 1);
    assert.match(after.stderr, /^error: UNAUTHORIZED: /);
  });

  it('reports API errors as "error: CODE: message" with exit 1', async () => {
    const [r, dup] = await Promise.all([
      cli('identity', 'delete', 'no-such-identity'),
      cli('identity', 'create', 'cli-alice'),
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: NOT_FOUND: /);

    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /^error: COULD_NOT_VALIDATE: .*\(field name: /);
  });

  it('reports usage errors with exit 2', async () => {
    const [limit, type, noFields, noVerb] = await Promise.all([
      cli('identity', 'list', '--limit', 'many'),
      cli('identity', 'create', 'x', '--type', 'Robot'),
      cli('identity', 'update', 'cli-alice'),
      cli('api-session', 'create'),
    ]);
    assert.equal(limit.code, 2, 'a non-numeric --limit');
    assert.equal(type.code, 2, 'an unknown --type');
    assert.equal(noFields.code, 2, 'an update without fields');
    assert.equal(noVerb.code, 2, 'api sessions have no create verb');
  });

  it('deletes an identity by name', async () => {
    const d = await cli('identity', 'delete', 'cli-alice');
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, new RegExp(`deleted identity ${aliceId}`));
    assert.equal(lastLine((await cli('identity', 'list', `id = "${aliceId}"`)).stdout), 'results: none');
  });

  it('logs out: the session ends on the server and is forgotten locally', async () => {
    const token = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).logins.default.token;
    const r = await cli('logout');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(cfg, 'config.json')), false);
    const res = await server.client('management').withToken(token).get('/current-api-session');
    assert.equal(res.status, 401, 'the token no longer works');
    const again = await cli('identity', 'list');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not logged in/);
  });
});
