/**
 * Database operations of the Management API (parity: docs/reference-notes.md §8): the data-integrity scan and
 * fix running in the background, one at a time (among every controller sharing a PostgreSQL store, through
 * the store's claims), and online snapshots at most once a minute (SQLite's backup, or pg_dump's archive of a
 * PostgreSQL store). One instance per controller; the daemon builds it, an offline command can build its own
 * over the same store.
 *
 * "In the background" means on the event loop between requests: the request that starts a scan is answered
 * first, and the scan waits for the loop's next turn between its checks and within the large ones (./pace.ts),
 * with SQLite's file check on a worker thread, so the controller keeps serving and a second start meets the
 * running one (429). The results show the findings so far while it runs.
 */
import { withTx, type OpenedStore } from '../../store/db.js';
import type { StoreClaim } from '../../store/claims.js';
import { bumpAllMarkers } from '../../store/integrity.js';
import { readIntegrityResults, saveIntegrityResults } from '../../store/integrity-results.js';
import { snapshotPath, SnapshotUnavailable } from '../../store/snapshot.js';
import { iso, withDb, type Ctx, type EventActor } from '../ctx.js';
import { databaseEvent, recordOwnEvent } from '../events/system-events.js';
import type { EventRecord } from '../events/event.js';
import { DomainError } from '../errors.js';
import { INTEGRITY_CHECKS, type Finding, type IntegrityCheck, type ScanEnv } from './checks.js';
import { yieldToEventLoop } from './pace.js';

/** The reference keeps at most this many results, then says `tooManyErrors`. */
export const MAX_RESULTS = 1000;
/** At most one requested snapshot per this many milliseconds. */
export const SNAPSHOT_INTERVAL_MS = 60_000;
/** What the time fields say before any scan ran (the reference's zero time). */
export const NO_TIME = '0001-01-01T00:00:00.000Z';

export interface IntegrityResult {
  description: string;
  fixed: boolean;
}

/** The wire shape of `GET /database/data-integrity-results` (`dataIntegrityCheckDetails`). */
export interface IntegrityDetails {
  inProgress: boolean;
  fixingErrors: boolean;
  startTime: string;
  endTime: string;
  error: string;
  tooManyErrors: boolean;
  results: IntegrityResult[];
}

export interface ScanFinding extends Finding {
  check: IntegrityCheck;
}

export interface ScanOptions {
  checks?: readonly IntegrityCheck[];
  env?: ScanEnv;
  /** Told the findings of each check as it ends (the results while a scan runs). */
  found?(findings: readonly ScanFinding[]): void;
}

/** Runs every check's scan, in order, letting the event loop run between them. */
export async function scanIntegrity(ctx: Ctx, opts: ScanOptions = {}): Promise<ScanFinding[]> {
  const out: ScanFinding[] = [];
  for (const check of opts.checks ?? INTEGRITY_CHECKS) {
    await yieldToEventLoop();
    const own = (await check.scan(ctx, opts.env)).map((f) => ({ ...f, check }));
    out.push(...own);
    opts.found?.(own);
  }
  return out;
}

/**
 * Repairs the findings of one scan in ONE transaction, check by check in the list's order, and moves every
 * access marker on so the caches recompute. Refused (nothing written) while a fatal finding stands.
 */
export async function repairIntegrity(ctx: Ctx, findings: readonly ScanFinding[]): Promise<void> {
  if (findings.some((f) => f.check.fatal)) return;
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const checks = [...new Set(findings.map((f) => f.check))];
    for (const check of checks) {
      const own = findings.filter((f) => f.check === check);
      if (check.fix) await check.fix(tctx, own);
      else for (const f of own) await f.repair?.(tctx);
    }
    await bumpAllMarkers(trx, iso(ctx.now()));
  });
}

export interface DatabaseOpsOptions {
  ctx: Ctx;
  /**
   * The open store (it takes the snapshots and the claims that keep scans one at a time among controllers
   * sharing it) and the SQLite file's path in the data dir: snapshots go beside it (a PostgreSQL store's too).
   */
  store: OpenedStore;
  file: string;
  /** Told after each completed scan: whether nothing remained unfixed, how many findings, and when. */
  onScanDone?(ok: boolean, findings: number, at: Date): void;
  /** The checks a scan runs (default: all of them; tests put in their own). */
  checks?: readonly IntegrityCheck[];
}

const UTC_STAMP = (d: Date) => iso(d).replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

