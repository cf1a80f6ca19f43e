/**
 * The master key of controllers that share one PostgreSQL store, and the sealing of secrets under it
 * (docs/decisions.md, "Shared controller secrets").
 *
 * Construction, for each sealed value:
 * - a 256-bit key derived from the master key by scrypt (N = 2^15, r = 8, p = 1: 32 MiB and ~0.1 s, once per
 *   salt and process) with a random 16-byte salt kept beside the value: a master key a person chose is still
 *   costly to guess from a stolen database;
 * - AES-256-GCM with a random 96-bit nonce;
 * - associated data naming the value's purpose and name, so a value moved to another name, or from an export
 *   file into the store, does not open.
 *
 * Text form: `edgectl-sealed-v1.scrypt-15-8-1.<salt>.<nonce | tag | ciphertext>` (base64url), self-describing, so
 * values sealed with other salts or other parameters open alike (the test controllers seal at N = 2^10). The master key itself is never
 * written anywhere; {@link MasterKey} keeps it from logs and JSON.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';
import { inspect } from 'node:util';

/** The shortest master key accepted, in characters. */
export const MASTER_KEY_MIN_LENGTH = 32;

const FORMAT = 'edgectl-sealed-v1';
const SALT_BYTES = 16;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface ScryptParams {
  readonly log2N: number;
  readonly r: number;
  readonly p: number;
}

/** The parameters new values are sealed with. */
const DEFAULT_PARAMS: ScryptParams = { log2N: 15, r: 8, p: 1 };
/** Bounds on what a sealed value may ask for, so a forged one cannot make a start spend minutes or gigabytes. */
const MIN_LOG2N = 10;
const MAX_LOG2N = 20;
const MAX_R = 16;
const MAX_P = 4;

const paramsText = (p: ScryptParams): string => `scrypt-${p.log2N}-${p.r}-${p.p}`;
const withinBounds = (p: ScryptParams): boolean =>
  p.log2N >= MIN_LOG2N && p.log2N <= MAX_LOG2N && p.r >= 1 && p.r <= MAX_R && p.p >= 1 && p.p <= MAX_P;

/** Why a sealed value did not open. Its message never holds any part of the key or the value. */
export class SealError extends Error {
  constructor(
    /** `wrong-key`: the authentication failed (another master key, another name, or altered); `malformed`: not a sealed value. */
    readonly reason: 'wrong-key' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'SealError';
  }
}

/**
 * A master key: at least {@link MASTER_KEY_MIN_LENGTH} characters. Derived keys are kept per salt for the life
 * of the object. It shows as `[master key]` in logs, `inspect` and JSON, so a config object that carries it
 * can be printed without giving it away.
 */
export class MasterKey {
  readonly #text: string;
  readonly #derived = new Map<string, Promise<Buffer>>();
  /**
   * @param sealParams the scrypt cost {@link seal} uses; the production one unless {@link sealingAt} gives
   *   another.
   */
  constructor(
    text: string,
    readonly sealParams: ScryptParams = DEFAULT_PARAMS,
  ) {
    if ([...text].length < MASTER_KEY_MIN_LENGTH)
      throw new Error(`the master key must be at least ${MASTER_KEY_MIN_LENGTH} characters long`);
    if (!withinBounds(sealParams)) throw new Error(`scrypt parameters out of bounds: ${paramsText(sealParams)}`);
    this.#text = text;
  }

  /**
   * The same key sealing new values at another scrypt cost (every value opens at the cost it names). Tests
   * only, as the cheap password cost is: a test controller on PostgreSQL otherwise spends ~0.1 s of CPU on the
   * derivation for the secrets it creates, and each replica again for the ones it opens.
   */
  sealingAt(params: ScryptParams): MasterKey {
    return new MasterKey(this.#text, Object.freeze({ ...params }));
  }

  /** The AES key of `salt` under `params` (derived once per salt). */
  derive(params: ScryptParams, salt: Buffer): Promise<Buffer> {
    const id = `${paramsText(params)}.${salt.toString('base64url')}`;
    let key = this.#derived.get(id);
    if (!key) {
      const N = 2 ** params.log2N;
      key = new Promise<Buffer>((resolve, reject) =>
        scrypt(
          this.#text.normalize('NFC'),
          salt,
          32,
          { N, r: params.r, p: params.p, maxmem: 256 * N * params.r },
          (err, out) => (err ? reject(err) : resolve(out)),
        ),
      );
      this.#derived.set(id, key);
    }
    return key;
  }

  toString(): string {
    return '[master key]';
  }
  toJSON(): string {
    return '[master key]';
  }
  [inspect.custom](): string {
    return '[master key]';
  }
}

interface Parsed {
  params: ScryptParams;
  salt: Buffer;
  body: Buffer;
}

function parse(sealed: string): Parsed {
  const malformed = () => new SealError('malformed', 'not a sealed value of this edgectl');
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== FORMAT) throw malformed();
  const m = /^scrypt-(\d{1,2})-(\d{1,2})-(\d)$/.exec(parts[1]!);
  if (!m) throw malformed();
  const params = { log2N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (!withinBounds(params)) throw malformed();
  const salt = Buffer.from(parts[2]!, 'base64url');
  const body = Buffer.from(parts[3]!, 'base64url');
  if (salt.length < SALT_BYTES || body.length < NONCE_BYTES + TAG_BYTES) throw malformed();
  return { params, salt, body };
}

/** A fresh salt for {@link seal}; values sealed together may share one (one derivation opens them all). */
export const newSalt = (): Buffer => randomBytes(SALT_BYTES);

/** The salt a sealed value was made with, to seal more values alike; undefined when it is not one. */
export function saltOf(sealed: string): Buffer | undefined {
  try {
    return parse(sealed).salt;
  } catch {
    return undefined;
  }
}

/** Seals `plaintext` under `key`, bound to `aad` (purpose and name of the value). */
export async function seal(key: MasterKey, aad: string, plaintext: string, salt: Buffer = newSalt()): Promise<string> {
  const aes = await key.derive(key.sealParams, salt);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', aes, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const body = Buffer.concat([nonce, cipher.getAuthTag(), ct]).toString('base64url');
  return `${FORMAT}.${paramsText(key.sealParams)}.${salt.toString('base64url')}.${body}`;
}

/**
 * The plaintext of a value {@link seal} made with the same key and `aad`.
 * @throws SealError `wrong-key` when it does not authenticate, `malformed` when it is no sealed value.
 */
export async function unseal(key: MasterKey, aad: string, sealed: string): Promise<string> {
  const { params, salt, body } = parse(sealed);
  const aes = await key.derive(params, salt);
  try {
    const decipher = createDecipheriv('aes-256-gcm', aes, body.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(body.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('wrong-key', 'the value does not open with this master key');
  }
}
