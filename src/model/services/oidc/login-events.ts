/**
 * The events of OIDC logins (docs/decisions.md, "Events" and "OIDC login"): the `authentication` and `apiSession`
 * events `POST /authenticate` records, for the provider's steps. Each names its flow (`flow: "oidc"`) and the
 * login's API session (`api_session_id`, the tokens' `z_asid`), so a login's steps read together.
 *
 * - authentication `success` | `fail` for each primary login (`type` `updb`, `cert`, `ext-jwt`), each TOTP step
 *   (`totp`) and each refused exchange of a live code (`authorization_code`), with the reason of a failure and
 *   the source address;
 * - apiSession (`type: "jwt"`) `created` at the code exchange (or at a TOTP enrollment inside the login, which
 *   makes the session early), `refreshed` at each refresh or token exchange and when the exchange completes an
 *   early session, `deleted` by `end_session` and every other deletion (api-session.ts).
 *
 * Never a secret: no token, code, verifier, password or TOTP code is passed here.
 */
import { withDb, type Ctx } from '../../ctx.js';
import { withTx } from '../../../store/db.js';
import { recordEvents } from '../../events/event.js';
import {
  AUTH_METHOD,
  apiSessionEvent,
  authenticationEvent,
  recordAuthFailure,
  type ApiSessionFacts,
} from '../../events/auth-events.js';

/** A step of an OIDC login, as its events name it. */
export type OidcStep = 'password' | 'cert' | 'ext-jwt' | 'totp' | 'authorization_code';

const stepType = (step: OidcStep): string => AUTH_METHOD[step] ?? step;

const flowFields = (apiSessionId: string | undefined, more?: Record<string, unknown>) => ({
  flow: 'oidc',
  ...(apiSessionId !== undefined && { api_session_id: apiSessionId }),
  ...more,
});

/** A step passed. Call inside the transaction that records it on the authorization request. */
export function recordOidcStepSuccess(
  ctx: Ctx,
  f: {
    step: OidcStep;
    identityId: string;
    authenticatorId?: string | undefined;
    remoteAddress?: string | undefined;
    apiSessionId: string;
    /** Whether every factor is now done (the callback will issue a code). */
    complete: boolean;
  },
): Promise<void> {
  return recordEvents(ctx, [
    authenticationEvent({
      eventType: 'success',
      method: stepType(f.step),
      identityId: f.identityId,
      authenticatorId: f.authenticatorId,
      remoteAddress: f.remoteAddress,
      extra: flowFields(f.apiSessionId, { fully_authenticated: f.complete }),
    }),
  ]);
}

/**
 * A step refused, in a transaction of its own; the reason travels on the refusal (`DomainError.audit`).
 * Failing to record it is logged and does not change the answer.
 */
export async function recordOidcStepFailure(
  ctx: Ctx,
  f: { step: OidcStep; remoteAddress: string; username?: string | undefined; apiSessionId?: string | undefined },
  error: unknown,
): Promise<void> {
  await recordAuthFailure(
    ctx,
    {
      method: stepType(f.step),
      username: f.username?.slice(0, 255),
      remoteAddress: f.remoteAddress,
      extra: flowFields(f.apiSessionId),
    },
    error,
  ).catch((err: unknown) => ctx.log.error({ err }, 'authentication event not recorded'));
}

/** An OIDC login's API session event. Call inside the transaction of the change it records. */
export function recordOidcSessionEvent(
  ctx: Ctx,
  f: Omit<ApiSessionFacts, 'sessionType'> & { reason?: string; fullyAuthenticated: boolean },
): Promise<void> {
  return recordEvents(ctx, [
    apiSessionEvent({
      ...f,
      sessionType: 'jwt',
      extra: {
        ...(f.reason !== undefined && { reason: f.reason }),
        fully_authenticated: f.fullyAuthenticated,
        ...f.extra,
      },
    }),
  ]);
}

/** Runs `fn` in a transaction, for a step whose change and event must commit together. */
export const inTx = <T>(ctx: Ctx, fn: (tctx: Ctx) => Promise<T>): Promise<T> =>
  withTx(ctx.db, (trx) => fn(withDb(ctx, trx)));
