/**
 * The master key a PostgreSQL store needs (docs/decisions.md, "Shared controller secrets"): from
 * `EDGECTL_MASTER_KEY`, `store.masterKey` or `store.masterKeyFile` (owner-only), required with a PostgreSQL store
 * and never repeated in a message or shown when the config is printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { loadConfig, storeSettings } from '../../../src/daemon/config.js';
import { MasterKey, seal, unseal } from '../../../src/pki/index.js';

const URL_ = 'postgres://postgres@127.0.0.1:5432/whatever';
const KEY = 'a-master-key-of-forty-characters-0123456';

function configFile(yaml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'edgectl-mk-')), 'c.yml');
  writeFileSync(file, yaml);
  return file;
}

/** Whether two master keys are the same key: what one seals, the other opens. */
async function sameKey(a: MasterKey | undefined, b: MasterKey): Promise<boolean> {
  assert.ok(a);
  return (await unseal(a, 'n', await seal(b, 'n', 'v')).catch(() => undefined)) === 'v';
}

test('a PostgreSQL store without a master key is refused, naming the three ways to give it', () => {
  assert.throws(
    () => loadConfig({ flags: { db: URL_ }, env: {} }),
    (e: Error) =>
      /EDGECTL_MASTER_KEY/.test(e.message) &&
      /store\.masterKey\b/.test(e.message) &&
      /store\.masterKeyFile/.test(e.message),
  );
  // SQLite needs none.
  assert.equal(loadConfig({ flags: {}, env: {} }).masterKey, undefined);
});

test('the environment, then store.masterKey, then store.masterKeyFile', async () => {
  const inline = configFile(`store:\n  url: ${URL_}\n  masterKey: ${KEY}-inline\n`);
  const fromEnv = loadConfig({ flags: { config: inline }, env: { EDGECTL_MASTER_KEY: KEY } });
  assert.ok(await sameKey(fromEnv.masterKey, new MasterKey(KEY)));
  const fromFile = loadConfig({ flags: { config: inline }, env: {} });
  assert.ok(await sameKey(fromFile.masterKey, new MasterKey(`${KEY}-inline`)));

  const keyFile = join(mkdtempSync(join(tmpdir(), 'edgectl-mk-')), 'master.key');
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  const viaFile = configFile(`store:\n  url: ${URL_}\n  masterKeyFile: ${keyFile}\n`);
  // One trailing newline is not part of the key: the file and the variable give the same key.
  assert.ok(await sameKey(loadConfig({ flags: { config: viaFile }, env: {} }).masterKey, new MasterKey(KEY)));
  assert.ok(await sameKey(storeSettings({ flags: { config: viaFile }, env: {} }).masterKey, new MasterKey(KEY)));
});

test('a key file other users may read is refused; so is a short key, without repeating it', () => {
  const keyFile = join(mkdtempSync(join(tmpdir(), 'edgectl-mk-')), 'master.key');
  writeFileSync(keyFile, KEY);
  chmodSync(keyFile, 0o644);
  const cfg = configFile(`store:\n  url: ${URL_}\n  masterKeyFile: ${keyFile}\n`);
  assert.throws(
    () => loadConfig({ flags: { config: cfg }, env: {} }),
    (e: Error) => /mode 0644/.test(e.message) && /chmod 600/.test(e.message) && !e.message.includes(KEY),
  );
  chmodSync(keyFile, 0o600);
  assert.ok(loadConfig({ flags: { config: cfg }, env: {} }).masterKey);

  assert.throws(
    () => loadConfig({ flags: { db: URL_ }, env: { EDGECTL_MASTER_KEY: 'too-short-secret' } }),
    (e: Error) => /EDGECTL_MASTER_KEY: .*at least 32 characters/.test(e.message) && !e.message.includes('too-short'),
  );
  const both = configFile(`store:\n  masterKey: ${KEY}\n  masterKeyFile: ${keyFile}\n`);
  assert.throws(() => loadConfig({ flags: { config: both }, env: {} }), /not both/);
});

test('a config holding the master key prints without it', () => {
  const cfg = loadConfig({ flags: { db: URL_ }, env: { EDGECTL_MASTER_KEY: KEY } });
  for (const text of [JSON.stringify(cfg), inspect(cfg, { depth: 5 })]) assert.ok(!text.includes(KEY));
});
