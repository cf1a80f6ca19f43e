/**
 * The master key and the values sealed under it (docs/decisions.md, "Shared controller secrets"): a value opens
 * only with the key and the name it was sealed with, never when altered, and the key never shows in print.
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { MasterKey, newSalt, saltOf, seal, SealError, unseal } from '../../../src/pki/index.js';

const KEY = 'correct-horse-battery-staple-0123456789';
const isSealError = (reason: SealError['reason']) => (e: unknown) => e instanceof SealError && e.reason === reason;

describe('master key', () => {
  it('is at least 32 characters long, and the refusal does not repeat it', () => {
    assert.throws(
      () => new MasterKey('x'.repeat(31)),
      (e: Error) => /at least 32 characters/.test(e.message),
    );
    assert.throws(
      () => new MasterKey('short-secret'),
      (e: Error) => !e.message.includes('short-secret'),
    );
    assert.ok(new MasterKey('x'.repeat(32)));
  });

  it('never shows itself in JSON, strings or inspection', () => {
    const key = new MasterKey(KEY);
    const holder = { masterKey: key };
    for (const text of [JSON.stringify(holder), String(key), inspect(holder), `${key}`])
      assert.ok(!text.includes(KEY) && text.includes('[master key]'), text);
  });
});

describe('sealed values', () => {
  it('open with the key and name they were sealed with', async () => {
    const key = new MasterKey(KEY);
    const sealed = await seal(key, 'name-a', 'the secret text');
    assert.match(sealed, /^edgectl-sealed-v1\.scrypt-15-8-1\.[\w-]+\.[\w-]+$/);
    assert.ok(!sealed.includes('secret'));
    assert.equal(await unseal(key, 'name-a', sealed), 'the secret text');
    // Another instance of the same key text (another replica) opens it too.
    assert.equal(await unseal(new MasterKey(KEY), 'name-a', sealed), 'the secret text');
  });

  it('do not open with another key, under another name, or altered', async () => {
    const key = new MasterKey(KEY);
    const sealed = await seal(key, 'name-a', 'the secret text');
    await assert.rejects(unseal(new MasterKey(KEY + '!'), 'name-a', sealed), isSealError('wrong-key'));
    await assert.rejects(unseal(key, 'name-b', sealed), isSealError('wrong-key'));
    const body = sealed.split('.');
    const raw = Buffer.from(body[3]!, 'base64url');
    raw[raw.length - 1]! ^= 1;
    body[3] = raw.toString('base64url');
    await assert.rejects(unseal(key, 'name-a', body.join('.')), isSealError('wrong-key'));
  });

  it('values sealed with one salt share it; each seal has its own nonce', async () => {
    const key = new MasterKey(KEY);
    const salt = newSalt();
    const a = await seal(key, 'n', 'same', salt);
    const b = await seal(key, 'n', 'same', salt);
    assert.notEqual(a, b);
    assert.deepEqual(saltOf(a), salt);
    assert.deepEqual(saltOf(b), salt);
    assert.equal(saltOf('not sealed'), undefined);
  });

  it('refuses text that is not a sealed value, or asks for unbounded key derivation', async () => {
    const key = new MasterKey(KEY);
    const sealed = await seal(key, 'n', 'v');
    for (const bad of ['', 'plain', sealed.replace('scrypt-15-8-1', 'scrypt-30-8-1'), sealed.replace('v1', 'v9')])
      await assert.rejects(unseal(key, 'n', bad), isSealError('malformed'), bad.slice(0, 40));
  });

  it('sealed at another cost name it, open with any instance of the key, and the cost stays within bounds', async () => {
    const cheap = new MasterKey(KEY).sealingAt({ log2N: 10, r: 8, p: 1 });
    const sealed = await seal(cheap, 'n', 'v');
    assert.match(sealed, /^edgectl-sealed-v1\.scrypt-10-8-1\./);
    assert.equal(await unseal(new MasterKey(KEY), 'n', sealed), 'v');
    // The key it came from still seals at the production cost.
    assert.match(await seal(new MasterKey(KEY), 'n', 'v'), /^edgectl-sealed-v1\.scrypt-15-8-1\./);
    for (const params of [
      { log2N: 9, r: 8, p: 1 },
      { log2N: 21, r: 8, p: 1 },
      { log2N: 10, r: 0, p: 1 },
      { log2N: 10, r: 8, p: 5 },
    ])
      assert.throws(() => new MasterKey(KEY).sealingAt(params), /out of bounds/);
  });
});
