/**
 * Identity tracing (`PUT /identities/{id}/trace`, docs/decisions.md "Identity trace"): the settings are kept on
 * the identity with the time they end; whether tracing is on is computed from that time and the controller's
 * clock at read time, so it switches itself off without a timer.
 */
import { randomUUID } from 'node:crypto';
import { withTx } from '../../../store/db.js';
import { readTrace, readTraces, writeTrace, type StoredTrace } from '../../../store/identity-trace.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { parseDuration } from '../../duration.js';
import { fieldError, notFound } from '../../errors.js';
import { recordOtherOperation } from '../../events/operation-events.js';

/** The request body (`traceSpec`). */
export interface TraceSpec {
  enabled?: boolean;
  duration?: string;
  traceId?: string;
  channels?: string[];
}

/** The answer (`traceDetail`), and what the identity record shows as `tracing` (with the channels). */
export interface TraceDetail {
  enabled: boolean;
  traceId?: string;
  until?: string;
  channels?: string[];
}

/** Longest trace accepted: a year (a longer one is a mistake, and past Date's range an invalid time). */
export const MAX_TRACE_MS = 365 * 24 * 3_600_000;

/** What stored settings mean at `now`: on until `until`, then off (the stored values stay for the record). */
export function traceView(stored: StoredTrace, now: Date): TraceDetail {
  const enabled = stored.until !== null && stored.until > iso(now);
  if (!enabled) return { enabled: false };
  return { enabled, traceId: stored.traceId ?? '', until: stored.until!, channels: stored.channels };
}

function durationMs(text: string | undefined): number {
  if (text === undefined || text.trim() === '')
    throw fieldError('duration', 'a duration is required to enable tracing');
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (e) {
    throw fieldError('duration', (e as Error).message, text);
  }
  if (ms <= 0) throw fieldError('duration', 'must be longer than 0', text);
  if (ms > MAX_TRACE_MS) throw fieldError('duration', 'must be at most 8760h', text);
  return ms;
}

export async function updateIdentityTrace(ctx: Ctx, identityId: string, spec: TraceSpec): Promise<TraceDetail> {
  const now = ctx.now();
  const next: StoredTrace = spec.enabled
    ? {
        until: iso(new Date(now.getTime() + durationMs(spec.duration))),
        traceId: spec.traceId || randomUUID(),
        channels: [...new Set(spec.channels ?? [])],
      }
    : { until: null, traceId: null, channels: [] };
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const before = await readTrace(tctx.db, identityId);
    if (!before) throw notFound(identityId, 'identity');
    await writeTrace(tctx.db, identityId, next, iso(now));
    await recordOtherOperation(
      tctx,
      'identities',
      identityId,
      'updated',
      'identity-trace',
      { tracing: before },
      {
        tracing: next,
      },
    );
    const view = traceView(next, now);
    return spec.enabled ? { enabled: view.enabled, traceId: view.traceId, until: view.until } : { enabled: false };
  });
}

/** The `tracing` view of each of a page of identities (decorate hook of the identity resource). */
export async function tracingOf(ctx: Ctx, identityIds: readonly string[]): Promise<Map<string, TraceDetail>> {
  const now = ctx.now();
  const stored = await readTraces(ctx.db, identityIds);
  return new Map(identityIds.map((id) => [id, stored.has(id) ? traceView(stored.get(id)!, now) : { enabled: false }]));
}
