/**
 * The pieces of external-JWT verification that need no controller: the claims pointer, the verified-token cache
 * (expiry and bound) and the JWKS fetch limits (size without a Content-Length, time, status).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { claimAt, parseClaimsPointer } from '../../../src/model/services/ext-jwt-claims.js';
import { EXT_JWT_DEFAULTS, ExtJwtState, fetchJwks } from '../../../src/model/services/ext-jwt-keys.js';
import { bearerToken } from '../../../src/model/services/ext-jwt-verify.js';
import { DomainError } from '../../../src/model/errors.js';

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
    assert.equal(s.recall('t1', 999)?.identityId, 'i');
    assert.equal(s.recall('t1', 1000), undefined);
    assert.equal(s.recall('t2', 499)?.signerId, 's');
    assert.equal(s.recall('t2', 500), undefined);
    s.remember('t3', { signerId: 's', identityId: 'i' }, 0, 10);
    assert.equal(s.recall('t3', 10), undefined, 'an expired token is not kept');
  });

  it('keeps at most maxVerified tokens, dropping the oldest, and a signer write empties it', () => {
    const s = new ExtJwtState({ maxVerified: 2 });
    for (const t of ['a', 'b', 'c']) s.remember(t, { signerId: 's', identityId: t }, Infinity, 0);
    assert.equal(s.recall('a', 1), undefined);
    assert.equal(s.recall('b', 1)?.identityId, 'b');
    assert.equal(s.recall('c', 1)?.identityId, 'c');
    s.forgetSigner('s');
    assert.equal(s.recall('c', 1), undefined);
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
