/**
 * TOTP MFA of an identity (parity: docs/reference-notes.md §6; docs/decisions.md "TOTP MFA").
 *
 * - Codes: RFC 6238, SHA-1, 6 digits, 30 s; the current step and one either side are accepted, and the newest
 *   accepted step is remembered per enrollment: a code whose step is not newer is refused (RFC 6238 §5.2).
 * - The secret is sealed at rest (model/secret-box.ts, key derived from the token key).
 * - 20 recovery codes, single use, stored as Argon2id hashes under one salt per enrollment, so a presented code
 *   costs one hash whatever the number of codes. Their clear text is kept (sealed) only until verification,
 *   for the enrollment detail; afterwards it exists nowhere, and only regenerating shows new codes.
 *
 * - An unverified enrollment belongs to the API session that started it: only that session sees its secret and
 *   recovery codes and can verify it; it goes with that session.
 * - Wrong codes against a verified enrollment are counted and bounded (mfa-failures.ts).
 *
 * A code is consumed in the same transaction as what it authorises (verification, deletion, new recovery
 * codes, the session's factor), so a refused request changes nothing but the count of wrong codes, and a code
 * serves one request.
 */
import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { generateSecret, verify as verifyTotp } from 'otplib';
import { withTx, type Executor } from '../../../store/db.js';
import {
  acceptTimeStep,
  apiSessionAuthQueries,
  deleteMfaOfIdentity,
  identitiesWithVerifiedMfa,
  insertMfa,
  markMfaVerified,
  mfaOfIdentity,
  setApiSessionFactors,
  setRecoveryHashes,
  type MfaRecord,
} from '../../../store/mfas.js';
import { identityExists } from '../../../store/identities.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { recordEvents } from '../../events/event.js';
import { apiSessionEvent } from '../../events/auth-events.js';
import { DomainError, notFound } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import { hashWithSalt } from '../../password.js';
import { open, seal } from '../../secret-box.js';
import { isMfaQuery } from '../authentication/auth-queries.js';
import { emitMfaPassed, emitMfaRemoved } from './mfa-events.js';
import {
  clearOwnFailures,
  isLocked,
  lockedError,
  logFailure,
  recentFailures,
  recordFailure,
  type CodeKind,
  type FailureOutcome,
  type MfaCaller,
} from './mfa-failures.js';
import { clearMfaPassed, recordMfaPassed } from '../../posture/posture-of.js';
import { removeFailingSessions } from '../../posture/responses.js';
import { recordOtherOperation } from '../../events/operation-events.js';

export const DEFAULT_TOTP_ISSUER = 'edgectl';
export const RECOVERY_CODE_COUNT = 20;
const RECOVERY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const RECOVERY_CODE = /^[A-Z2-7]{6}$/;
const TOTP_CODE = /^\d{6}$/;
const PERIOD_SECONDS = 30;
/** The mask shown for each remaining recovery code once their clear text is gone. */
export const MASKED_CODE = '******';

const invalidCode = () => new DomainError('MFA_INVALID_TOKEN');
const noMfa = () => notFound(undefined);

const key = (ctx: Ctx) => ctx.tokens.key('mfa-secrets');
const secretAad = (mfaId: string) => `mfa:${mfaId}:secret`;
const codesAad = (mfaId: string) => `mfa:${mfaId}:recovery-codes`;

function newRecoveryCodes(): string[] {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) {
    let c = '';
    for (let i = 0; i < 6; i++) c += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
    codes.add(c);
  }
  return [...codes];
}

/** New recovery codes with their salt and hashes; Argon2id, so never inside a transaction. */
async function hashedRecoveryCodes(ctx: Ctx): Promise<{ codes: string[]; salt: string; hashes: string[] }> {
  const codes = newRecoveryCodes();
  const salt = randomBytes(16);
  const hashes = await Promise.all(codes.map((c) => hashWithSalt(c, salt, ctx.db)));
  return { codes, salt: salt.toString('base64'), hashes };
}

/** otpauth URL of an enrollment (parity: §6): issuer and account name URL-encoded, query keys sorted. */
export function provisioningUrl(issuer: string, identityName: string, secret: string): string {
  const i = encodeURIComponent(issuer);
  return `otpauth://totp/${i}:${encodeURIComponent(identityName)}?issuer=${i}&secret=${secret}`;
}

/**
 * Starts an enrollment bound to the caller's API session; any existing one, verified or not, is 409
 * MFA_EXISTS. Answers the enrollment id.
 */
