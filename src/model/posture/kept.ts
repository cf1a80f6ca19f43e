/**
 * How much reported posture an identity keeps (docs/decisions.md, "Posture data bounds"). A
 * response is kept only when it answers a check that applies to the identity (one of a service policy that
 * includes it and grants at least one service) with the check's type, in the slot the check names (state.ts:
 * one OS, domain and MAC record, one per process of a process check), replacing the earlier record. A response
 * for any other id is ignored, as clients of the reference expect. Records of checks that no longer apply are
 * dropped with the next response, and all records together stay within {@link MAX_REPORTED_BYTES}.
 */
import { fieldError } from '../errors.js';
import type { PolicyCheck, PostureModel } from './evaluate.js';
import {
  dropRecord,
  filledSlots,
  keepRecord,
  keptRecord,
  type Reported,
  type ReportedPosture,
  type Slot,
} from './state.js';
import { postureCheckType } from './types/index.js';

/** At most this many bytes of reported posture are kept per identity (see {@link recordBytes}). */
export const MAX_REPORTED_BYTES = 64 * 1024;
/** What a record and a string cost beyond their text: an estimate of the objects holding them. */
const RECORD_BYTES = 64;
const STRING_BYTES = 8;

/** The checks applying to an identity, by id: those of its service policies that grant it a service. */
export function applicableChecks(model: PostureModel, policyIds: readonly string[]): Map<string, PolicyCheck> {
  const out = new Map<string, PolicyCheck>();
  if (model.size === 0) return out;
  for (const id of policyIds) {
    const p = model.get(id);
    if (p && p.services.size > 0) for (const c of p.checks) out.set(c.id, c);
  }
  return out;
}

/** Every slot the applicable checks fill. */
export const allowedSlots = (checks: ReadonlyMap<string, PolicyCheck>): Set<Slot> =>
  new Set([...checks.values()].flatMap((c) => postureCheckType(c.typeId)?.slots?.(c.details, c.id) ?? []));

/**
 * Where a response is kept: the slot of the applicable check it names, when that check is of a type the
 * response answers (`answers`); undefined means the response is ignored.
 */
export function slotFor(
  checks: ReadonlyMap<string, PolicyCheck>,
  response: Record<string, unknown>,
  answers: readonly string[],
): Slot | undefined {
  const check = typeof response.id === 'string' ? checks.get(response.id) : undefined;
  if (!check || !answers.includes(check.typeId)) return undefined;
  return postureCheckType(check.typeId)?.slotOf?.(check.details, check.id, response);
}

const textBytes = (v: unknown): number =>
  typeof v === 'string'
    ? STRING_BYTES + Buffer.byteLength(v, 'utf8')
    : Array.isArray(v)
      ? v.reduce((n: number, x) => n + textBytes(x), 0)
      : 0;

/** A record's size: the UTF-8 bytes of its strings (lists too) plus a fixed cost per record and per string. */
export const recordBytes = (r: Reported | undefined): number =>
  r === undefined ? 0 : Object.values(r).reduce((n: number, v) => n + textBytes(v), RECORD_BYTES);

export const reportedBytes = (r: ReportedPosture): number =>
  filledSlots(r).reduce((n, slot) => n + recordBytes(keptRecord(r, slot)), 0);

export interface KeptResponse {
  slot: Slot;
  record: Reported;
  /** The item's field prefix in the request (`[2].`), for the error naming it. */
  prefix: string;
  id: string;
}

/**
 * The identity's reported posture after the responses, as a new object (stored only once it is complete, so a
 * refusal changes nothing): records of slots no applicable check fills dropped, then each response kept in order.
 * A response taking the total over {@link MAX_REPORTED_BYTES} refuses the request (400, naming its `id`).
 */
export function withResponses(
  current: ReportedPosture,
  allowed: ReadonlySet<Slot>,
  responses: readonly KeptResponse[],
): ReportedPosture {
  const { os, domain, mac } = current;
  const next: ReportedPosture = { os, domain, mac, processes: new Map(current.processes) };
  for (const slot of filledSlots(next)) if (!allowed.has(slot)) dropRecord(next, slot);
  let total = reportedBytes(next);
  for (const r of responses) {
    total += recordBytes(r.record) - recordBytes(keptRecord(next, r.slot));
    if (total > MAX_REPORTED_BYTES) {
      throw fieldError(`${r.prefix}id`, `posture kept per identity is limited to ${MAX_REPORTED_BYTES} bytes`, r.id);
    }
    keepRecord(next, r.slot, r.record);
  }
  return next;
}
