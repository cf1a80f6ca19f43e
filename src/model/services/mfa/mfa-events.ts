/**
 * Hooks on the MFA factor for observers beyond the posture data, which services/mfa/mfa.ts updates itself
 * (docs/decisions.md "TOTP MFA"). Listeners run after the change is committed; one that throws is logged and does not affect the
 * request or the other listeners.
 */
import type { Ctx } from '../../ctx.js';

export type MfaPassedListener = (apiSessionId: string, identityId: string, at: Date) => void;
export type MfaRemovedListener = (identityId: string) => void;

const passed = new Set<MfaPassedListener>();
const removed = new Set<MfaRemovedListener>();

/** Called when an API session passes MFA (`/authenticate/mfa`, or verifying an enrollment). Returns an unsubscribe. */
export function onMfaPassed(fn: MfaPassedListener): () => void {
  passed.add(fn);
  return () => passed.delete(fn);
}

/** Called when an identity's MFA enrollment is removed (by itself or an admin). Returns an unsubscribe. */
export function onMfaRemoved(fn: MfaRemovedListener): () => void {
  removed.add(fn);
  return () => removed.delete(fn);
}

function each<A extends unknown[]>(ctx: Ctx, listeners: Set<(...a: A) => void>, args: A): void {
  for (const fn of listeners) {
    try {
      fn(...args);
    } catch (e) {
      ctx.log.error({ err: e }, 'MFA event listener failed');
    }
  }
}

export const emitMfaPassed = (ctx: Ctx, apiSessionId: string, identityId: string, at: Date): void =>
  each(ctx, passed, [apiSessionId, identityId, at]);

export const emitMfaRemoved = (ctx: Ctx, identityId: string): void => each(ctx, removed, [identityId]);