export async function enrollMfa(ctx: Ctx, caller: MfaCaller): Promise<string> {
  const { identityId } = caller;
  if (await mfaOfIdentity(ctx.db, identityId)) throw new DomainError('MFA_EXISTS');
  const id = newEntityId();
  const secret = generateSecret({ length: 20 });
  const recovery = await hashedRecoveryCodes(ctx);
  await withTx(ctx.db, async (trx) => {
    if (await mfaOfIdentity(trx, identityId)) throw new DomainError('MFA_EXISTS');
    await insertMfa(trx, {
      id,
      identityId,
      secretSealed: seal(key(ctx), secret, secretAad(id)),
      recoverySalt: recovery.salt,
      recoveryHashes: recovery.hashes,
      recoveryCodesSealed: seal(key(ctx), JSON.stringify(recovery.codes), codesAad(id)),
      apiSessionId: caller.apiSessionId,
      createdAt: iso(ctx.now()),
    });
    // Its secret and recovery codes are never in the event.
    await recordOtherOperation(withDb(ctx, trx), 'mfas', identityId, 'created', 'mfa-enrolled', null, {
      id,
      identityId,
      isVerified: false,
    });
  });
  return id;
}

async function requireMfa(db: Executor, identityId: string): Promise<MfaRecord> {
  const mfa = await mfaOfIdentity(db, identityId);
  if (!mfa) throw noMfa();
  return mfa;
}

/** Whether the enrollment is unverified and was started by the caller's session: only then are its parts shown. */
const ownPending = (m: MfaRecord, caller: MfaCaller) => !m.isVerified && m.apiSessionId === caller.apiSessionId;

/** The clear secret of an enrollment; undefined when it cannot be opened (another token key). */
const secretOf = (ctx: Ctx, m: MfaRecord) => open(key(ctx), m.secretSealed, secretAad(m.id));

function unverifiedParts(ctx: Ctx, m: MfaRecord, identityName: string) {
  const secret = secretOf(ctx, m);
  const codes = m.recoveryCodesSealed ? open(key(ctx), m.recoveryCodesSealed, codesAad(m.id)) : undefined;
  return {
    provisioningUrl: secret
      ? provisioningUrl(ctx.settings.totpIssuer ?? DEFAULT_TOTP_ISSUER, identityName, secret)
      : undefined,
    recoveryCodes: codes ? (JSON.parse(codes) as string[]) : [],
  };
}

/**
 * The enrollment detail; `provisioningUrl` and `recoveryCodes` only while unverified, and only to the session
 * that started it (other sessions see that one is pending). None: 404.
 */
export async function mfaDetail(ctx: Ctx, caller: MfaCaller, identityName: string): Promise<Record<string, unknown>> {
  const m = await requireMfa(ctx.db, caller.identityId);
  const out: Record<string, unknown> = {
    id: m.id,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    tags: m.tags,
    _links: { self: { href: './current-identity/mfa' } },
    isVerified: m.isVerified,
  };
  if (ownPending(m, caller)) {
    const parts = unverifiedParts(ctx, m, identityName);
    if (parts.provisioningUrl) out.provisioningUrl = parts.provisioningUrl;
    out.recoveryCodes = parts.recoveryCodes;
  }
  return out;
}

/** The provisioning URL a QR code shows: only while unverified, to the session that started it (else 404). */
export async function mfaQrUrl(ctx: Ctx, caller: MfaCaller, identityName: string): Promise<string> {
  const m = await requireMfa(ctx.db, caller.identityId);
  const url = ownPending(m, caller) ? unverifiedParts(ctx, m, identityName).provisioningUrl : undefined;
  if (!url) throw noMfa();
  return url;
}

/**
 * Checks a TOTP code against the enrollment and, if valid and newer than the last accepted step, records its
 * step (inside the caller's transaction). False for anything else.
 */
async function consumeTotp(ctx: Ctx, trx: Executor | undefined, m: MfaRecord, code: string): Promise<boolean> {
  if (!TOTP_CODE.test(code)) return false;
  const secret = secretOf(ctx, m);
  if (!secret) return false;
  let step: number;
  try {
    const r = await verifyTotp({
      secret,
      token: code,
      epoch: Math.floor(ctx.now().getTime() / 1000),
      period: PERIOD_SECONDS,
      // One step either side (docs/decisions.md, TOTP).
      epochTolerance: PERIOD_SECONDS,
      afterTimeStep: m.lastTimeStep ?? undefined,
    });
    if (!r.valid || !('timeStep' in r)) return false;
    step = r.timeStep;
  } catch {
    return false;
  }
  // Without a transaction: a check only, nothing is consumed.
  return trx ? acceptTimeStep(trx, m.id, step, iso(ctx.now())) : true;
}

