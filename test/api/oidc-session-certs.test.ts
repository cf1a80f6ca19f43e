/**
 * Certificates and OIDC tokens (docs/decisions.md, "OIDC login"): the certificate-state claims (`z_ice`, `z_cae`,
 * `z_cer`, `z_ckrr`, `z_iccc`) read again at every issue; a CSR at the login (`csrPem`) or on a refresh or exchange
 * (`csr_pem`) signed into a one-year API-session certificate (`session_cert`) that joins the binding (`z_cfs`);
 * an API-session certificate of the session standing in for the bound certificate.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { generateKeyAndCsr } from '../../src/pki/index.js';
import { createUser } from '../harness/server.js';
import {
  bearer,
  claimsOf,
  createAuthPolicy,
  enrolledCertIdentity,
  exchangeCode,
  exchangeRequest,
  oidcCertLogin,
  oidcLogin,
  passwordLogin,
  pkce,
  postCertLogin,
  refreshRequest,
  serverForTests,
  sha1Fingerprint,
  startLogin,
  type ClientCert,
  type Tokens,
} from '../harness/oidc.js';
import { unique } from '../harness/assert.js';

const env = serverForTests();

const CERT_CLAIMS = ['z_ice', 'z_cae', 'z_cer', 'z_ckrr', 'z_iccc'] as const;
const certClaims = (jwt: string) => Object.fromEntries(CERT_CLAIMS.map((k) => [k, claimsOf(jwt)[k]]));
const refresh = (t: Tokens, tls?: ClientCert, extra?: Record<string, string>) =>
  refreshRequest(env.server, t.refresh_token!, tls, extra);
const exchange = (t: Tokens, tls?: ClientCert, extra?: Record<string, string>) =>
  exchangeRequest(env.server, t.refresh_token!, tls, extra);
const currentIdentity = (token: string, tls?: ClientCert) =>
  env.server.request('GET', '/edge/client/v1/current-identity', { headers: bearer(token), ...tls });

/** A new key pair and CSR; `tls(cert)` presents the certificate signed from it. */
async function keyAndCsr() {
  const { privateKeyPem, csrPem } = await generateKeyAndCsr({ commonName: unique('oidc-session') });
  return { csrPem, tls: (cert: string): ClientCert => ({ cert, key: privateKeyPem }) };
}

describe('certificate-state claims', () => {
  test('a password login: all false', async () => {
    const user = await createUser(env.server, env.admin);
    const t = await oidcLogin(env.server, user.username, user.password);
    for (const jwt of [t.access_token, t.refresh_token!])
      assert.deepEqual(certClaims(jwt), { z_ice: false, z_cae: false, z_cer: false, z_ckrr: false, z_iccc: false });
  });

  test('a certificate login: extendable, the policy allows expired certificates; an extend request shows on refresh and exchange', async () => {
    const me = await enrolledCertIdentity(env.server, env.admin);
    const t = await oidcCertLogin(env.server, me);
    assert.deepEqual(certClaims(t.access_token), {
      z_ice: true,
      z_cae: true,
      z_cer: false,
      z_ckrr: false,
      z_iccc: false,
    });

    const asked = await env.admin.post(`/authenticators/${me.authenticatorId}/request-extend`, { rollKeys: true });
    assert.equal(asked.status, 200, asked.text);
    const refreshed = await refresh(t, me);
    assert.equal(refreshed.status, 200, refreshed.text);
    const expected = { z_ice: true, z_cae: true, z_cer: true, z_ckrr: true, z_iccc: false };
    for (const jwt of [refreshed.body.access_token, refreshed.body.refresh_token])
      assert.deepEqual(certClaims(jwt), expected);
    const exchanged = await exchange(refreshed.body, me);
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.deepEqual(certClaims(exchanged.body.access_token), expected);
  });

  test('an auth policy refusing expired certificates makes z_cae false', async () => {
    const policyId = await createAuthPolicy(env.admin, { cert: { allowed: true, allowExpiredCerts: false } });
    const me = await enrolledCertIdentity(env.server, env.admin, { authPolicyId: policyId });
    const t = await oidcCertLogin(env.server, me);
    assert.equal(claimsOf(t.access_token).z_cae, false);
    assert.equal(claimsOf(t.access_token).z_ice, true);
  });
});

