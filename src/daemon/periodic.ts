/**
 * The controller's periodic work (the sweeps of expired API sessions and API-session certificates) runs on one
 * controller at a time among those sharing a store (docs/decisions.md, "Work that runs once"). The first to
 * claim it keeps the claim (a PostgreSQL session lock, src/store/claims.ts) and runs every round; the others
 * try again at each of their rounds, so when the holder dies, and with it its connection, another takes over at
 * its next round. On SQLite the claim is always this process's and nothing changes.
 */
import type { Logger } from '../model/ctx.js';
import type { OpenedStore, StoreClaim } from '../model/store.js';

export class PeriodicWork {
  private claim: StoreClaim | undefined;
  private claiming: Promise<boolean> | undefined;
  private unreachable = false;
  private closed = false;

  constructor(
    private readonly store: OpenedStore,
    private readonly log: Logger,
  ) {}

  /** Whether this controller runs the periodic work now: it still holds the claim, or has just taken it. */
  lead(): Promise<boolean> {
    this.claiming ??= this.claimOrKeep().finally(() => (this.claiming = undefined));
    return this.claiming;
  }

  private async claimOrKeep(): Promise<boolean> {
    if (this.closed) return false;
    if (this.claim) {
      if (await this.claim.held()) return true;
      this.claim = undefined;
      this.log.warn('periodic work: its claim was lost with its connection to the store; claiming it again');
    }
    let claim: StoreClaim | undefined;
    try {
      claim = await this.store.claim('periodic-work');
    } catch (err) {
      if (!this.unreachable) this.log.warn({ err }, 'periodic work: cannot claim it, the store is not answering');
      this.unreachable = true;
      return false;
    }
    this.unreachable = false;
    if (!claim) return false;
    if (this.closed) {
      await claim.release();
      return false;
    }
    this.claim = claim;
    if (this.store.kind === 'postgres') this.log.info('periodic work: this controller runs it now');
    return true;
  }

  /** Gives the claim up (the controller stops): another controller takes over at its next round. */
  async close(): Promise<void> {
    this.closed = true;
    await this.claiming?.catch(() => {});
    const claim = this.claim;
    this.claim = undefined;
    await claim?.release();
  }
}
