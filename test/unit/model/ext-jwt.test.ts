/**
 * The pieces of external-JWT verification that need no controller: the claims pointer, the verified-token cache
 * (expiry, bound, identity writes), the JWKS cache (shared fetches, the negative cache of a failing signer, a
 * stale set refetched behind its keys) and the JWKS fetch limits (size without a Content-Length, time, status).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { claimAt, parseClaimsPointer } from '../../../src/model/services/ext-jwt/ext-jwt-claims.js';
import { EXT_JWT_DEFAULTS, ExtJwtState, fetchJwks } from '../../../src/model/services/ext-jwt/ext-jwt-keys.js';
import { bearerToken } from '../../../src/model/services/ext-jwt/ext-jwt-verify.js';
import { DomainError } from '../../../src/model/errors.js';
import { JwksServer, newSigningKey, type SigningKey } from '../../harness/jwt-issuer.js';
import { tracked } from '../../harness/assert.js';

describe('claims pointer', () => {
  it('reads a claim with or without the leading slash, nested, escaped and in arrays', () => {
    const claims = { sub: 'a', user: { 'e/mail': 'b', 'x~y': 'c', list: ['d', 'e'] } };
    assert.equal(claimAt(claims, 'sub'), 'a');
    assert.equal(claimAt(claims, '/sub'), 'a');
    assert.equal(claimAt(claims, '/user/e~1mail'), 'b');
    assert.equal(claimAt(claims, 'user/x~0y'), 'c');
    assert.equal(claimAt(claims, '/user/list/1'), 'e');
    assert.equal(claimAt(claims, '/user/list/01'), undefined);
    assert.equal(claimAt(claims, '/user/missing'), undefined);
    assert.equal(claimAt(claims, '/sub/deeper'), undefined);
    assert.equal(claimAt({}, 'toString'), undefined, 'own properties only');
  });

  it('refuses pointers that name nothing', () => {
    for (const bad of ['', '/', 'a//b', 'a/', 'a~2', 'a~']) {
      assert.throws(
        () => parseClaimsPointer(bad),
        (e: unknown) => e instanceof DomainError && e.status === 400,
        bad,
      );
    }
  });
});

describe('verified-token cache', () => {
  it('answers until the earlier of exp and the TTL, then forgets', () => {
    const s = new ExtJwtState({ verifiedTtlMs: 1000 });
    s.remember('t1', { signerId: 's', identityId: 'i' }, 10_000, 0);
    s.remember('t2', { signerId: 's', identityId: 'i' }, 500, 0);
    assert.equal(s.recall('t1', 999, 0)?.identityId, 'i');
    assert.equal(s.recall('t1', 1000, 0), undefined);
    assert.equal(s.recall('t2', 499, 0)?.signerId, 's');
    assert.equal(s.recall('t2', 500, 0), undefined);
    s.remember('t3', { signerId: 's', identityId: 'i' }, 0, 10);
    assert.equal(s.recall('t3', 10, 0), undefined, 'an expired token is not kept');
  });

  it('keeps at most maxVerified tokens, dropping the oldest, and a signer write empties it', () => {
    const s = new ExtJwtState({ maxVerified: 2 });
    for (const t of ['a', 'b', 'c']) s.remember(t, { signerId: 's', identityId: t }, Infinity, 0);
    assert.equal(s.recall('a', 1, 0), undefined);
    assert.equal(s.recall('b', 1, 0)?.identityId, 'b');
    assert.equal(s.recall('c', 1, 0)?.identityId, 'c');
    s.forgetSigner('s');
    assert.equal(s.recall('c', 1, 0), undefined);
  });

  it('forgets an identity found by externalId once an identity was written (the generation moved)', () => {
    const s = new ExtJwtState();
    s.remember('by-external-id', { signerId: 's', identityId: 'a' }, Infinity, 0, 7);
    s.remember('by-id', { signerId: 's', identityId: 'b' }, Infinity, 0);
    assert.equal(s.recall('by-external-id', 1, 7)?.identityId, 'a');
    assert.equal(s.recall('by-external-id', 1, 8), undefined);
    assert.equal(s.recall('by-external-id', 1, 7), undefined, 'dropped, not kept for the old generation');
    assert.equal(s.recall('by-id', 1, 8)?.identityId, 'b', 'a token naming the identity by id stays');
  });
});

describe('JWKS cache', () => {
  let jwks: JwksServer;
  let key: SigningKey;
  let now = 0;
  /**
   * A new cache at time 0 on the test's clock (only the test ends a held fetch), the endpoint in `mode`, and its
   * hit count so far.
   */
  const fresh = (mode: JwksServer['mode']) => {
    now = 0;
    jwks.mode = mode;
    return { s: new ExtJwtState({ fetchTimeoutMs: 60_000 }, () => now), hits: jwks.hits };
  };

  before(async () => {
    key = await newSigningKey('k');
    jwks = await JwksServer.start([key.jwk]);
  });
  after(() => jwks.close());

  it('shares one fetch among the requests for a signer whose keys are being fetched', async () => {
    const { s, hits } = fresh('hang');
    const waiting = [1, 2, 3].map(() => s.jwk('s1', jwks.url, 'k'));
    await jwks.hitsReach(hits + 1);
    jwks.mode = 'ok';
    jwks.release();
    for (const k of await Promise.all(waiting)) assert.equal(k?.kid, 'k');
    assert.equal(jwks.hits, hits + 1);
  });

  it('does not fetch a failing signer again for failedRetryMs, refusing at once meanwhile', async () => {
    const { s, hits } = fresh('error');
    assert.equal(await s.jwk('s2', jwks.url, 'k'), undefined);
    assert.equal(jwks.hits, hits + 1);
    jwks.mode = 'ok';
    now = s.opts.refetchIntervalMs; // past the interval of an unknown kid, within the failure's
    assert.equal(await s.jwk('s2', jwks.url, 'k'), undefined, 'refused from the negative cache');
    assert.equal(jwks.hits, hits + 1, 'not fetched again');

    // Past it, one request retries and waits; the others are refused while that retry is under way.
    now = s.opts.failedRetryMs;
    jwks.mode = 'hang';
    const retry = tracked([s.jwk('s2', jwks.url, 'k')]);
    await jwks.hitsReach(hits + 2);
    assert.equal(await s.jwk('s2', jwks.url, 'k'), undefined);
    assert.equal(retry.settled, 0, 'the retry is still waiting');
    jwks.mode = 'ok';
    jwks.release();
    assert.equal((await retry.all)[0]?.kid, 'k');
    assert.equal((await s.jwk('s2', jwks.url, 'k'))?.kid, 'k', 'the negative cache ends with a good fetch');
    assert.equal(jwks.hits, hits + 2);
  });

  it('answers a known key at once while its stale set is refetched', async () => {
    const { s, hits } = fresh('ok');
    assert.equal((await s.jwk('s3', jwks.url, 'k'))?.kid, 'k');
    now = s.opts.maxAgeMs;
    jwks.mode = 'hang';
    // The answer comes before the refetch even reaches the endpoint.
    const first = await Promise.race([
      s.jwk('s3', jwks.url, 'k').then((k) => k?.kid),
      jwks.hitsReach(hits + 2).then(() => 'fetched first'),
    ]);
    assert.equal(first, 'k');
    await jwks.hitsReach(hits + 2);
    jwks.mode = 'ok';
    jwks.release();
  });
});