export class DatabaseOps {
  private details: IntegrityDetails = {
    inProgress: false,
    fixingErrors: false,
    startTime: NO_TIME,
    endTime: NO_TIME,
    error: '',
    tooManyErrors: false,
    results: [],
  };
  private running: Promise<void> | undefined;
  private lastSnapshotAt: number | undefined;
  /** The results' saves, in order (the last one saved is the newest state). */
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly opts: DatabaseOpsOptions) {}

  /**
   * A copy of the last (or running) scan's state: this controller's own while it runs one, else the store's
   * (saved by whichever controller ran the last one). A scan the store says is running while nobody holds its
   * claim was cut short by its controller's end: it is shown ended, with that said.
   */
  async results(): Promise<IntegrityDetails> {
    if (this.running) return this.copy();
    const stored = await readIntegrityResults<IntegrityDetails>(this.opts.ctx.db);
    if (!stored) return this.copy();
    if (!stored.inProgress) return stored;
    const claim = await this.opts.store.claim('integrity-scan').catch(() => undefined);
    if (!claim) return stored;
    await claim.release();
    return { ...stored, inProgress: false, error: 'the scan stopped with the controller that ran it: start it again' };
  }

  /** This controller's own view of its last (or running) scan, without asking the store. */
  local(): IntegrityDetails {
    return this.copy();
  }

  private copy(): IntegrityDetails {
    return { ...this.details, results: [...this.details.results] };
  }

  /** Saves the current state for every controller sharing the store (a failed save is logged, not fatal). */
  private save(details: IntegrityDetails = this.copy()): Promise<void> {
    const { ctx } = this.opts;
    this.saving = this.saving
      .then(() => saveIntegrityResults(ctx.db, details, iso(ctx.now())))
      .catch((err: unknown) => ctx.log.warn({ err }, 'data integrity results could not be saved in the store'));
    return this.saving;
  }

  /**
   * Starts a scan (and repair with `fix`) in the background and answers once it has started: the scan's first
   * step waits for the event loop's next turn. 429 while one runs (parity: §8), here or on another controller
   * sharing the store (the scan's claim, claims.ts).
   */
  async start(fix: boolean, by?: EventActor): Promise<void> {
    if (this.running) throw new DomainError('RATE_LIMITED');
    let done!: () => void;
    const running = new Promise<void>((resolve) => (done = resolve));
    this.running = running;
    const stop = () => {
      if (this.running === running) this.running = undefined;
      done();
    };
    let claim: StoreClaim | undefined;
    try {
      claim = await claimOrUnavailable(this.opts.store, 'integrity-scan');
    } catch (e) {
      stop();
      throw e;
    }
    if (!claim) {
      stop();
      throw new DomainError('RATE_LIMITED', {
        message: 'A data-integrity scan is running on another controller of this store',
      });
    }
    const { ctx } = this.opts;
    this.details = {
      inProgress: true,
      fixingErrors: fix,
      startTime: iso(ctx.now()),
      endTime: NO_TIME,
      error: '',
      tooManyErrors: false,
      results: [],
    };
    void this.save();
    void this.run(fix, claim, by).finally(stop);
  }

  /** Resolves when no scan runs (tests, shutdown). */
  async idle(): Promise<void> {
    await this.running;
  }

  /** The results while a scan runs: each check's findings are added as it ends (fixed: false so far). */
  private showFound = (findings: readonly ScanFinding[]): void => {
    const results = [...this.details.results, ...findings.map((f) => ({ description: f.description, fixed: false }))];
    this.details = {
      ...this.details,
      tooManyErrors: results.length > MAX_RESULTS,
      results: results.slice(0, MAX_RESULTS),
    };
    void this.save();
  };

  /** The scan (and fix); the claim is given up before the results say it ended, so a next start can claim it. */
  private async run(fix: boolean, claim: StoreClaim, by: EventActor | undefined): Promise<void> {
    const { ctx } = this.opts;
    const scan = (found?: ScanOptions['found']) =>
      scanIntegrity(ctx, { checks: this.opts.checks, env: { file: this.opts.file }, found });
    let results: IntegrityResult[] = [];
    let error = '';
    try {
      const found = await scan(this.showFound);
      if (!fix || found.length === 0) {
        results = found.map((f) => ({ description: f.description, fixed: false }));
      } else if (found.some((f) => f.check.fatal)) {
        results = found.map((f) => ({ description: f.description, fixed: false }));
        error = 'the database file is damaged: nothing was repaired; restore a snapshot (edgectl db restore)';
      } else {
        // Shown unfixed should the snapshot or the repair fail (a repair that fails rolls the whole fix back).
        results = found.map((f) => ({ description: f.description, fixed: false }));
        const snapshot = await this.takeSnapshot().catch((e: unknown) => {
          throw new Error(
            `the fix starts with a snapshot and none could be taken (${(e as Error).message}); nothing was repaired`,
          );
        });
        ctx.log.info({ file: snapshot, findings: found.length }, 'data integrity fix: snapshot taken, repairing');
        await repairIntegrity(ctx, found);
        const left = new Set((await scan()).map((f) => f.description));
        results = found.map((f) => ({ description: f.description, fixed: !left.has(f.description) }));
      }
    } catch (e) {
      error = (e as Error).message ?? String(e);
      ctx.log.error({ err: e }, 'data integrity scan failed');
    }
    await claim.release().catch(() => {});
    const at = ctx.now();
    const final: IntegrityDetails = {
      ...this.details,
      inProgress: false,
      endTime: iso(at),
      error,
      tooManyErrors: results.length > MAX_RESULTS,
      results: results.slice(0, MAX_RESULTS),
    };
    // Saved before this controller shows it ended: a next start (here or elsewhere) comes after the save.
    await this.save(final);
    await this.record(
      databaseEvent(fix ? 'integrity-fix' : 'integrity-check', by, {
        findings: results.length,
        fixed: results.filter((r) => r.fixed).length,
        error,
      }),
    );
    this.details = final;
    const ok = error === '' && results.every((r) => r.fixed);
    this.opts.onScanDone?.(ok, results.length, at);
  }

  /**
   * A requested snapshot: at most one per minute by the controller's clock, else 429 (parity: §8); 429 too
   * while another controller sharing the store takes one. A snapshot that cannot be taken here (no pg_dump) or
   * fails is a clear error and does not count against the minute.
   */
  async snapshot(by?: EventActor): Promise<string> {
    const now = this.opts.ctx.now().getTime();
    const last = this.lastSnapshotAt;
    if (last !== undefined && now - last < SNAPSHOT_INTERVAL_MS) {
      throw new DomainError('RATE_LIMITED');
    }
    this.lastSnapshotAt = now;
    try {
      const claim = await claimOrUnavailable(this.opts.store, 'snapshot');
      if (!claim) {
        throw new DomainError('RATE_LIMITED', {
          message: 'A snapshot is being taken by another controller of this store',
        });
      }
      let path: string;
      try {
        path = await this.takeSnapshot();
      } finally {
        await claim.release();
      }
      await this.record(databaseEvent('snapshot', by, { path }));
      return path;
    } catch (e) {
      this.lastSnapshotAt = last;
      if (e instanceof DomainError) throw e;
      if (e instanceof SnapshotUnavailable) throw new DomainError('SNAPSHOT_UNAVAILABLE', { message: e.message });
      this.opts.ctx.log.error({ err: e }, 'snapshot failed');
      throw new DomainError('SNAPSHOT_FAILED', { message: `The snapshot could not be taken: ${(e as Error).message}` });
    }
  }

  /** Records an operation's event; one that cannot be written is logged (the operation itself is done). */
  private async record(e: EventRecord): Promise<void> {
    const { ctx } = this.opts;
    await recordOwnEvent(ctx, e).catch((err: unknown) =>
      ctx.log.warn({ err, event: e.eventType }, 'the event of a database operation could not be recorded'),
    );
  }

  /**
   * `<store file>-YYYYMMDD-HHMMSS` beside the SQLite store, `edgectl-postgres-YYYYMMDD-HHMMSS.dump` in the data
   * dir for PostgreSQL (a counter added if that name exists), mode 0600 (snapshot.ts).
   */
  private async takeSnapshot(): Promise<string> {
    const { store, file, ctx } = this.opts;
    const dest = snapshotPath(store.kind, file, UTC_STAMP(ctx.now()));
    await store.snapshot(dest);
    return dest;
  }
}

/** The claim `name` of the store, or undefined while another holds it; 503 while the store cannot be reached. */
async function claimOrUnavailable(store: OpenedStore, name: 'integrity-scan' | 'snapshot') {
  try {
    return await store.claim(name);
  } catch {
    throw new DomainError('TIMEOUT', { message: 'The store is not answering' });
  }
}
