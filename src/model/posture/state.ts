/**
 * What clients reported about their posture, held in memory as the reference does (docs/reference-notes.md
 * §9.2): OS, domain, MAC addresses and processes per identity; MFA passes and wake/unlock events per API
 * session. Also the identity's last failed service requests. What an identity keeps is bounded by its checks
 * and in bytes (kept.ts); an API session's part is a fixed-size record. Nothing here is persisted: a restart
 * forgets it and clients report again. Each open store has its own, kept by its runtime (posture-of.ts).
 */

export interface Reported {
  postureCheckId: string;
  lastUpdatedAt: Date;
}
export interface OsPosture extends Reported {
  type: string;
  version: string;
  build: string;
}
export interface ProcessPosture extends Reported {
  path: string;
  isRunning: boolean;
  hash?: string;
  signerFingerprints: string[];
}
export interface ApiSessionPosture {
  mfaPassedAt?: Date;
  wokenAt?: Date;
  unlockedAt?: Date;
  /** The client said it is `ziti-sdk-c` ≥ 0.25.0 (not learnt yet: see types/mfa.ts). */
  sdkNew?: boolean;
}
/** What the clients of an identity reported about their device, one record per slot ({@link Slot}). */
export interface ReportedPosture {
  os?: OsPosture;
  domain?: Reported & { domain: string };
  mac?: Reported & { addresses: string[] };
  /** Keyed by {@link processKey}. */
  processes: Map<string, ProcessPosture>;
}
export interface IdentityPosture extends ReportedPosture {
  sessions: Map<string, ApiSessionPosture>;
  failed: Record<string, unknown>[];
  /** Last time the reported posture changed (moves `service-updates`). */
  changedAt?: Date;
}

/** At most this many failed service requests are kept per identity, the newest (§9.3). */
export const MAX_FAILED_REQUESTS = 100;

export const processKey = (checkId: string, path: string) => `${checkId}\n${path.toLowerCase()}`;

/**
 * Where a reported record is kept: `os`, `domain`, `mac`, or a process's {@link processKey} (which holds a line
 * break, so never one of the others). A newer record for a slot replaces the older one.
 */
export type Slot = string;
const isField = (slot: Slot): slot is 'os' | 'domain' | 'mac' => slot === 'os' || slot === 'domain' || slot === 'mac';

export const keptRecord = (r: ReportedPosture, slot: Slot): Reported | undefined =>
  isField(slot) ? r[slot] : r.processes.get(slot);

export function keepRecord(r: ReportedPosture, slot: Slot, record: Reported): void {
  // The record's type is the slot's: the response kinds build one for the slot they name (responses.ts).
  if (isField(slot)) Object.assign(r, { [slot]: record });
  else r.processes.set(slot, record as ProcessPosture);
}

export function dropRecord(r: ReportedPosture, slot: Slot): void {
  if (isField(slot)) delete r[slot];
  else r.processes.delete(slot);
}

/** The slots holding a record. */
export const filledSlots = (r: ReportedPosture): Slot[] => [
  ...(['os', 'domain', 'mac'] as const).filter((f) => r[f] !== undefined),
  ...r.processes.keys(),
];

/** The reported process for a check (and path, for multi-process checks). */
export function findProcess(
  p: IdentityPosture | undefined,
  checkId: string,
  path?: string,
): ProcessPosture | undefined {
  if (!p) return undefined;
  if (path !== undefined) return p.processes.get(processKey(checkId, path));
  for (const [k, v] of p.processes) if (k.startsWith(`${checkId}\n`)) return v;
  return undefined;
}

/** What one store's clients reported (see the module's comment). */
export class PostureState {
  private readonly identities = new Map<string, IdentityPosture>();
  private readonly sessionOwner = new Map<string, string>();

  /** When the identity's posture last changed what it may use (ISO; '' when never). */
  postureChangedAt(identityId: string): string {
    return this.identities.get(identityId)?.changedAt?.toISOString() ?? '';
  }

  identityPosture(identityId: string): IdentityPosture | undefined {
    return this.identities.get(identityId);
  }

  ensureIdentity(identityId: string): IdentityPosture {
    let p = this.identities.get(identityId);
    if (!p) this.identities.set(identityId, (p = { processes: new Map(), sessions: new Map(), failed: [] }));
    return p;
  }

  /** Swaps in what the identity's clients reported (kept.ts builds it). */
  replaceReported(identityId: string, r: ReportedPosture): void {
    const p = this.ensureIdentity(identityId);
    p.os = r.os;
    p.domain = r.domain;
    p.mac = r.mac;
    p.processes = r.processes;
  }

  ensureSession(identityId: string, apiSessionId: string): ApiSessionPosture {
    const p = this.ensureIdentity(identityId);
    let s = p.sessions.get(apiSessionId);
    if (!s) {
      p.sessions.set(apiSessionId, (s = {}));
      this.sessionOwner.set(apiSessionId, identityId);
    }
    return s;
  }

  sessionPosture(identityId: string, apiSessionId: string): ApiSessionPosture | undefined {
    return this.identities.get(identityId)?.sessions.get(apiSessionId);
  }

  /** An MFA event: this API session passed MFA at `at`. */
  recordMfaPassed(apiSessionId: string, identityId: string, at: Date): void {
    this.ensureSession(identityId, apiSessionId).mfaPassedAt = at;
    this.ensureIdentity(identityId).changedAt = at;
  }

  /** An MFA event: the identity's MFA was removed, so none of its API sessions passes it. */
  clearMfaPassed(identityId: string): void {
    const p = this.identities.get(identityId);
    if (!p) return;
    for (const s of p.sessions.values()) delete s.mfaPassedAt;
    p.changedAt = new Date();
  }

  /** Posture scoped to an API session goes with it (§4.2). */
  dropApiSession(apiSessionId: string): void {
    const owner = this.sessionOwner.get(apiSessionId);
    if (owner === undefined) return;
    this.sessionOwner.delete(apiSessionId);
    this.identities.get(owner)?.sessions.delete(apiSessionId);
  }

  /** Every API session of the identity ended together (disable, lock): their posture goes at once. */
  dropIdentityApiSessions(identityId: string): void {
    const p = this.identities.get(identityId);
    if (!p) return;
    for (const id of p.sessions.keys()) this.sessionOwner.delete(id);
    p.sessions.clear();
  }

  /** A deleted identity leaves nothing behind: its reported posture, its API sessions' and its failed requests. */
  dropIdentity(identityId: string): void {
    this.dropIdentityApiSessions(identityId);
    this.identities.delete(identityId);
  }

  recordFailure(identityId: string, failure: Record<string, unknown>): void {
    const f = this.ensureIdentity(identityId).failed;
    f.push(failure);
    if (f.length > MAX_FAILED_REQUESTS) f.splice(0, f.length - MAX_FAILED_REQUESTS);
  }
}