describe('bearer header', () => {
  it('takes the token of a Bearer header only', () => {
    assert.equal(bearerToken('Bearer abc.def.ghi'), 'abc.def.ghi');
    assert.equal(bearerToken('bearer  x'), 'x');
    assert.equal(bearerToken(['Bearer y', 'Bearer z']), 'y');
    assert.equal(bearerToken('Basic dXNlcjpwdw=='), undefined);
    assert.equal(bearerToken('Bearer a b'), undefined);
    assert.equal(bearerToken(undefined), undefined);
  });
});

describe('JWKS fetch limits', () => {
  let server: Server;
  let base = '';
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/chunked') {
        // No Content-Length: the size cap must hold while reading.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[],"pad":"');
        const chunk = 'x'.repeat(64 * 1024);
        for (let i = 0; i < 8; i++) res.write(chunk);
        return void res.end('"}');
      }
      if (req.url === '/slow') return void setTimeout(() => res.end('{"keys":[]}'), 2000);
      if (req.url === '/status') return void res.writeHead(404).end();
      if (req.url === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ keys: [{ kid: 'a', kty: 'oct' }, { kty: 'oct' }, { kid: 'enc', use: 'enc', kty: 'oct' }] }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('keeps signing keys that have a kid', async () => {
    const keys = await fetchJwks(`${base}/ok`, EXT_JWT_DEFAULTS);
    assert.deepEqual([...keys.keys()], ['a']);
  });

  it('refuses a body over the cap, a slow answer, an error status and a redirect', async () => {
    await assert.rejects(fetchJwks(`${base}/chunked`, { ...EXT_JWT_DEFAULTS, maxJwksBytes: 100_000 }), /too large/);
    const started = Date.now();
    await assert.rejects(fetchJwks(`${base}/slow`, { ...EXT_JWT_DEFAULTS, fetchTimeoutMs: 200 }));
    assert.ok(Date.now() - started < 1500);
    await assert.rejects(fetchJwks(`${base}/status`, EXT_JWT_DEFAULTS), /404/);
    await assert.rejects(fetchJwks(`${base}/redirect`, EXT_JWT_DEFAULTS));
  });
});
