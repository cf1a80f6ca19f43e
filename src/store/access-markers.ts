/**
 * Reading the access markers that migration 0005 keeps: one generation counter and last-change time per kind
 * of access-relevant data, bumped by triggers in the writing statement itself. Reading them is one tiny
 * query, cheap enough for every request; the access engine keys its caches on the generations.
 */
import { hotRows } from './direct.js';
import type { Executor } from './executor.js';
import { type MARKERS } from './migrations/0005-access-sessions.js';

export type MarkerName = (typeof MARKERS)[number];

export interface Marker {
  gen: number;
  /** When the last write of this kind happened (ISO-8601 UTC, the store's clock). */
  changedAt: string;
}

export type Markers = Readonly<Record<MarkerName, Marker>>;

const READ_MARKERS = 'select name, gen, "changedAt" from access_markers';

export async function readMarkers(db: Executor): Promise<Markers> {
  const rows = await hotRows<{ name: MarkerName; gen: number; changedAt: string }>(db, READ_MARKERS, []);
  const out = {} as Record<MarkerName, Marker>;
  for (const r of rows) out[r.name] = { gen: r.gen, changedAt: r.changedAt };
  return out;
}
