/**
 * What the Management API shows of an identity's posture (docs/reference-notes.md §9.2, §9.3): the data its
 * clients reported (`/identities/{id}/posture-data`, MFA and endpoint state per current API session) and its
 * last failed service requests (`/identities/{id}/failed-service-requests`).
 */
import { getRow } from '../crud.js';
import type { Ctx } from '../ctx.js';
import { identities } from '../resources/identity.js';
import { failedRequests, identityPostureRow, sessionPosturesOfIdentity } from '../../store/posture-state.js';
import { recordsFromStore, sessionFromStore, type ApiSessionPosture, type Reported } from './state.js';

/** The reference renders data never reported with Go's zero time. */
const ZERO_TIME = '0001-01-01T00:00:00.000Z';
const at = (d: Date | undefined) => (d ? d.toISOString() : ZERO_TIME);
const base = (r: Reported | undefined) => ({
  postureCheckId: r?.postureCheckId ?? '',
  timedOut: false,
  lastUpdatedAt: at(r?.lastUpdatedAt),
});

function sessionData(apiSessionId: string, s: ApiSessionPosture) {
  return {
    mfa: {
      apiSessionId,
      passedMfa: s.mfaPassedAt !== undefined,
      // Required and not nullable: never passed is Go's zero time, as for the other times never reported.
      passedAt: at(s.mfaPassedAt),
      passedOnWake: s.mfaPassedAt !== undefined && !(s.wokenAt && s.wokenAt > s.mfaPassedAt),
      passedOnUnlock: s.mfaPassedAt !== undefined && !(s.unlockedAt && s.unlockedAt > s.mfaPassedAt),
    },
    endpointState: { wokenAt: at(s.wokenAt), unlockedAt: at(s.unlockedAt) },
  };
}

export async function identityPostureData(ctx: Ctx, identityId: string): Promise<Record<string, unknown>> {
  await getRow(ctx, identities, identityId);
  // Read from the store, not the cache: what every controller sharing it was told, as of this request.
  const stored = await identityPostureRow(ctx.db, identityId);
  const p = stored && recordsFromStore(stored.records);
  // Posture of an API session goes with the session (§4.2, by cascade), so every entry here is a current one.
  const sessions = await sessionPosturesOfIdentity(ctx.db, identityId);
  return {
    mac: { ...base(p?.mac), addresses: p?.mac?.addresses ?? [] },
    domain: { ...base(p?.domain), domain: p?.domain?.domain ?? '' },
    os: { ...base(p?.os), type: p?.os?.type ?? '', version: p?.os?.version ?? '', build: p?.os?.build ?? '' },
    processes: [...(p?.processes.values() ?? [])].map((x) => ({
      ...base(x),
      path: x.path,
      isRunning: x.isRunning,
      binaryHash: x.hash ?? '',
      signerFingerprints: x.signerFingerprints,
    })),
    apiSessionPostureData: Object.fromEntries(
      sessions.map((s) => [s.apiSessionId, sessionData(s.apiSessionId, sessionFromStore(s))]),
    ),
  };
}

/** The identity's failed service requests, oldest first (at most 100, §9.3). */
export async function identityFailedServiceRequests(ctx: Ctx, identityId: string): Promise<unknown[]> {
  await getRow(ctx, identities, identityId);
  return failedRequests(ctx.db, identityId);
}