describe('a CSR at the login (csrPem)', () => {
  test('a password login with a CSR gets a one-year session certificate, and its tokens are bound to it', async () => {
    const user = await createUser(env.server, env.admin);
    const { csrPem, tls } = await keyAndCsr();
    const t = await oidcLogin(env.server, user.username, user.password, {}, { csrPem });
    assert.equal(typeof t.session_cert, 'string');
    const cert = new X509Certificate(t.session_cert!);
    const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
    assert.ok(days > 360 && days < 370, `valid for ${days} days`);
    const asid = claimsOf(t.access_token).z_asid;
    assert.ok(String(cert.subjectAltName).includes(asid), 'the certificate names the API session');
    const fp = sha1Fingerprint(t.session_cert!);
    assert.deepEqual(claimsOf(t.access_token).z_cfs, [fp]);
    assert.deepEqual(claimsOf(t.refresh_token!).z_cfs, [fp]);

    assert.equal((await currentIdentity(t.access_token)).status, 401, 'bound: refused without the certificate');
    const ok = await currentIdentity(t.access_token, tls(t.session_cert!));
    assert.equal(ok.status, 200, ok.text);
    const listed = await env.server.request('GET', '/edge/client/v1/current-api-session/certificates', {
      headers: bearer(t.access_token),
      ...tls(t.session_cert!),
    });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.data.map((c: { fingerprint: string }) => c.fingerprint),
      [fp],
    );
  });

  test('an unusable csrPem is 400 COULD_NOT_PROCESS_CSR at the login, which stays open', async () => {
    const user = await createUser(env.server, env.admin);
    const p = pkce();
    const id = await startLogin(env.server, p);
    const bad = await env.server.request('POST', '/oidc/login/password', {
      body: { id, username: user.username, password: user.password, csrPem: 'not a csr' },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.code, 'COULD_NOT_PROCESS_CSR');
    const good = await passwordLogin(env.server, id, user.username, user.password);
    assert.equal(good.status, 302, good.text);
    const tok = await exchangeCode(env.server, id, p);
    assert.equal(tok.status, 200, tok.text);
    assert.equal(tok.body.session_cert, undefined);
  });

  test('a certificate login with a CSR is bound to both certificates', async () => {
    const me = await enrolledCertIdentity(env.server, env.admin);
    const { csrPem, tls } = await keyAndCsr();
    const { id, p, res } = await postCertLogin(env.server, me, { csrPem });
    assert.equal(res.status, 302, res.text);
    const tok = await exchangeCode(env.server, id, p);
    assert.equal(tok.status, 200, tok.text);
    const t: Tokens = tok.body;
    assert.deepEqual(claimsOf(t.access_token).z_cfs, [me.fingerprint, sha1Fingerprint(t.session_cert!)]);
    assert.equal(claimsOf(t.access_token).z_acf, me.fingerprint);
    assert.equal((await currentIdentity(t.access_token, me)).status, 200);
    assert.equal((await currentIdentity(t.access_token, tls(t.session_cert!))).status, 200);
  });
});

describe('a CSR on refresh and exchange (csr_pem)', () => {
  let me: Awaited<ReturnType<typeof enrolledCertIdentity>>;
  let t: Tokens;

  before(async () => {
    me = await enrolledCertIdentity(env.server, env.admin);
    t = await oidcCertLogin(env.server, me);
  });

  test('an unusable csr_pem is invalid_request, and the refresh token is not used up', async () => {
    const bad = await refresh(t, me, {
      csr_pem: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error, 'invalid_request');
    const badExchange = await exchange(t, me, { csr_pem: 'junk' });
    assert.equal(badExchange.body.error, 'invalid_request');
    const again = await refresh(t, me);
    assert.equal(again.status, 200, again.text);
    t = again.body;
  });

  test('a refresh with a CSR answers session_cert, whose fingerprint joins z_cfs; the new certificate carries the token', async () => {
    const { csrPem, tls } = await keyAndCsr();
    const res = await refresh(t, me, { csr_pem: csrPem });
    assert.equal(res.status, 200, res.text);
    const fp = sha1Fingerprint(res.body.session_cert);
    for (const jwt of [res.body.access_token, res.body.refresh_token])
      assert.deepEqual(claimsOf(jwt).z_cfs, [me.fingerprint, fp]);
    const ok = await currentIdentity(res.body.access_token, tls(res.body.session_cert));
    assert.equal(ok.status, 200, ok.text);
    // The new session certificate may refresh in its turn.
    const next = await refresh(res.body, tls(res.body.session_cert));
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(claimsOf(next.body.access_token).z_cfs, [me.fingerprint, fp]);
    t = next.body;
  });

  test('a token exchange with a CSR answers session_cert too', async () => {
    const { csrPem } = await keyAndCsr();
    const res = await exchange(t, me, { csr_pem: csrPem });
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.body.session_cert, 'string');
    assert.ok(claimsOf(res.body.access_token).z_cfs.includes(sha1Fingerprint(res.body.session_cert)));
  });
});

describe('an API-session certificate of the session stands in for the bound certificate', () => {
  test('a certificate from POST /current-api-session/certificates carries the bound token; another session’s does not', async () => {
    const me = await enrolledCertIdentity(env.server, env.admin);
    const t = await oidcCertLogin(env.server, me);
    const { csrPem, tls } = await keyAndCsr();
    const made = await env.server.request('POST', '/edge/client/v1/current-api-session/certificates', {
      body: { csr: csrPem },
      headers: bearer(t.access_token),
      ...me,
    });
    assert.equal(made.status, 201, made.text);
    const sessionCert = tls(made.body.data.certificate);
    assert.equal((await currentIdentity(t.access_token, sessionCert)).status, 200);
    const refreshed = await refresh(t, sessionCert);
    assert.equal(refreshed.status, 200, refreshed.text);

    // Another login's session certificate is no stand-in.
    const other = await oidcCertLogin(env.server, me);
    assert.equal((await currentIdentity(other.access_token, sessionCert)).status, 401);
    assert.equal((await refresh(other, sessionCert)).body.error, 'access_denied');
  });
});

describe('CSRs on refresh and exchange are limited as the Client API’s signings', () => {
  const limited = serverForTests({
    yaml: 'edge:\n  api:\n    rateLimit:\n      certificates:\n        perApiSession: {burst: 1, perMinute: 1}\n',
  });

  test('beyond the API session’s budget: 429 slow_down, and the refresh token is not used up', async () => {
    const { server, admin } = limited;
    const user = await createUser(server, admin);
    const t = await oidcLogin(server, user.username, user.password);
    const pair = await keyAndCsr();
    const first = await refreshRequest(server, t.refresh_token!, undefined, { csr_pem: pair.csrPem });
    assert.equal(first.status, 200, first.text);
    const me = pair.tls(first.body.session_cert);
    const again = await refreshRequest(server, first.body.refresh_token, me, { csr_pem: (await keyAndCsr()).csrPem });
    assert.equal(again.status, 429, again.text);
    assert.equal(again.body.error, 'slow_down');
    assert.equal(typeof again.headers['retry-after'], 'string');
    const plain = await refreshRequest(server, first.body.refresh_token, me);
    assert.equal(plain.status, 200, plain.text);
  });
});
