/**
 * Activity recorded through one replica keeps an API session alive on every other. The activity touch moves no
 * change counter (migration 0015), so another replica's cached principal still holds the activity time it last
 * saw; before it ends a session as idle it reads the stored time (api-session.ts, `resolveToken`).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';
import { assertError } from '../harness/assert.js';

const skip = await postgresSkip();
const SHORT_TIMEOUT = 'edge:\n  api:\n    sessionTimeout: 2s\n';

let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
let replicas: TestServer[] = [];
before(async () => {
  if (skip) return;
  database = await freshDatabase();
  // Frozen clocks, moved together: the idle timeout runs out exactly when the test says.
  for (let i = 0; i < 2; i++)
    replicas.push(await startTestServer({ db: database.url, yaml: SHORT_TIMEOUT, clock: 'frozen' }));
  // Each clock froze when its replica was made, the second one a start later (over 2 s on a loaded machine, when
  // the second replica found the session idle at once): from the later of the two on they show one time.
  const latest = Math.max(...replicas.map((r) => r.clock.now().getTime()));
  for (const r of replicas) r.clock.advance(latest - r.clock.now().getTime());
});
after(async () => {
  for (const r of replicas) await r.close();
  replicas = [];
  await database?.drop();
});

const advance = (ms: number) => {
  for (const r of replicas) r.clock.advance(ms);
};

test('a session used through one replica is not ended as idle by another', { skip }, async () => {
  const c = replicas[0]!.client('client');
  assert.equal((await c.login(ADMIN.username, ADMIN.password)).status, 200);
  const other = replicas[1]!.client('client').withToken(c.token);
  // The second replica caches the session with the activity it saw.
  assert.equal((await other.get('/current-identity')).status, 200);
  // Then it is used through the first only, for longer than the idle timeout in all.
  for (let i = 0; i < 5; i++) {
    advance(1500);
    assert.equal((await c.get('/current-identity')).status, 200, `request ${i} through the first replica`);
  }
  const res = await other.get('/current-identity');
  assert.equal(res.status, 200, `the second replica: ${res.text}`);
  // Idle everywhere for the timeout: ended on either.
  advance(2000);
  assertError(await other.get('/current-identity'), 401, 'UNAUTHORIZED');
  assertError(await c.get('/current-identity'), 401, 'UNAUTHORIZED');
});
