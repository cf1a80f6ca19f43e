/**
 * Keeping the materialised policy matches current (docs/policy-engine.md). Every function runs on the
 * caller's executor, so it joins the write's transaction: a policy or entity change and its matches commit
 * together or not at all. Work is proportional to what changed: one policy against its targets, or one
 * entity against the policies of its kind, never the whole model.
 */
import { rematchEntity, rematchPolicy, removeRoleEntry, type MatchSide } from '../../store/policy-match.js';
import type { Ctx } from '../ctx.js';
import { POLICY_KINDS, TARGETS, type PolicyKind, type PolicySide, type TargetKind } from './kinds.js';

export const matchSide = (kind: PolicyKind, side: PolicySide): MatchSide => ({
  policyTable: kind.table,
  rolesTable: side.rolesTable,
  attrTable: TARGETS[side.target].attrTable,
});

/** Every (policy kind, side) pair whose role list selects entities of `target`. */
export function sidesTargeting(target: TargetKind): { kind: PolicyKind; side: PolicySide }[] {
  return POLICY_KINDS.flatMap((kind) => kind.sides.filter((s) => s.target === target).map((side) => ({ kind, side })));
}

/** After a policy is created or its semantic or role lists change. */
export async function rematchPolicyAll(ctx: Ctx, kind: PolicyKind, policyId: string): Promise<void> {
  for (const side of kind.sides) {
    if (side.matchTable)
      await rematchPolicy(ctx.db, matchSide(kind, side), side.matchTable, TARGETS[side.target].table, policyId);
  }
}

/** After an entity is created or its role attributes change. Identities have nothing materialised. */
export async function rematchEntityAll(ctx: Ctx, target: TargetKind, entityId: string): Promise<void> {
  for (const { kind, side } of sidesTargeting(target)) {
    if (side.matchTable) await rematchEntity(ctx.db, matchSide(kind, side), side.matchTable, entityId);
  }
}

/**
 * Before an entity is deleted: its `@id` entries leave every policy (parity: §2.1, no 409). Only that entity
 * was selected by them, so no other match changes; its own match rows go with it by cascade.
 */
export async function removeIdReferences(ctx: Ctx, target: TargetKind, id: string): Promise<void> {
  for (const { side } of sidesTargeting(target)) {
    await removeRoleEntry(ctx.db, side.rolesTable, `@${id}`);
  }
}
