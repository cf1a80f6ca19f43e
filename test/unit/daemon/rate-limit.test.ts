/** The authentication limiter's pieces: token buckets, the concurrency gate, the limiter and its config. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConcurrencyGate, GateFull, TokenBuckets } from '../../../src/daemon/rate-limit.js';
import { AUTH_RATE_LIMIT_DEFAULTS, AuthLimiter, parseAuthRateLimit } from '../../../src/daemon/auth-limiter.js';
import { DomainError } from '../../../src/model/errors.js';

test('a bucket allows its burst, then refuses with the seconds until the next token', () => {
  let now = 0;
  const b = new TokenBuckets({ burst: 3, perMinute: 6 }, () => now);
  for (let i = 0; i < 3; i++) assert.deepEqual(b.take('a'), { ok: true });
  assert.deepEqual(b.take('a'), { ok: false, retryAfterSeconds: 10 });
  now = 4_000;
  assert.deepEqual(b.take('a'), { ok: false, retryAfterSeconds: 6 });
  now = 10_000;
  assert.deepEqual(b.take('a'), { ok: true }, 'one token back after 10 s at 6 per minute');
  assert.deepEqual(b.take('b'), { ok: true }, 'another key has its own bucket');
});

test('a refund gives a token back, never beyond the burst', () => {
  const b = new TokenBuckets({ burst: 1, perMinute: 0 }, () => 0);
  b.refund('a');
  assert.deepEqual(b.take('a'), { ok: true });
  assert.equal(b.take('a').ok, false);
  b.refund('a');
  assert.deepEqual(b.take('a'), { ok: true });
});

test('the number of remembered keys is bounded', () => {
  const b = new TokenBuckets({ burst: 1, perMinute: 1 }, () => 0, 100);
  for (let i = 0; i < 1000; i++) b.take(`k${i}`);
  assert.equal(b.size, 100);
});

test('the gate runs at most maxConcurrent tasks, queues maxQueued and refuses the rest', async () => {
  const gate = new ConcurrencyGate(2, 1);
  let running = 0;
  let peak = 0;
  const release: (() => void)[] = [];
  const task = () =>
    gate.run(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => release.push(r));
      running--;
      return 'done';
    });
  const ran = [task(), task(), task()];
  await assert.rejects(task(), GateFull);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(gate.stats, { running: 2, queued: 1 });
  while (release.length || gate.stats.running) {
    release.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(await Promise.all(ran), ['done', 'done', 'done']);
  assert.equal(peak, 2);
  assert.deepEqual(gate.stats, { running: 0, queued: 0 });
});

const failing = () => Promise.reject(new DomainError('INVALID_AUTH'));

test('the limiter spends failure budgets on credential failures only and refunds successes', async () => {
  const limiter = new AuthLimiter(
    { ...AUTH_RATE_LIMIT_DEFAULTS, failuresPerAccount: { burst: 2, perMinute: 0 } },
    () => 0,
  );
  for (let i = 0; i < 5; i++) assert.equal(await limiter.attempt('1.1.1.1', 'user:a', async () => 'ok'), 'ok');
  await assert.rejects(
    limiter.attempt('1.1.1.1', 'user:a', () => Promise.reject(new DomainError('COULD_NOT_VALIDATE'))),
    { code: 'COULD_NOT_VALIDATE' },
  );
  await assert.rejects(limiter.attempt('1.1.1.1', 'user:a', failing), { code: 'INVALID_AUTH' });
  await assert.rejects(limiter.attempt('1.1.1.1', 'user:a', failing), { code: 'INVALID_AUTH' });
  await assert.rejects(
    limiter.attempt('1.1.1.1', 'user:a', async () => 'ok'),
    (e: DomainError) => {
      assert.equal(e.code, 'RATE_LIMITED');
      assert.equal(e.status, 429);
      assert.equal(e.retryAfterSeconds, 3600);
      return true;
    },
  );
  assert.equal(await limiter.attempt('1.1.1.1', 'user:b', async () => 'ok'), 'ok', 'another account is still served');
});

test('the limiter refuses a source over its budget and serves other sources', async () => {
  const limiter = new AuthLimiter(
    { ...AUTH_RATE_LIMIT_DEFAULTS, failuresPerSource: { burst: 3, perMinute: 60 } },
    () => 0,
  );
  for (let i = 0; i < 3; i++)
    await assert.rejects(limiter.attempt('10.0.0.1', `user:${i}`, failing), { code: 'INVALID_AUTH' });
  await assert.rejects(limiter.attempt('10.0.0.1', 'user:x', failing), { code: 'RATE_LIMITED', retryAfterSeconds: 1 });
  await assert.rejects(limiter.attempt('10.0.0.2', 'user:x', failing), { code: 'INVALID_AUTH' });
});

test('the step outside the gate holds no slot, passes its result on and spends the failure budgets', async () => {
  const limiter = new AuthLimiter(
    { ...AUTH_RATE_LIMIT_DEFAULTS, maxConcurrent: 1, maxQueued: 0, failuresPerSource: { burst: 2, perMinute: 0 } },
    () => 0,
  );
  let answer: (v: string) => void = () => {};
  const waiting = limiter.attempt(
    's',
    undefined,
    async (v: string) => `ran with ${v}`,
    () => new Promise<string>((r) => (answer = r)),
  );
  // With one slot and no queue, a held slot would refuse this one with 429.
  assert.equal(await limiter.attempt('s', undefined, async () => 'other'), 'other');
  answer('key');
  assert.equal(await waiting, 'ran with key');
  await assert.rejects(
    limiter.attempt('s', undefined, async () => 'never', failing),
    { code: 'INVALID_AUTH' },
  );
  await assert.rejects(limiter.attempt('s', undefined, failing), { code: 'INVALID_AUTH' });
  await assert.rejects(
    limiter.attempt('s', undefined, async () => 'ok'),
    { code: 'RATE_LIMITED' },
  );
});

test('a disabled limiter runs everything', async () => {
  const limiter = new AuthLimiter({
    ...AUTH_RATE_LIMIT_DEFAULTS,
    enabled: false,
    perSource: { burst: 1, perMinute: 0 },
  });
  for (let i = 0; i < 5; i++) assert.equal(await limiter.attempt('s', undefined, async () => i), i);
});

test('edge.api.rateLimit.auth: absent members keep defaults; bad values are refused naming the setting', () => {
  assert.deepEqual(parseAuthRateLimit(undefined), AUTH_RATE_LIMIT_DEFAULTS);
  const c = parseAuthRateLimit({ maxQueued: 0, failuresPerAccount: { burst: 4 } });
  assert.equal(c.maxQueued, 0);
  assert.deepEqual(c.failuresPerAccount, {
    burst: 4,
    perMinute: AUTH_RATE_LIMIT_DEFAULTS.failuresPerAccount.perMinute,
  });
  assert.deepEqual(c.perSource, AUTH_RATE_LIMIT_DEFAULTS.perSource);
  assert.throws(() => parseAuthRateLimit({ maxConcurrent: 0 }), /edge\.api\.rateLimit\.auth\.maxConcurrent/);
  assert.throws(() => parseAuthRateLimit({ perSource: { burst: 'x' } }), /perSource\.burst/);
  assert.throws(() => parseAuthRateLimit({ enabled: 'yes' }), /enabled/);
  assert.throws(() => parseAuthRateLimit([]), /mapping/);
});
