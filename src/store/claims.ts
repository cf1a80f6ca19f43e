/**
 * Claims: work that must run on one controller at a time among the replicas sharing a store (the periodic
 * sweeps, the data-integrity scan, snapshots). On PostgreSQL a claim is a session-level advisory lock held on a
 * connection of its own (pg/claims.ts): it ends with that connection, so the work of a replica that dies is
 * claimed by another as soon as the server sees the connection gone. A SQLite store is used by one process
 * only (the data dir's lock), so there every claim is granted at once and never lost.
 */

/** The kinds of work claimed, each with its own lock. */
export type ClaimName = 'periodic-work' | 'integrity-scan' | 'snapshot';

export interface StoreClaim {
  /** Whether the claim still holds (its connection answers); a lost claim stays lost: claim again. */
  held(): Promise<boolean>;
  /** Gives the claim up (closing its connection). */
  release(): Promise<void>;
}

/** The claim of a store only one process uses. */
export const SOLE_CLAIM: StoreClaim = Object.freeze({
  held: async () => true,
  release: async () => {},
});
