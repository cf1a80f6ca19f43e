/**
 * Primary authentication by username and password (parity: controller-behaviours.md §5.1, §5.2):
 * every credential or policy failure is 401 INVALID_AUTH; the lockout counter is persisted on the
 * authenticator (decisions.md) and a success resets it.
 */
import type { Ctx } from '../ctx.js';
import { iso, withDb } from '../ctx.js';
import { DomainError, fieldError } from '../errors.js';
import { MAX_SET_ITEMS } from '../schemas.js';
import { verifyPassword } from '../password.js';
import { policyForIdentity } from '../resources/auth-policy.js';
import { isDisabled } from '../resources/identity.js';
import { withTx } from '../../store/db.js';
import { inIdList } from '../../store/id-list.js';
import { sql } from 'kysely';
import { createApiSession, deleteIdentityApiSessions, type NewApiSession } from './api-session.js';

export interface AuthenticateBody {
  username?: unknown;
  password?: unknown;
  configTypes?: unknown;
  envInfo?: unknown;
  sdkInfo?: unknown;
}

const invalidAuth = () => new DomainError('INVALID_AUTH');

/** Keeps only string-valued members of a client-supplied info object, each at most 255 characters. */
function infoObject(v: unknown): Record<string, string> | undefined {
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
 * is kept as such (parity: controller-behaviours.md §4.3).
 */
export async function resolveConfigTypes(ctx: Ctx, requested: string[]): Promise<string[]> {
  const wanted = requested.filter((c) => c !== 'all');
  const found = wanted.length
    ? await ctx.db.selectFrom('config_types').select(['id', 'name']).where((eb) => eb.or([inIdList(sql.ref('id'), wanted), inIdList(sql.ref('name'), wanted)])).execute()
    : [];
  const idOf = new Map<string, string>();
  for (const t of found as { id: string; name: string }[]) {
    idOf.set(t.name, t.id);
    idOf.set(t.id, t.id);
  }
  const ids = requested.flatMap((c) => (c === 'all' ? ['all'] : idOf.has(c) ? [idOf.get(c)!] : []));
  return [...new Set(ids)];
}

/**
 * The common end of every primary authentication: the identity's `envInfo`/`sdkInfo` are updated from the
 * body and a new API session is created (parity: §5.1). Call inside the authentication's transaction.
 */
export async function startApiSession(
  ctx: Ctx,
  session: Omit<NewApiSession, 'configTypes'>,
  body: AuthenticateBody,
): Promise<string> {
  const envInfo = infoObject(body.envInfo);
  const sdkInfo = infoObject(body.sdkInfo);
  if (envInfo || sdkInfo) {
    await ctx.db
      .updateTable('identities')
      .set({
        ...(envInfo ? { envInfo: JSON.stringify(envInfo) } : {}),
        ...(sdkInfo ? { sdkInfo: JSON.stringify(sdkInfo) } : {}),
      })
      .where('id', '=', session.identityId)
      .execute();
  }
  return createApiSession(ctx, { ...session, configTypes: await resolveConfigTypes(ctx, configTypesOf(body)) });
}

export async function authenticatePassword(ctx: Ctx, body: AuthenticateBody, ipAddress: string): Promise<string> {
  const { username, password } = body;
  if (typeof username !== 'string' || typeof password !== 'string' || username === '' || password === '') {
    throw new DomainError('COULD_NOT_VALIDATE', {
      cause: { field: typeof username !== 'string' || username === '' ? 'username' : 'password', reason: 'username and password fields are required' },
      causeMessage: 'username and password fields are required',
    });
  }
  const auth = await ctx.db
    .selectFrom('authenticators')
    .select(['id', 'identityId', 'passwordHash', 'failedAttempts'])
    .where('method', '=', 'updb')
    .where('username', '=', username)
    .executeTakeFirst();
  // Always run one Argon2 verification so unknown users and wrong passwords cost the same.
  const ok = await verifyPassword(auth?.passwordHash, password);
  if (!auth) throw invalidAuth();

  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const identity = await trx.selectFrom('identities').selectAll().where('id', '=', auth.identityId).executeTakeFirst();
    if (!identity) throw invalidAuth();
    const now = ctx.now();
    if (isDisabled(identity, now)) throw invalidAuth();
    const policy = await policyForIdentity(trx, identity.authPolicyId);
    if (!policy.primary.updb.allowed) throw invalidAuth();
    if (!ok) {
      await recordFailure(tctx, auth.id, auth.identityId, (auth.failedAttempts ?? 0) + 1, policy.primary.updb);
      return null;
    }
    await trx.updateTable('authenticators').set({ failedAttempts: 0 }).where('id', '=', auth.id).execute();
    return startApiSession(tctx, { identityId: identity.id, authenticatorId: auth.id, ipAddress }, body);
  }).then((id) => {
    // The failure was recorded inside the transaction; answer only after it committed.
    if (id === null) throw invalidAuth();
    return id;
  });
}

/** Counts a failed attempt; at maxAttempts the identity is locked for lockoutDurationMinutes (0: indefinitely). */
async function recordFailure(
  ctx: Ctx,
  authenticatorId: string,
  identityId: string,
  attempts: number,
  rules: { maxAttempts: number; lockoutDurationMinutes: number },
): Promise<void> {
  if (rules.maxAttempts > 0 && attempts >= rules.maxAttempts) {
    const now = ctx.now();
    const until = rules.lockoutDurationMinutes > 0 ? iso(new Date(now.getTime() + rules.lockoutDurationMinutes * 60_000)) : null;
    await ctx.db.updateTable('identities').set({ disabledAt: iso(now), disabledUntil: until, updatedAt: iso(now) }).where('id', '=', identityId).execute();
    await ctx.db.updateTable('authenticators').set({ failedAttempts: 0 }).where('id', '=', authenticatorId).execute();
    await deleteIdentityApiSessions(ctx, identityId);
    ctx.log.warn({ identityId }, 'identity locked after too many failed password attempts');
    return;
  }
  await ctx.db.updateTable('authenticators').set({ failedAttempts: attempts }).where('id', '=', authenticatorId).execute();
}
