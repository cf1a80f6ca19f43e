/** The limiter of certificates signed for logged-in callers: per API session, per identity, and its config. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CERT_RATE_LIMIT_DEFAULTS, IssuanceLimiter, parseCertRateLimit } from '../../../src/daemon/issuance-limiter.js';
import type { DomainError } from '../../../src/model/errors.js';

const limited = (retryAfterSeconds: number) => (e: DomainError) =>
  e.code === 'RATE_LIMITED' && e.status === 429 && e.retryAfterSeconds === retryAfterSeconds;

test('an API session gets its burst, then 429 with the seconds until the next signing', () => {
  let now = 0;
  const limiter = new IssuanceLimiter(CERT_RATE_LIMIT_DEFAULTS, () => now);
  for (let i = 0; i < 10; i++) limiter.take('session-1', 'identity-1');
  assert.throws(() => limiter.take('session-1', 'identity-1'), limited(20), '3 per minute: one every 20 s');
  now = 20_000;
  limiter.take('session-1', 'identity-1');
  assert.throws(() => limiter.take('session-1', 'identity-1'), limited(20));
  limiter.take('session-2', 'identity-2');
});

test("new API sessions do not escape the identity's budget; a refusal takes nothing", () => {
  const limiter = new IssuanceLimiter(
    { ...CERT_RATE_LIMIT_DEFAULTS, perIdentity: { burst: 12, perMinute: 6 } },
    () => 0,
  );
  for (let i = 0; i < 10; i++) limiter.take('a', 'me');
  limiter.take('b', 'me');
  limiter.take('b', 'me');
  assert.throws(() => limiter.take('c', 'me'), limited(10), 'the identity is out, whatever the session');
  // Session c's token was given back: another identity's request on it would still pass the session bucket.
  for (let i = 0; i < 10; i++) limiter.take('c', `other-${i}`);
  assert.throws(() => limiter.take('c', 'other-x'), limited(20));
});

test('a disabled limiter refuses nothing', () => {
  const limiter = new IssuanceLimiter({ ...CERT_RATE_LIMIT_DEFAULTS, enabled: false }, () => 0);
  for (let i = 0; i < 100; i++) limiter.take('s', 'i');
});

test('edge.api.rateLimit.certificates: absent members keep defaults; bad values are refused naming the setting', () => {
  assert.deepEqual(parseCertRateLimit(undefined), CERT_RATE_LIMIT_DEFAULTS);
  const c = parseCertRateLimit({ perApiSession: { burst: 2 } });
  assert.deepEqual(c.perApiSession, { burst: 2, perMinute: CERT_RATE_LIMIT_DEFAULTS.perApiSession.perMinute });
  assert.deepEqual(c.perIdentity, CERT_RATE_LIMIT_DEFAULTS.perIdentity);
  assert.equal(parseCertRateLimit({ enabled: false }).enabled, false);
  assert.throws(
    () => parseCertRateLimit({ perIdentity: { burst: 0 } }),
    /edge\.api\.rateLimit\.certificates\.perIdentity\.burst/,
  );
  assert.throws(() => parseCertRateLimit({ perApiSession: 5 }), /perApiSession must be a mapping/);
  assert.throws(() => parseCertRateLimit({ enabled: 'yes' }), /enabled/);
  assert.throws(() => parseCertRateLimit([]), /mapping/);
});
