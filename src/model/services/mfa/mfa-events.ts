/**
 * Hooks on the MFA factor for observers beyond the posture data, which services/mfa/mfa.ts updates itself
 * (docs/decisions.md "TOTP MFA"). Each store has its own listeners ({@link mfaEventsOf}). Listeners run after
 * the change is committed; one that throws is logged and does not affect the request or the other listeners.
 */
import type { Ctx } from '../../ctx.js';
import type { Executor } from '../../../store/db.js';
import { defineCache, storeState } from '../../../store/runtime.js';

export type MfaPassedListener = (apiSessionId: string, identityId: string, at: Date) => void;
export type MfaRemovedListener = (identityId: string) => void;

export class MfaEvents {
  private readonly passed = new Set<MfaPassedListener>();
  private readonly removed = new Set<MfaRemovedListener>();

  /** Called when an API session passes MFA (`/authenticate/mfa`, or verifying an enrollment). Returns an unsubscribe. */
  onMfaPassed(fn: MfaPassedListener): () => void {
    this.passed.add(fn);
    return () => this.passed.delete(fn);
  }

  /** Called when an identity's MFA enrollment is removed (by itself or an admin). Returns an unsubscribe. */
  onMfaRemoved(fn: MfaRemovedListener): () => void {
    this.removed.add(fn);
    return () => this.removed.delete(fn);
  }

  emitPassed(ctx: Ctx, apiSessionId: string, identityId: string, at: Date): void {
    each(ctx, this.passed, [apiSessionId, identityId, at]);
  }

  emitRemoved(ctx: Ctx, identityId: string): void {
    each(ctx, this.removed, [identityId]);
  }
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

const MFA_EVENTS = defineCache('mfa-events', () => new MfaEvents());

/** The MFA listeners of the store `db` belongs to (none for a store opened without a runtime). */
export const mfaEventsOf = (db: Executor): MfaEvents | undefined => storeState(db, MFA_EVENTS);

export const emitMfaPassed = (ctx: Ctx, apiSessionId: string, identityId: string, at: Date): void =>
  mfaEventsOf(ctx.db)?.emitPassed(ctx, apiSessionId, identityId, at);

export const emitMfaRemoved = (ctx: Ctx, identityId: string): void => mfaEventsOf(ctx.db)?.emitRemoved(ctx, identityId);
