/** Token derivation, hashing and the storable JWT form (src/model/tokens.ts), and filters on hashed fields. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { jwtFromTemplate, jwtTemplate, tokenHash, tokenMinter } from '../../../src/model/tokens.js';
import { parseFilter } from '../../../src/model/filter/parser.js';
import { checkFilter } from '../../../src/model/filter/typecheck.js';
import type { FieldTable } from '../../../src/model/filter/fields.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

test('a token is a UUID v4 fixed by the key, the kind and the record id', () => {
  const a = tokenMinter(keyA);
  const t = a.token('api-session', 'abc');
  assert.match(t, UUID_V4);
  assert.equal(tokenMinter(Buffer.from(keyA)).token('api-session', 'abc'), t, 'deterministic');
  const others = [
    a.token('session', 'abc'),
    a.token('enrollment', 'abc'),
    a.token('api-session', 'abd'),
    tokenMinter(keyB).token('api-session', 'abc'),
  ];
  assert.equal(new Set([t, ...others]).size, 5, 'kind, id and key each change the token');
  for (let i = 0; i < 200; i++) assert.match(a.token('session', `id-${i}`), UUID_V4);
  assert.throws(() => tokenMinter(Buffer.alloc(16)), /32 bytes/);
});

test('the derivation is pinned: HMAC-SHA256(key, "edgectl-token-v1:" kind ":" id), first 16 bytes with UUID v4 bits', () => {
  // Stored hashes depend on this exact derivation: changing it would orphan every outstanding token.
  const b = createHmac('sha256', keyA).update('edgectl-token-v1:enrollment:rec-1').digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  const expected = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  assert.equal(tokenMinter(keyA).token('enrollment', 'rec-1'), expected);
});

test('tokenHash is SHA-256 in hex', () => {
  assert.equal(tokenHash('x'), createHash('sha256').update('x').digest('hex'));
  assert.match(tokenHash('11111111-1111-4111-8111-111111111111'), /^[0-9a-f]{64}$/);
});

test('a JWT template holds no token and gives back the identical, still valid JWT', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const token = tokenMinter(keyA).token('enrollment', 'e1');
  const jwt = await new SignJWT({ em: 'ott' })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setIssuer('https://ctrl.example:1280')
    .setSubject('identity-1')
    .setJti(token)
    .setExpirationTime(Math.floor(Date.now() / 1000) + 3600)
    .sign(privateKey);
  const template = jwtTemplate(jwt, token);
  assert.ok(!template.includes(token));
  assert.ok(!Buffer.from(template.split('.')[1]!, 'base64url').toString().includes(token));
  const back = jwtFromTemplate(template, token);
  assert.equal(back, jwt);
  const { payload } = await jwtVerify(back, publicKey);
  assert.equal(payload.jti, token);
  // The wrong token gives a JWT whose signature fails.
  await assert.rejects(jwtVerify(jwtFromTemplate(template, tokenMinter(keyB).token('enrollment', 'e1')), publicKey));
  assert.throws(() => jwtTemplate(jwt, tokenMinter(keyB).token('enrollment', 'e1')), /jti/);
  assert.throws(() => jwtTemplate('not-a-jwt', token), /compact JWT/);
  assert.equal(jwtFromTemplate('', token), '', 'an unsigned placeholder stays empty');
});

const fields: FieldTable = {
  id: { kind: 'scalar', type: 'string', column: 'id' },
  token: { kind: 'scalar', type: 'string', column: 'tokenHash', hashed: true },
};
const check = (text: string) => checkFilter(parseFilter(text), fields);

test('filters on a hashed field compare hashes for =, !=, in and not in, and refuse other operations', () => {
  assert.deepEqual(check('token = "abc"').predicate, {
    kind: 'compare',
    subject: { kind: 'column', field: 'token', column: 'tokenHash', type: 'string', hashed: true },
    as: 'string',
    op: '=',
    value: tokenHash('abc'),
  });
  const ne = check('token != "abc"').predicate;
  assert.equal(ne?.kind === 'compare' && ne.value, tokenHash('abc'));
  const inList = check('token not in ["a", "b"]').predicate;
  assert.deepEqual(inList?.kind === 'in' && [inList.negated, inList.values], [true, [tokenHash('a'), tokenHash('b')]]);
  assert.equal(check('token = null').predicate?.kind, 'isNull');
  for (const bad of [
    'token contains "a"',
    'token icontains "a"',
    'token not contains "a"',
    'token < "a"',
    'token >= "a"',
  ]) {
    assert.throws(
      () => check(bad),
      (e: { code?: string; message?: string }) =>
        e.code === 'INVALID_FILTER' || /can only be tested/.test(String(e.message)),
      bad,
    );
  }
  // Plain fields are untouched.
  const plain = check('id = "abc"').predicate;
  assert.equal(plain?.kind === 'compare' && plain.value, 'abc');
});
