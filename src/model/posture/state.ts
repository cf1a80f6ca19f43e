/**
 * What clients reported about their posture (docs/reference-notes.md §9.2): OS, domain, MAC addresses and
 * processes per identity; MFA passes and wake/unlock events per API session. Also the identity's last failed
 * service requests. What an identity keeps is bounded by its checks and in bytes (kept.ts); an API session's
 * part is a fixed-size record. The reference holds it in memory; edgectl keeps it in the store (migration 0016,
 * store/posture-state.ts), so every controller sharing the store judges a client by what it reported to any of
 * them, and a restart keeps it. Each open store caches what its requests read (posture-of.ts).
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
  /** Last time the reported posture changed what the identity may use (moves `service-updates`). */
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

/** The stored form of reported records (store/posture-state.ts): by slot, times as ISO text. */
export type StoredRecords = Record<Slot, Record<string, unknown>>;

/** Records as the store keeps them: each slot's record as JSON (its `lastUpdatedAt` as ISO text). */
export function storedRecords(r: ReportedPosture): StoredRecords {
  const out: StoredRecords = {};
  for (const slot of filledSlots(r)) {
    const record = keptRecord(r, slot)!;
    out[slot] = { ...record, lastUpdatedAt: record.lastUpdatedAt.toISOString() };
  }
  return out;
}

/** Records as the store gave them back (see {@link storedRecords}). */
export function recordsFromStore(stored: StoredRecords): ReportedPosture {
  const r: ReportedPosture = { processes: new Map() };
  for (const [slot, record] of Object.entries(stored)) {
    keepRecord(r, slot, { ...record, lastUpdatedAt: new Date(String(record.lastUpdatedAt)) } as unknown as Reported);
  }
  return r;
}

const dateOf = (iso: string | null): Date | undefined => (iso === null ? undefined : new Date(iso));
const isoOf = (d: Date | undefined): string | null => (d === undefined ? null : d.toISOString());

export const identityFromStore = (stored: { records: StoredRecords; changedAt: string | null }): IdentityPosture => ({
  ...recordsFromStore(stored.records),
  changedAt: dateOf(stored.changedAt),
});

export function sessionFromStore(s: {
  mfaPassedAt: string | null;
  wokenAt: string | null;
  unlockedAt: string | null;
  sdkNew: boolean;
}): ApiSessionPosture {
  const out: ApiSessionPosture = {};
  if (s.mfaPassedAt !== null) out.mfaPassedAt = new Date(s.mfaPassedAt);
  if (s.wokenAt !== null) out.wokenAt = new Date(s.wokenAt);
  if (s.unlockedAt !== null) out.unlockedAt = new Date(s.unlockedAt);
  if (s.sdkNew) out.sdkNew = true;
  return out;
}

export const sessionToStore = (apiSessionId: string, s: ApiSessionPosture) => ({
  apiSessionId,
  mfaPassedAt: isoOf(s.mfaPassedAt),
  wokenAt: isoOf(s.wokenAt),
  unlockedAt: isoOf(s.unlockedAt),
  sdkNew: s.sdkNew === true,
});
