/**
 * The activity touch of an API session (src/store/api-sessions.ts): concurrent requests of one session that each
 * find it due for a touch share one write, the first one's, instead of each rewriting the same row (provisioning
 * clients on one admin session did, after every commit that changed identities).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../harness/server.js';
import { touchApiSession } from '../../src/store/api-sessions.js';

test('concurrent touches of one session are one write: the first one’s time is recorded', async () => {
  const s = await startTestServer();
  try {
    const admin = await s.admin();
    const mine = await admin.get('/current-api-session');
    assert.equal(mine.status, 200, mine.text);
    const id = mine.body.data.id as string;
    const db = s.daemon.ctx.db;
    const base = Date.now() + 60_000;
    const times = Array.from({ length: 16 }, (_, i) => new Date(base + i * 1000).toISOString());
    await Promise.all(times.map((at) => touchApiSession(db, id, at)));
    const row = await db.selectFrom('api_sessions').select('lastActivityAt').where('id', '=', id).executeTakeFirst();
    assert.equal(new Date(String(row?.lastActivityAt)).toISOString(), times[0], 'the first touch was written');
    // A later touch, once none is under way, is written as before.
    const later = new Date(base + 60_000).toISOString();
    await touchApiSession(db, id, later);
    const again = await db.selectFrom('api_sessions').select('lastActivityAt').where('id', '=', id).executeTakeFirst();
    assert.equal(new Date(String(again?.lastActivityAt)).toISOString(), later);
  } finally {
    await s.close();
  }
});
