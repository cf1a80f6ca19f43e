/** Identifier and token generation (parity: docs/reference-notes.md §10.2 — short ids for entities, UUID v4 tokens). */
import { randomFillSync, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes are drawn from the system 4 KiB at a time: one call per request cost more than the id itself.
 * Each byte is used once.
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** A random, URL-safe entity id (10 base-62 characters, ~59 bits). */
export function newId(length = 10): string {
  // Rejection sampling keeps the distribution uniform over the 62 characters.
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

/** A random token (UUID v4), used for API sessions, sessions, enrollments and CA verification. */
export const newToken = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
