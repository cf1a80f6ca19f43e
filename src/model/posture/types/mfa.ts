/**
 * `MFA`: the API session must have passed MFA; with `timeoutSeconds` > 0 the pass must be younger than that
 * (unless `ignoreLegacyEndpoints` exempts the client); with `promptOnWake`/`promptOnUnlock`, a wake/unlock
 * reported after the pass fails the check once a grace of 5 minutes has run out (docs/reference-notes.md §9.3).
 */
import { Type } from '../../schema-type.js';
import { boolOr, numberOr } from '../../row.js';
import type { ApiSessionPosture } from '../state.js';
import type { PostureCheckType, PostureView, Details, QueryTimeout } from './type.js';

/** Time a client has to pass MFA again after a wake or unlock. */
export const PROMPT_GRACE_SECONDS = 5 * 60;

const secondsBetween = (from: Date, to: Date) => Math.floor((to.getTime() - from.getTime()) / 1000);

/**
 * A client counts as legacy (exempt from the timeout when `ignoreLegacyEndpoints`) unless it reported itself
 * as `ziti-sdk-c` 0.25.0 or newer. edgectl learns no SDK info yet, so every client is legacy
 * (docs/decisions.md, "Posture").
 */
export const isLegacy = (s: ApiSessionPosture | undefined): boolean => !s?.sdkNew;

interface Mfa {
  timeoutSeconds: number;
  promptOnWake: boolean;
  promptOnUnlock: boolean;
  ignoreLegacyEndpoints: boolean;
}

const mfaOf = (d: Details): Mfa => ({
  timeoutSeconds: numberOr(d.timeoutSeconds, -1),
  promptOnWake: boolOr(d.promptOnWake, false),
  promptOnUnlock: boolOr(d.promptOnUnlock, false),
  ignoreLegacyEndpoints: boolOr(d.ignoreLegacyEndpoints, false),
});

/** Seconds left before the check stops passing (−1: no limit), from the timeout and any wake/unlock grace. */
function remaining(m: Mfa, { session, now }: PostureView): { remaining: number; onWake: boolean; onUnlock: boolean } {
  const passedAt = session?.mfaPassedAt;
  if (!passedAt) return { remaining: 0, onWake: false, onUnlock: false };
  let left = -1;
  const limit = (s: number) => (left = left < 0 ? Math.max(0, s) : Math.min(left, Math.max(0, s)));
  if (m.timeoutSeconds > 0 && !(m.ignoreLegacyEndpoints && isLegacy(session))) {
    limit(m.timeoutSeconds - secondsBetween(passedAt, now));
  }
  const prompt = (on: boolean, at: Date | undefined) => {
    if (!on || !at || at <= passedAt) return true;
    limit(PROMPT_GRACE_SECONDS - secondsBetween(at, now));
    return secondsBetween(at, now) < PROMPT_GRACE_SECONDS;
  };
  // Both prompts first: each may shorten `left`.
  const onWake = prompt(m.promptOnWake, session.wokenAt);
  const onUnlock = prompt(m.promptOnUnlock, session.unlockedAt);
  return { remaining: left, onWake, onUnlock };
}

export const mfaType: PostureCheckType = {
  id: 'MFA',
  operatingSystems: [],
  fields: {
    timeoutSeconds: { schema: Type.Integer({ minimum: -1 }), default: -1 },
    promptOnWake: { schema: Type.Boolean(), default: false },
    promptOnUnlock: { schema: Type.Boolean(), default: false },
    ignoreLegacyEndpoints: { schema: Type.Boolean(), default: false },
  },
  evaluate(d, _id, view) {
    const m = mfaOf(d);
    const passedMfa = view.session?.mfaPassedAt !== undefined;
    const r = remaining(m, view);
    const timedOut = passedMfa && r.remaining === 0;
    const isPassing = passedMfa && !timedOut && r.onWake && r.onUnlock;
    const iso = (x: Date | undefined) => (x ? x.toISOString() : null);
    return {
      isPassing,
      failure: {
        actualValue: { passedMfa, passedOnWake: r.onWake, passedOnUnlock: r.onUnlock, timedOut },
        expectedValue: { passedMfa: true, passedOnWake: true, passedOnUnlock: true, timedOut: false },
        criteria: {
          passedMfaAt: iso(view.session?.mfaPassedAt),
          wokenAt: iso(view.session?.wokenAt),
          unlockedAt: iso(view.session?.unlockedAt),
          timeoutSeconds: m.timeoutSeconds,
          timeoutRemainingSeconds: r.remaining,
        },
      },
    };
  },
  timeout(d, view): QueryTimeout {
    const m = mfaOf(d);
    return { timeout: m.timeoutSeconds, timeoutRemaining: remaining(m, view).remaining };
  },
};
