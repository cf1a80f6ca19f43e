/**
 * entityChange events of the writes that bypass the generic CRUD (an enrollment used, a CA verified, an MFA
 * enrolment verified, an authenticator re-enrolled, …): the same event as a generic write of the record
 * (states from the resource definition, secrets left out: entity-change.ts), plus `metadata.operation`, the
 * name of what was done, since the record alone does not say it (a deleted enrollment may have been used or
 * removed by an admin).
 */
import { isDeepStrictEqual } from 'node:util';
import { findRowById } from '../../store/crud.js';
import type { Ctx } from '../ctx.js';
import type { ResourceDef, Row } from '../resource.js';
import { entityChangeEvent, otherChangeEvent, type EntityChangeType } from './entity-change.js';
import { recordEvents, type EventRecord } from './event.js';

/** What was done, as `metadata.operation` names it. */
export type Operation =
  | 'enrollment-used'
  | 'ca-verified'
  | 'authenticator-re-enrolled'
  | 'authenticator-extend-requested'
  | 'authenticator-extended'
  | 'authenticator-extend-verified'
  | 'identity-service-configs'
  | 'identity-trace'
  | 'router-re-enrolled'
  | 'router-extended'
  | 'mfa-enrolled'
  | 'mfa-verified'
  | 'mfa-recovery-codes-regenerated'
  | 'router-enrolled'
  | 'enrollment-created'
  | 'ca-auto-enrolled'
  | 'mfa-removed'
  | 'api-session-certificate-created'
  | 'api-session-certificate-deleted';

/** Adds what was done to an entityChange event. */
export function withOperation(e: EventRecord, operation: Operation): EventRecord {
  e.fields.metadata = { ...(e.fields.metadata as Record<string, unknown>), operation };
  return e;
}

/** The stored record before a change, for {@link recordRowChange}; read inside the change's transaction. */
export const rowBefore = (ctx: Ctx, def: ResourceDef, id: string): Promise<Row | undefined> =>
  findRowById(ctx.db, def, id);

/**
 * Records a change of `def`'s record `id` made in the transaction `ctx.db` outside the generic CRUD: the record
 * as it is now (none for a delete) against `before`.
 */
export async function recordRowChange(
  ctx: Ctx,
  def: ResourceDef,
  id: string,
  eventType: EntityChangeType,
  operation: Operation,
  before: Row | undefined,
): Promise<void> {
  const after = eventType === 'deleted' ? undefined : await findRowById(ctx.db, def, id);
  await recordEvents(ctx, [withOperation(entityChangeEvent(ctx, def, id, eventType, before, after), operation)]);
}

/**
 * Records a change of something that is no resource of its own (an identity's MFA enrolment, its service configs,
 * its trace), made in the transaction `ctx.db`, with states the caller chose to show: they must hold no secret.
 * Keys whose values differ are listed in `changes` (a key in `redacted` only named, as a changed secret is).
 */
export async function recordOtherOperation(
  ctx: Ctx,
  entityType: string,
  entityId: string,
  eventType: EntityChangeType,
  operation: Operation,
  before: Row | null,
  after: Row | null,
  redacted: readonly string[] = [],
): Promise<void> {
  const changes: Record<string, unknown> = {};
  if (before && after) {
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)]))
      if (!isDeepStrictEqual(before[k] ?? null, after[k] ?? null))
        changes[k] = { before: before[k] ?? null, after: after[k] ?? null };
    for (const k of redacted) changes[k] = { redacted: true };
  }
  const event = withOperation(otherChangeEvent(ctx, entityType, entityId, eventType, before, after), operation);
  if (before && after) event.fields.changes = changes;
  await recordEvents(ctx, [event]);
}
