/**
 * Scopes of the affected-entity listings (`/service-policies/{id}/identities`, `/identities/{id}/services`,
 * …). Every listing is one of three questions: the entities a policy selects, the policies that select an
 * entity, and the entities reachable from an entity through a policy kind. This module picks the policy
 * side (kinds.ts); the SQL is the store's (`src/store/scopes.ts`). The scopes plug into `listEntities`, so
 * paging, filters and sorting apply.
 */
import {
  onePolicy,
  policiesSelecting,
  policyIn,
  selectedByPolicies,
  type PolicyIdSource,
  type Scope,
} from '../../store/scopes.js';
import { matchSideOf as tables, type PolicyKind, type TargetKind } from './kinds.js';

export type { Scope } from '../../store/scopes.js';

/** Entities of `target` selected by any policy of `kind` among `policyIds`. */
const selectedBy = (kind: PolicyKind, target: TargetKind, policyIds: PolicyIdSource): Scope =>
  selectedByPolicies(tables(kind, target), policyIds);

/** Policies (the listed rows) of `kind` that select the entity. */
export const policiesOf = (kind: PolicyKind, target: TargetKind, entityId: string): Scope =>
  policyIn(policiesSelecting(tables(kind, target), entityId));

/** Entities of `target` selected by one policy. */
export const selectedByPolicy = (kind: PolicyKind, target: TargetKind, policyId: string): Scope =>
  selectedBy(kind, target, onePolicy(policyId));

/** Entities of `to` that share a policy of `kind` with entity `entityId` of `from` (e.g. an identity's services). */
export const reachableThrough = (kind: PolicyKind, from: TargetKind, entityId: string, to: TargetKind): Scope =>
  selectedBy(kind, to, policiesSelecting(tables(kind, from), entityId));