/** The Argon2id hash of a presented recovery code under the enrollment's salt (computed outside transactions). */
async function recoveryHash(ctx: Ctx, m: MfaRecord, code: string): Promise<Buffer | undefined> {
  const c = code.toUpperCase();
  if (!m.isVerified || !RECOVERY_CODE.test(c)) return undefined;
  return Buffer.from(await hashWithSalt(c, Buffer.from(m.recoverySalt, 'base64'), ctx.db), 'base64');
}

/**
 * Removes the recovery code with this hash (inside the caller's transaction); false when there is none. With
 * `check` only looks.
 */
async function consumeRecovery(ctx: Ctx, trx: Executor, m: MfaRecord, hash: Buffer, check = false): Promise<boolean> {
  const current = await mfaOfIdentity(trx, m.identityId);
  // The codes were regenerated (another salt) or the enrollment replaced since the hash was computed.
  if (!current || current.id !== m.id || current.recoverySalt !== m.recoverySalt) return false;
  let found = -1;
  // Every stored hash is compared, in constant time each, whichever matches.
  current.recoveryHashes.forEach((h, i) => {
    const stored = Buffer.from(h, 'base64');
    if (stored.length === hash.length && timingSafeEqual(stored, hash) && found < 0) found = i;
  });
  if (found < 0) return false;
  if (check) return true;
  const rest = current.recoveryHashes.filter((_, i) => i !== found);
  await setRecoveryHashes(trx, m.id, m.recoverySalt, rest, iso(ctx.now()));
  return true;
}

type Accepts = 'totp' | 'totp-or-recovery';

type Checked<T> = { ok: true; value: T } | { ok: false; locked?: CodeKind; failure?: FailureOutcome };

/**
 * Checks `code` and, in the same transaction, runs `then`: a wrong code is 401 MFA_INVALID_TOKEN and changes
 * nothing but the count of wrong codes. TOTP is tried first (cheap); a recovery code only when `accepts`
 * allows it and the code has its form. With `consume` false the code is only checked (not used up).
 *
 * Against a verified enrollment a presented code is first held against the locks and a wrong one is counted
 * (mfa-failures.ts), in the transaction that checks it, so concurrent guesses cannot overdraw the count. A
 * pending enrollment's secret is its session's own: nothing there to guess, nothing counted.
 */
async function withCode<T>(
  ctx: Ctx,
  caller: MfaCaller,
  m: MfaRecord,
  code: string | undefined,
  accepts: Accepts,
  then: (trx: Executor) => Promise<T>,
  consume = true,
): Promise<T> {
  if (typeof code !== 'string' || code.trim() === '') throw invalidCode();
  const code_ = code.trim();
  const kind: CodeKind = accepts === 'totp' || TOTP_CODE.test(code_) ? 'totp' : 'recovery';
  const counted = m.isVerified;
  // A locked kind is refused before a recovery code costs its hash.
  if (counted && isLocked(kind, (await recentFailures(ctx, ctx.db, m.id, caller)).total)) throw lockedError(kind);
  const hash = kind === 'recovery' ? await recoveryHash(ctx, m, code_) : undefined;
  const checked = await withTx(ctx.db, async (trx): Promise<Checked<T>> => {
    // Removed or replaced meanwhile: the code cannot be right, and there is nothing left to count against.
    if ((await mfaOfIdentity(trx, m.identityId))?.id !== m.id) return { ok: false };
    if (counted && isLocked(kind, (await recentFailures(ctx, trx, m.id, caller)).total))
      return { ok: false, locked: kind };
    const ok =
      kind === 'recovery'
        ? hash !== undefined && (await consumeRecovery(ctx, trx, m, hash, !consume))
        : await consumeTotp(ctx, consume ? trx : undefined, m, code_);
    if (!ok) return { ok: false, failure: counted ? await recordFailure(ctx, trx, m.id, caller) : undefined };
    if (counted) await clearOwnFailures(trx, m.id, caller);
    return { ok: true, value: await then(trx) };
  });
  if (checked.ok) return checked.value;
  if (checked.failure) logFailure(ctx, caller, checked.failure);
  throw checked.locked ? lockedError(checked.locked) : invalidCode();
}

