/**
 * `entityChange` events: every create, update and delete of a resource through the generic CRUD
 * (src/model/crud.ts), with who made it and from where (`metadata.author`, `metadata.source`, parity: the
 * reference's entityChange event), the record before and after (`initialState`, `finalState`) and, for an
 * update, each changed field with its values before and after (`changes`).
 *
 * No secret reaches an event: a state holds only what the resource definition renders (a `hidden` prop is
 * secret unless the definition marks it `audited`) and never a prop whose name says it is a secret. A changed
 * secret is named in `changes` as `{ redacted: true }`, without its values. So a new secret prop is left out
 * by default as soon as it is hidden from the wire, and a prop named like a secret is left out even if not.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Ctx } from '../ctx.js';
import type { ResourceDef, Row } from '../resource.js';
import { BASE_PROPS, isSecretProp, shownOf } from '../prop-lists.js';
import { recordEvents, type EventRecord } from './event.js';

/** The props an event shows of a record (worked out when the definition was made: prop-lists.ts). */
const shownProps = (def: ResourceDef): readonly string[] => def.lists?.shown ?? shownOf(def.props);

/** A stored record as an event shows it (secrets left out). */
export function auditState(def: ResourceDef, row: Row): Row {
  const out: Row = {};
  for (const k of shownProps(def)) if (row[k] !== undefined) out[k] = row[k];
  return out;
}

/** The fields an update changed, with their values before and after (a secret only named). */
export function changedFields(def: ResourceDef, before: Row, after: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const names = [
    ...BASE_PROPS,
    ...Object.entries(def.props)
      .filter(([, p]) => !p.virtual)
      .map(([n]) => n),
  ];
  for (const k of names) {
    if (k === 'updatedAt') continue;
    const a = before[k] ?? null;
    const b = after[k] ?? null;
    if (isDeepStrictEqual(a, b)) continue;
    out[k] = isSecretProp(k, def.props[k]) ? { redacted: true } : { before: a, after: b };
  }
  return out;
}

export type EntityChangeType = 'created' | 'updated' | 'deleted';

/** The metadata of a change: who and from where (the controller itself when nobody asked). */
export function metadataOf(ctx: Ctx): Record<string, unknown> {
  const a = ctx.actor;
  if (!a) return { source: { type: 'controller' } };
  // Two literals, not a spread of the author: a spread followed by a key is slow (copyOf in row.ts).
  return a.author ? { author: a.author, source: a.source } : { source: a.source };
}

/** The event of one change of `def`'s record `id`: before is absent for a create, after for a delete. */
export function entityChangeEvent(
  ctx: Ctx,
  def: ResourceDef,
  id: string,
  eventType: EntityChangeType,
  before: Row | undefined,
  after: Row | undefined,
): EventRecord {
  const event = otherChangeEvent(
    ctx,
    def.name,
    id,
    eventType,
    before ? auditState(def, before) : null,
    after ? auditState(def, after) : null,
  );
  if (before && after) event.fields.changes = changedFields(def, before, after);
  return event;
}

/** Records the change in the transaction `ctx.db`. */
export function recordEntityChange(
  ctx: Ctx,
  def: ResourceDef,
  id: string,
  eventType: EntityChangeType,
  before: Row | undefined,
  after: Row | undefined,
): Promise<void> {
  return recordEvents(ctx, [entityChangeEvent(ctx, def, id, eventType, before, after)]);
}

/**
 * The change event of something that is no resource of its own (an identity's MFA enrollment), with states the
 * caller chose to show (they must hold no secret).
 */
export function otherChangeEvent(
  ctx: Ctx,
  entityType: string,
  entityId: string,
  eventType: EntityChangeType,
  before: Row | null,
  after: Row | null,
): EventRecord {
  return {
    namespace: 'entityChange',
    typeField: 'eventType',
    eventType,
    actorId: ctx.actor?.author?.id,
    entityType,
    entityId,
    fields: { metadata: metadataOf(ctx), entityType, entityId, initialState: before, finalState: after },
  };
}
