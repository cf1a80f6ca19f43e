/**
 * Primary authentication by username and password (parity: docs/reference-notes.md §5.1, §5.2):
 * every credential or policy failure is 401 INVALID_AUTH; the lockout counter is persisted on the
 * authenticator, counted atomically (password-attempts.ts, decisions.md) and a success resets it.
 */
import type { Ctx } from '../../ctx.js';
import { withDb } from '../../ctx.js';
import { DomainError, fieldError } from '../../errors.js';
import { MAX_SET_ITEMS } from '../../schemas.js';
import { verifyPassword } from '../../password.js';
import { isDisabled } from '../../resources/identity.js';
import { passwordAuthenticatorByUsername } from '../../../store/authenticators.js';
import { withTx } from '../../../store/db.js';
import { identityStanding, setIdentityClientInfo } from '../../../store/identities.js';
import { clearAttempts, recordFailedAttempt, reserveAttempt, type AttemptTarget } from './password-attempts.js';
import { configTypesByIdOrName } from '../../../store/access.js';
import { createApiSession, type NewApiSession } from '../api-session/api-session.js';
import { secondaryFactors } from './auth-queries.js';
import { recordEvents } from '../../events/event.js';
import { apiSessionEvent, authenticationEvent, type AuthMethodName } from '../../events/auth-events.js';

export interface AuthenticateBody {
  username?: unknown;
  password?: unknown;
  configTypes?: unknown;
  envInfo?: unknown;
  sdkInfo?: unknown;
}

const invalidAuth = (reason: string, identityId?: string, authenticatorId?: string) =>
  new DomainError('INVALID_AUTH', { audit: { reason, identityId, authenticatorId } });

/** Keeps only string-valued members of a client-supplied info object, each at most 255 characters. */
export function infoObject(v: unknown): Record<string, string> | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val.slice(0, 255);
  return out;
}

/** Refuses an authenticate body whose `configTypes` list is longer than any client needs (before credentials are checked). */
export function checkAuthenticateBody(body: AuthenticateBody): void {
  if (Array.isArray(body.configTypes) && body.configTypes.length > MAX_SET_ITEMS) {
    throw fieldError('configTypes', `at most ${MAX_SET_ITEMS} entries are accepted`);
  }
}

export function configTypesOf(body: AuthenticateBody): string[] {
  return Array.isArray(body.configTypes) ? body.configTypes.filter((c): c is string => typeof c === 'string') : [];
}

/**
 * The session's config types as ids: names and ids are accepted, unknown entries are dropped and `all`
 * is kept as such (parity: docs/reference-notes.md §4.3).
 */
export async function resolveConfigTypes(ctx: Ctx, requested: string[]): Promise<string[]> {
  const wanted = requested.filter((c) => c !== 'all');
  const found = await configTypesByIdOrName(ctx.db, wanted);
  const idOf = new Map<string, string>();
  for (const t of found) {
    idOf.set(t.name, t.id);
    idOf.set(t.id, t.id);
  }
  const ids = requested.flatMap((c) => (c === 'all' ? ['all'] : idOf.has(c) ? [idOf.get(c)!] : []));
  return [...new Set(ids)];
}

/**
 * The common end of every primary authentication: the identity's `envInfo`/`sdkInfo` are updated from the
 * body and a new API session is created (parity: §5.1), partial while second factors are outstanding (§4.4).
 * Call inside the authentication's transaction.
 */
export async function startApiSession(
  ctx: Ctx,
  session: Omit<NewApiSession, 'configTypes'>,
  body: AuthenticateBody,
  method: AuthMethodName,
): Promise<string> {
  const envInfo = infoObject(body.envInfo);
  const sdkInfo = infoObject(body.sdkInfo);
  await setIdentityClientInfo(ctx.db, session.identityId, { envInfo, sdkInfo });
  // Second factors still to answer (TOTP, a secondary ext-JWT) make the session partial (services/authentication/auth-queries.ts).
  const factors = await secondaryFactors(ctx, session.identityId, body);
  const authQueries = [...(session.authQueries ?? []), ...factors.authQueries];
  const id = await createApiSession(ctx, {
    ...session,
    ...factors,
    authQueries,
    configTypes: await resolveConfigTypes(ctx, configTypesOf(body)),
  });
  // The attempt's success and the new session, with the session (the caller's transaction).
  await recordEvents(ctx, [
    authenticationEvent({
      eventType: 'success',
      method,
      identityId: session.identityId,
      authenticatorId: session.authenticatorId,
      remoteAddress: session.ipAddress,
    }),
    apiSessionEvent({
      eventType: 'created',
      id,
      identityId: session.identityId,
      ipAddress: session.ipAddress,
      extra: { fully_authenticated: authQueries.length === 0 },
    }),
  ]);
  return id;
}

/**
 * Username and password. Argon2id runs outside any transaction (kysely's SQLite driver serialises every query on
 * one connection, so a transaction held across a verification would stall every other request): one short
 * transaction reserves the attempt (password-attempts.ts), the verification follows, then a short transaction
 * starts the session. Every refusal, including an unknown username, runs one verification and the same queries.
 */
export async function authenticatePassword(ctx: Ctx, body: AuthenticateBody, ipAddress: string): Promise<string> {
  const target = await checkPassword(ctx, body);
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const identity = await confirmPasswordLogin(tctx, target);
    return startApiSession(
      tctx,
      { identityId: identity.id, authenticatorId: target.authenticatorId, ipAddress },
      body,
      'updb',
    );
  });
}

/**
 * The credential check of a password login, outside any transaction: the attempt is reserved, the password
 * verified, a failure counted. Answers whose password it was; every refusal is INVALID_AUTH.
 */
export async function checkPassword(ctx: Ctx, body: AuthenticateBody): Promise<AttemptTarget> {
  const { username, password } = body;
  if (typeof username !== 'string' || typeof password !== 'string' || username === '' || password === '') {
    throw new DomainError('COULD_NOT_VALIDATE', {
      cause: {
        field: typeof username !== 'string' || username === '' ? 'username' : 'password',
        reason: 'username and password fields are required',
      },
      causeMessage: 'username and password fields are required',
    });
  }
  const auth = await passwordAuthenticatorByUsername(ctx.db, username);
  const reservation = await reserveAttempt(
    ctx,
    auth ? { authenticatorId: auth.id, identityId: auth.identityId } : undefined,
  );
  const ok = await verifyPassword(reservation.ok ? auth!.passwordHash : undefined, password, ctx.settings.passwordCost);
  if (!reservation.ok) {
    if (reservation.reason !== 'unknown')
      ctx.log.debug({ identityId: auth?.identityId, reason: reservation.reason }, 'password authentication refused');
    throw reservation.reason === 'unknown'
      ? invalidAuth('unknown username')
      : invalidAuth(reservation.reason, auth?.identityId, auth?.id);
  }
  if (!ok) {
    await recordFailedAttempt(ctx, reservation);
    throw invalidAuth('invalid password', reservation.target.identityId, reservation.target.authenticatorId);
  }
  return reservation.target;
}

/**
 * The end of a successful password check, inside the login's transaction: the identity is checked again (a
 * concurrent attempt may have locked it meanwhile) and the failure counter starts again.
 */
export async function confirmPasswordLogin(ctx: Ctx, target: AttemptTarget): Promise<{ id: string }> {
  const identity = await identityStanding(ctx.db, target.identityId);
  if (!identity || isDisabled(identity, ctx.now()))
    throw invalidAuth('disabled', target.identityId, target.authenticatorId);
  await clearAttempts(ctx, target.authenticatorId);
  return identity;
}
