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

/** Characters of the time prefix of an entity id: milliseconds since the epoch in base 62 (until the year 5,000+). */
const TIME_CHARS = 7;

/**
 * A new entity's id: its creation time in milliseconds (7 base-62 characters, fixed width) then 9 random ones
 * (~53 bits, so ids made in the same millisecond do not meet). The alphabet is in ASCII order, so ids sort by
 * creation time: a new row's key lands at the end of each index on it instead of on a random page of a large
 * one, which is what keeps a create's write-ahead log small on a large store (docs/decisions.md, "Time-ordered
 * ids"). The time it tells is the entity's `createdAt`, which its readers see anyway.
 */
export function newEntityId(now = Date.now()): string {
  let time = '';
  for (let t = Math.floor(now), i = 0; i < TIME_CHARS; i++, t = Math.floor(t / 62)) time = ALPHABET[t % 62] + time;
  return time + newId(16 - TIME_CHARS);
}

/** A random token (UUID v4), used for API sessions, sessions, enrollments and CA verification. */
export const newToken = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
