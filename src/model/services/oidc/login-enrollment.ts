/**
 * TOTP enrollment inside an OIDC login (docs/reference-notes.md §14.4): an identity whose policy requires TOTP
 * but that has no enrollment enrolls between its primary login and its tokens.
 *
 * A pending enrollment belongs to an API session (docs/decisions.md, "TOTP MFA and partial API sessions"), so
 * the enroll step makes the login's API session (the `z_asid` chosen at authorize) early, with no token: only
 * that login sees the secret and can verify it, and an abandoned login's enrollment goes with its session when
 * the session idles out. The code exchange completes the same session.
 */
import { oidcSessionById } from '../../../store/oidc.js';
import { withDb, type Ctx } from '../../ctx.js';
import { withTx } from '../../../store/db.js';
import { DomainError } from '../../errors.js';
import { createApiSession } from '../api-session/api-session.js';
import type { AuthQuery } from '../authentication/auth-queries.js';
import { deleteOwnMfa, enrollMfa, mfaDetail, verifyMfa } from '../mfa/mfa.js';
import { openAuthRequest, type OpenAuthRequest } from './auth-requests.js';
import { updateAuthRequest } from '../../../store/oidc.js';
import { mfaOfIdentity } from '../../../store/mfas.js';
import { inTx, recordOidcSessionEvent, recordOidcStepSuccess } from './login-events.js';

const isTotp = (q: unknown): boolean => typeof q === 'object' && q !== null && (q as AuthQuery).typeId === 'TOTP';

/** The login's request after its primary step, and who it is (401 UNAUTHORIZED before the primary step). */
async function primaryDone(ctx: Ctx, id: string | undefined): Promise<OpenAuthRequest & { identityId: string }> {
  const request = await openAuthRequest(ctx, id);
  if (request.identityId === null || request.authenticatorId === null)
    throw new DomainError('UNAUTHORIZED', { audit: { reason: 'no primary login yet' } });
  return request as OpenAuthRequest & { identityId: string };
}

const callerOf = (r: OpenAuthRequest & { identityId: string }) => ({
  apiSessionId: r.apiSessionId,
  identityId: r.identityId,
});

/**
 * `POST /oidc/login/totp/enroll`: starts the identity's enrollment (any existing one: 409 MFA_EXISTS) and
 * answers its detail with the provisioning URL and recovery codes.
 */
export async function enrollInLogin(ctx: Ctx, id: string | undefined): Promise<Record<string, unknown>> {
  const request = await primaryDone(ctx, id);
  // Refused before any session is made for it.
  if (await mfaOfIdentity(ctx.db, request.identityId)) throw new DomainError('MFA_EXISTS');
  if (!(await oidcSessionById(ctx.db, request.apiSessionId))) {
    await withTx(ctx.db, async (trx) => {
      if (await oidcSessionById(trx, request.apiSessionId)) return;
      const tctx = withDb(ctx, trx);
      const ipAddress = request.remoteAddress.replace(/:\d+$/, '');
      await createApiSession(tctx, {
        id: request.apiSessionId,
        identityId: request.identityId,
        authenticatorId: request.authenticatorId!,
        ipAddress,
        configTypes: request.configTypes,
        isOidc: true,
      });
      await recordOidcSessionEvent(tctx, {
        eventType: 'created',
        id: request.apiSessionId,
        identityId: request.identityId,
        ipAddress,
        reason: 'totp enrollment in a login',
        fullyAuthenticated: false,
      });
    });
  }
  const caller = callerOf(request);
  await enrollMfa(ctx, caller);
  const session = await oidcSessionById(ctx.db, request.apiSessionId);
  return mfaDetail(ctx, caller, session?.name ?? '');
}

/**
 * `POST /oidc/login/totp/enroll/verify`: a code of the new enrollment verifies it and passes the login's TOTP
 * factor (`amr` gains `totp`). Answers the queries still due.
 */
export async function verifyInLogin(
  ctx: Ctx,
  id: string | undefined,
  code: string | undefined,
  remoteAddress?: string,
): Promise<AuthQuery[]> {
  const request = await primaryDone(ctx, id);
  await verifyMfa(ctx, callerOf(request), code);
  const rest = (request.authQueries as AuthQuery[]).filter((q) => !isTotp(q));
  await inTx(ctx, async (tctx) => {
    await updateAuthRequest(tctx.db, request.idHash, {
      authQueries: rest,
      amr: request.amr.includes('totp') ? request.amr : [...request.amr, 'totp'],
    });
    await recordOidcStepSuccess(tctx, {
      step: 'totp',
      identityId: request.identityId,
      remoteAddress,
      apiSessionId: request.apiSessionId,
      complete: rest.length === 0,
    });
  });
  return rest;
}

/** `DELETE /oidc/login/totp/enroll`: removes the identity's enrollment (a verified one needs a code). */
export async function deleteInLogin(ctx: Ctx, id: string | undefined, code: string | undefined): Promise<void> {
  const request = await primaryDone(ctx, id);
  await deleteOwnMfa(ctx, callerOf(request), code);
}
