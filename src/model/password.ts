/**
 * Password hashing and the password rules of authentication policies.
 *
 * Argon2id at OWASP's recommended minimum (m=19 MiB, t=2, p=1) with a random per-password salt; the PHC
 * string stores the parameters, so they can be raised later without invalidating old hashes.
 * Verification of an unknown user runs against a fixed dummy hash so both failure paths cost the same.
 */
import { hash, hashRaw, verify } from '@node-rs/argon2';
import { fieldError } from './errors.js';

/** Argon2id's cost: memory in KiB and passes (one lane, 32-byte output, whatever the cost). */
export interface PasswordCost {
  readonly memoryCost: number;
  readonly timeCost: number;
}

/**
 * The cost of every password hash a controller or an offline command makes: OWASP's recommended minimum. No
 * configuration changes it; only the test servers pass a cheaper one (`Settings.passwordCost`), and a test
 * checks that a controller started without one hashes at this cost.
 */
export const PASSWORD_COST: PasswordCost = Object.freeze({ memoryCost: 19456, timeCost: 2 });

const options = (cost: PasswordCost) => ({ algorithm: 2 /* Argon2id */, parallelism: 1, outputLen: 32, ...cost });
const OPTIONS = options(PASSWORD_COST);

/**
 * The Argon2id functions every hash and check goes through. A seam for the timing bench only
 * (bench/auth-timing.ts), which swaps in a fixed-cost check so the database work of the two failure
 * paths is what it compares; nothing in src/ replaces them.
 */
export const argon2 = { hash, hashRaw, verify };

/**
 * Hashes a new password. `db` is the caller's executor: Argon2id never runs inside a database transaction
 * (decisions.md, "No Argon2id in transactions": one held across it stalls every request), so a caller in a
 * transaction is a programming error and is refused before any hashing, which tests rely on.
 */
export async function hashPassword(
  password: string,
  db: { readonly isTransaction: boolean },
  cost: PasswordCost = PASSWORD_COST,
): Promise<string> {
  if (db.isTransaction) throw new Error('Argon2id must not run inside a database transaction');
  return argon2.hash(password, options(cost));
}

/**
 * Argon2id of short secrets that share one salt (an MFA enrollment's recovery codes, docs/decisions.md "TOTP
 * MFA"): a presented code is hashed once and compared with every stored hash, instead of one verification per
 * stored code. Base64. Always at {@link PASSWORD_COST} (a presented code must hash as its enrollment's did, in any
 * process), with the same no-transaction rule as passwords.
 */
export async function hashWithSalt(
  secret: string,
  salt: Uint8Array,
  db: { readonly isTransaction: boolean },
): Promise<string> {
  if (db.isTransaction) throw new Error('Argon2id must not run inside a database transaction');
  const { algorithm, memoryCost, timeCost, parallelism, outputLen } = OPTIONS;
  return (await argon2.hashRaw(secret, { algorithm, memoryCost, timeCost, parallelism, outputLen, salt })).toString(
    'base64',
  );
}

/** The dummy hash compared against for unknown users, per cost (a constant each). */
const dummyHashes = new Map<string, Promise<string>>();

/**
 * How many verifications ran against stored hashes and against the dummy hash, since start. Observability for
 * tests and benches: the lockout promises that at most maxAttempts guesses are verified (decisions.md).
 */
export const verificationCounts = { stored: 0, dummy: 0 };

/**
 * Checks a password against a stored hash (at the cost the hash names); with no hash (unknown user) it spends the
 * time of a check at `cost`, the cost new hashes get, and fails.
 */
export async function verifyPassword(
  stored: string | null | undefined,
  password: string,
  cost: PasswordCost = PASSWORD_COST,
): Promise<boolean> {
  if (!stored) {
    verificationCounts.dummy++;
    const key = `${cost.memoryCost}/${cost.timeCost}`;
    let dummy = dummyHashes.get(key);
    if (!dummy) dummyHashes.set(key, (dummy = argon2.hash('edgectl-dummy-password-for-timing', options(cost))));
    await argon2.verify(await dummy, password).catch(() => false);
    return false;
  }
  verificationCounts.stored++;
  try {
    return await argon2.verify(stored, password);
  } catch {
    return false;
  }
}

export interface PasswordRules {
  minPasswordLength: number;
  requireMixedCase: boolean;
  requireNumberChar: boolean;
  requireSpecialChar: boolean;
}

/**
 * Enforces an auth policy's password rules (decisions.md: enforced wherever a password is set).
 * The error names the rule that failed.
 */
export function checkPasswordRules(field: string, password: string, rules: PasswordRules): void {
  const min = Math.max(5, rules.minPasswordLength ?? 5);
  if (password.length < min)
    throw fieldError(field, `password must be at least ${min} characters (minPasswordLength)`, '******');
  if (password.length > 100) throw fieldError(field, 'password must be at most 100 characters', '******');
  if (rules.requireMixedCase && !(/[a-z]/.test(password) && /[A-Z]/.test(password))) {
    throw fieldError(field, 'password must contain upper and lower case letters (requireMixedCase)', '******');
  }
  if (rules.requireNumberChar && !/[0-9]/.test(password)) {
    throw fieldError(field, 'password must contain a number (requireNumberChar)', '******');
  }
  if (rules.requireSpecialChar && !/[^A-Za-z0-9]/.test(password)) {
    throw fieldError(field, 'password must contain a special character (requireSpecialChar)', '******');
  }
}