/**
 * Marks an API session's MFA factor as passed: the MFA query leaves its outstanding queries, and its posture
 * records the pass (both in the transaction that consumes the code).
 */
async function passMfa(ctx: Ctx, trx: Executor, caller: MfaCaller, at: Date): Promise<void> {
  const queries = await apiSessionAuthQueries(trx, caller.apiSessionId);
  if (queries === undefined) return;
  await setApiSessionFactors(
    trx,
    caller.apiSessionId,
    { authQueries: queries.filter((q) => !isMfaQuery(q)), mfaPassedAt: iso(at) },
    iso(at),
  );
  await recordMfaPassed(trx, caller.apiSessionId, caller.identityId, at);
  const left = queries.filter((q) => !isMfaQuery(q));
  await recordEvents(withDb(ctx, trx), [
    apiSessionEvent({
      eventType: 'refreshed',
      id: caller.apiSessionId,
      identityId: caller.identityId,
      extra: { reason: 'second factor passed', fully_authenticated: left.length === 0 },
    }),
  ]);
}

export type { MfaCaller };

/**
 * Verifies a fresh enrollment with a TOTP code (none or already verified: 404). The caller's session passes
 * MFA with it, which completes a partial session waiting only for MFA (parity: §4.4).
 */
export async function verifyMfa(ctx: Ctx, caller: MfaCaller, code: string | undefined): Promise<void> {
  const m = await requireMfa(ctx.db, caller.identityId);
  // Another session's pending enrollment is not the caller's to verify (stricter than the reference).
  if (!ownPending(m, caller)) throw noMfa();
  const at = ctx.now();
  await withCode(ctx, caller, m, code, 'totp', async (trx) => {
    await markMfaVerified(trx, m.id, iso(at));
    const state = { id: m.id, identityId: caller.identityId };
    await recordOtherOperation(
      withDb(ctx, trx),
      'mfas',
      caller.identityId,
      'updated',
      'mfa-verified',
      { ...state, isVerified: false },
      { ...state, isVerified: true },
    );
    await passMfa(ctx, trx, caller, at);
  });
  emitMfaPassed(ctx, caller.apiSessionId, caller.identityId, at);
}

/**
 * Removes the identity's enrollment in the caller's transaction; with it, no API session of the identity
 * passes MFA as posture sees it. Answers whether there was one.
 */
async function removeMfa(ctx: Ctx, trx: Executor, identityId: string): Promise<boolean> {
  const removed = await deleteMfaOfIdentity(trx, identityId);
  if (removed) {
    await clearMfaPassed(trx, identityId, ctx.now());
    // Who removed it (the identity itself or an admin) is the event's author; its secret is never shown.
    await recordOtherOperation(withDb(ctx, trx), 'mfas', identityId, 'deleted', 'mfa-removed', { identityId }, null);
  }
  return removed;
}

/** After a commit: MFA posture fails from now on (sessions that relied on it go), then any listeners. */
async function mfaGone(ctx: Ctx, identityId: string): Promise<void> {
  await removeFailingSessions(ctx, identityId);
  emitMfaRemoved(ctx, identityId);
}

/** `POST /authenticate/mfa`: TOTP or a recovery code; no verified enrollment is 409 MFA_NOT_ENROLLED. */
export async function authenticateMfa(ctx: Ctx, caller: MfaCaller, code: string | undefined): Promise<void> {
  const m = await mfaOfIdentity(ctx.db, caller.identityId);
  if (!m || !m.isVerified) throw new DomainError('MFA_NOT_ENROLLED');
  const at = ctx.now();
  await withCode(ctx, caller, m, code, 'totp-or-recovery', (trx) => passMfa(ctx, trx, caller, at));
  emitMfaPassed(ctx, caller.apiSessionId, caller.identityId, at);
}

/** Removes the caller's enrollment: unverified without a code, verified with a TOTP or recovery code. */
export async function deleteOwnMfa(ctx: Ctx, caller: MfaCaller, code: string | undefined): Promise<void> {
  const { identityId } = caller;
  const m = await requireMfa(ctx.db, identityId);
  if (m.isVerified) await withCode(ctx, caller, m, code, 'totp-or-recovery', (trx) => removeMfa(ctx, trx, identityId));
  else await withTx(ctx.db, (trx) => removeMfa(ctx, trx, identityId));
  await mfaGone(ctx, identityId);
}

