/**
 * The token key: the secret from which API-session, session and enrollment tokens are derived
 * (src/model/tokens.ts). It lives in the data dir beside the store, never inside it, so a copy of the store
 * alone grants nothing. Created once (mode 0600) and reused; losing it ends outstanding API sessions and
 * re-keys enrollments at the next start (model/services/enrollment/token-reconcile.ts).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { TOKEN_KEY_BYTES } from '../model/tokens.js';

export const TOKEN_KEY_FILE = 'token.key';

const KEY_TEXT = new RegExp(`^[0-9a-f]{${TOKEN_KEY_BYTES * 2}}\\s*$`);

/** Reads `<dataDir>/token.key` (hex), creating it with a fresh random key when absent. */
export function loadOrCreateTokenKey(dataDir: string): { key: Buffer; created: boolean } {
  const file = join(dataDir, TOKEN_KEY_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    const key = randomBytes(TOKEN_KEY_BYTES);
    // `wx`: never overwrite a key another process wrote meanwhile (the data dir lock should prevent that anyway).
    writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    return { key, created: true };
  }
  // Never echo the content: it is the secret.
  if (!KEY_TEXT.test(text))
    throw new Error(
      `${file} is not a token key (${TOKEN_KEY_BYTES * 2} hex digits); restore it or remove it to start with a new key`,
    );
  return { key: Buffer.from(text.trim(), 'hex'), created: false };
}
