/**
 * Small secrets sealed at rest with AES-256-GCM (docs/decisions.md, "TOTP MFA"): the key is derived from the
 * data dir's token key (model/tokens.ts), so a copied store file alone does not give the secrets away. The
 * associated data binds a sealed value to its record and field: moved to another row it does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** `v1.<base64url(iv | tag | ciphertext)>` */
export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url')}`;
}

/** The plaintext, or undefined when the value was sealed under another key, for another record, or altered. */
export function open(key: Buffer, sealed: string, aad: string): string | undefined {
  const [version, body, ...rest] = sealed.split('.');
  if (version !== VERSION || body === undefined || rest.length > 0) return undefined;
  const raw = Buffer.from(body, 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