/** Admin removal (`DELETE /identities/{id}/mfa`): no code; an unknown identity is 404. */
export async function removeIdentityMfa(ctx: Ctx, identityId: string): Promise<void> {
  if (!(await identityExists(ctx.db, identityId))) throw notFound(identityId, 'identity');
  if (await withTx(ctx.db, (trx) => removeMfa(ctx, trx, identityId))) await mfaGone(ctx, identityId);
}

async function requireVerified(db: Executor, identityId: string): Promise<MfaRecord> {
  const m = await requireMfa(db, identityId);
  if (!m.isVerified) throw noMfa();
  return m;
}

/**
 * The remaining recovery codes, masked: their clear text exists only until verification (docs/decisions.md).
 * Needs a TOTP code, as the reference's read does.
 */
export async function maskedRecoveryCodes(
  ctx: Ctx,
  caller: MfaCaller,
  code: string | undefined,
): Promise<Record<string, unknown>> {
  const m = await requireVerified(ctx.db, caller.identityId);
  return withCode(ctx, caller, m, code, 'totp', async (trx) => {
    const current = await requireMfa(trx, caller.identityId);
    // The enrollment's own record around the codes (`detailMfaRecoveryCodes` is a base entity).
    return {
      id: current.id,
      createdAt: current.createdAt,
      updatedAt: current.updatedAt,
      tags: current.tags,
      _links: { self: { href: './current-identity/mfa/recovery-codes' } },
      recoveryCodes: current.recoveryHashes.map(() => MASKED_CODE),
    };
  });
}

/** Replaces all recovery codes (TOTP or recovery code) and answers the new ones: the only time they are shown. */
export async function regenerateRecoveryCodes(
  ctx: Ctx,
  caller: MfaCaller,
  code: string | undefined,
): Promise<string[]> {
  const m = await requireVerified(ctx.db, caller.identityId);
  // A wrong code is refused (and counted) before the twenty new hashes are spent on it.
  await withCode(ctx, caller, m, code, 'totp-or-recovery', async () => undefined, false);
  const recovery = await hashedRecoveryCodes(ctx);
  await withCode(ctx, caller, m, code, 'totp-or-recovery', async (trx) => {
    await setRecoveryHashes(trx, m.id, recovery.salt, recovery.hashes, iso(ctx.now()));
    // That they changed, never what they are.
    const state = { id: m.id, identityId: caller.identityId, isVerified: true };
    await recordOtherOperation(
      withDb(ctx, trx),
      'mfas',
      caller.identityId,
      'updated',
      'mfa-recovery-codes-regenerated',
      state,
      state,
      ['recoveryCodes'],
    );
  });
  return recovery.codes;
}

/** Which identities have a verified enrollment (identity records' `isMfaEnabled`). */
export const mfaEnabledIdentities = (ctx: Ctx, ids: readonly string[]): Promise<Set<string>> =>
  identitiesWithVerifiedMfa(ctx.db, ids);

/**
 * Checks a current TOTP code of the caller's verified enrollment (no recovery code), with the replay guard and
 * the guessing bound of every other code check; a code passes once. No verified enrollment: 409 MFA_NOT_ENROLLED.
 */
export async function checkTotp(ctx: Ctx, caller: MfaCaller, code: string | undefined): Promise<void> {
  const m = await mfaOfIdentity(ctx.db, caller.identityId);
  if (!m || !m.isVerified) throw new DomainError('MFA_NOT_ENROLLED');
  await withCode(ctx, caller, m, code, 'totp', async () => {});
}

/**
 * The TOTP step of an OIDC login: a current code or an unused recovery code of the identity's verified
 * enrollment, under the same replay guard and guessing bound as `/authenticate/mfa`; `then` runs in the
 * transaction that consumes the code. The login's future API session id stands for the session in the count.
 */
export async function passLoginTotp(
  ctx: Ctx,
  caller: MfaCaller,
  code: string | undefined,
  then: (trx: Executor) => Promise<void>,
): Promise<void> {
  const m = await mfaOfIdentity(ctx.db, caller.identityId);
  if (!m || !m.isVerified) throw new DomainError('MFA_NOT_ENROLLED');
  await withCode(ctx, caller, m, code, 'totp-or-recovery', then);
}

/** The caller's wrong codes in the window (the 5th ends a session, or a login's request). */
export async function callerFailures(ctx: Ctx, caller: MfaCaller): Promise<number> {
  const m = await mfaOfIdentity(ctx.db, caller.identityId);
  return m ? (await recentFailures(ctx, ctx.db, m.id, caller)).session : 0;
}
