/**
 * SQL scopes of the affected-entity listings (`/service-policies/{id}/identities`,
 * `/identities/{id}/services`, …). Every listing is one of three questions, answered from the match tables
 * where a side is materialised and from the attribute index where it is not (identities):
 * the entities a policy selects, the policies that select an entity, and the entities reachable from an
 * entity through a policy kind. The scopes plug into `listEntities`, so paging, filters and sorting apply.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { matchedBySql, matchingPoliciesSql } from '../../store/policy-match.js';
import { sideFor, type PolicyKind, type TargetKind } from './kinds.js';
import { matchSide } from './matches.js';

const T_ID = sql.ref('t.id');

/** Entities of `target` (aliased `t`) selected by any policy of `kind` whose id is in `policyIds`. */
export function selectedBy(kind: PolicyKind, target: TargetKind, policyIds: RawBuilder<unknown>): RawBuilder<SqlBool> {
  const side = sideFor(kind, target);
  if (side.matchTable) {
    return sql<SqlBool>`${T_ID} in (select m."entityId" from ${sql.table(side.matchTable)} m where m."policyId" in (${policyIds}))`;
  }
  return matchedBySql(matchSide(kind, side), policyIds);
}

/** A sub-select of the ids of the policies of `kind` that select entity `entityId` of `target`. */
export function policiesSelecting(kind: PolicyKind, target: TargetKind, entityId: string): RawBuilder<unknown> {
  const side = sideFor(kind, target);
  if (side.matchTable) return sql`select m."policyId" from ${sql.table(side.matchTable)} m where m."entityId" = ${entityId}`;
  return sql`select x."policyId" from (${matchingPoliciesSql(matchSide(kind, side), entityId)}) x`;
}

/** Policies (aliased `t`) of `kind` that select the entity. */
export const policiesOf = (kind: PolicyKind, target: TargetKind, entityId: string): RawBuilder<SqlBool> =>
  sql<SqlBool>`${T_ID} in (${policiesSelecting(kind, target, entityId)})`;

/** Entities of `target` selected by one policy. */
export const selectedByPolicy = (kind: PolicyKind, target: TargetKind, policyId: string): RawBuilder<SqlBool> =>
  selectedBy(kind, target, sql`${policyId}`);

/** Entities of `to` that share a policy of `kind` with entity `entityId` of `from` (e.g. an identity's services). */
export const reachableThrough = (kind: PolicyKind, from: TargetKind, entityId: string, to: TargetKind): RawBuilder<SqlBool> =>
  selectedBy(kind, to, policiesSelecting(kind, from, entityId));
