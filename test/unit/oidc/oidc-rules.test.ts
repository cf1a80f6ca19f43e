/**
 * Pure rules of the OIDC provider: which redirect URIs a client may use (globs, the loopback port rule), which
 * `Host` headers name an issuer, which bearer tokens look like this controller's access tokens, and which
 * certificates a token stays bound to as session certificates join it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { DEFAULT_REDIRECT_URIS, redirectAllowed } from '../../../src/model/services/oidc/oidc-settings.js';
import { bearerTokens, looksLikeAccessToken } from '../../../src/model/services/oidc/bearer.js';
import { Issuers } from '../../../src/daemon/oidc/issuer.js';
import { withBoundCertificate } from '../../../src/model/services/oidc/session-certs.js';

test('redirect URIs: the defaults allow the SDK and console callbacks on loopback, any port, and nothing else', () => {
  for (const ok of [
    'http://localhost:8080/auth/callback',
    'https://127.0.0.1:1234/auth/callback',
    'openziti://auth/callback',
    'http://localhost/auth/callback',
  ])
    assert.ok(redirectAllowed(ok, DEFAULT_REDIRECT_URIS), ok);
  for (const bad of [
    'https://evil.example/auth/callback',
    'http://localhost:8080/auth/callback/../x',
    'http://localhost.evil.example:80/auth/callback',
    'http://localhost:8080/other',
    'http://localhost:8080/auth/callback?x=1',
    'openziti://auth/callbackx',
    'http://localhost:@evil.example/auth/callback',
    'http://localhost:8080@evil.example/auth/callback',
    'http://localhost:8080/x/auth/callback',
  ])
    assert.ok(!redirectAllowed(bad, DEFAULT_REDIRECT_URIS), bad);
  assert.ok(
    redirectAllowed('https://console.example.net/auth/callback', ['https://console.example.net/auth/callback']),
  );
  assert.ok(
    !redirectAllowed('https://console.example.net.evil/auth/callback', ['https://console.example.net/auth/callback']),
  );
});

const req = (host: string | undefined) =>
  ({ headers: host === undefined ? {} : { host } }) as unknown as FastifyRequest;

test('issuers: only the controller’s names with its ports; a bare host stands for 443', () => {
  const issuers = new Issuers(
    () => ['ctrl.example.net', '127.0.0.1', '::1'],
    () => [1280, 443],
  );
  assert.equal(issuers.of(req('ctrl.example.net:1280')), 'https://ctrl.example.net:1280/oidc');
  assert.equal(issuers.of(req('CTRL.example.net:1280')), 'https://ctrl.example.net:1280/oidc');
  assert.equal(issuers.of(req('ctrl.example.net')), 'https://ctrl.example.net/oidc');
  assert.equal(issuers.of(req('[::1]:1280')), 'https://[::1]:1280/oidc');
  assert.equal(issuers.of(req('ctrl.example.net:9999')), undefined);
  assert.equal(issuers.of(req('evil.example:1280')), undefined);
  assert.equal(issuers.of(req('ctrl.example.net:1280/x')), undefined);
  assert.equal(issuers.of(req(undefined)), undefined);
});

const jwt = (claims: Record<string, unknown>) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

test('bearer tokens: at most three are looked at; only controller access tokens are taken as sessions', () => {
  assert.deepEqual(bearerTokens('Bearer a'), ['a']);
  assert.deepEqual(bearerTokens(['Bearer a', 'Basic x', 'Bearer b', 'Bearer c', 'Bearer d']), ['a', 'b', 'c']);
  assert.deepEqual(bearerTokens(undefined), []);
  assert.ok(looksLikeAccessToken(jwt({ z_t: 'a', z_asid: 'x' })));
  assert.ok(!looksLikeAccessToken(jwt({ z_t: 'r', z_asid: 'x' })));
  assert.ok(!looksLikeAccessToken(jwt({ z_t: 'a', z_asid: '' })));
  assert.ok(!looksLikeAccessToken(jwt({ sub: 'someone', iss: 'https://idp.example' })));
  assert.ok(!looksLikeAccessToken('not-a-jwt'));
});

test('bound certificates: a session certificate joins after the others, once; the login certificate and the latest 9 stay', () => {
  assert.deepEqual(withBoundCertificate([], 'a'), ['a']);
  assert.deepEqual(withBoundCertificate(['login'], 'a'), ['login', 'a']);
  assert.deepEqual(withBoundCertificate(['login', 'a', 'b'], 'a'), ['login', 'b', 'a']);
  let bound = ['login'];
  for (let i = 0; i < 20; i++) bound = withBoundCertificate(bound, `s${i}`);
  assert.equal(bound.length, 10);
  assert.deepEqual(bound, ['login', ...Array.from({ length: 9 }, (_, i) => `s${i + 11}`)]);
});
