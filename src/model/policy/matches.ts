/**
 * The policy sides as the store's matching SQL sees them (src/store/policy-match.ts), and what an entity's
 * delete does to the role lists. Nothing is materialised (docs/policy-engine.md): a policy or entity write
 * writes only its own rows, and every answer is computed from the role and attribute indexes when asked.
 */
import { removeRoleEntry, type MatchSide } from '../../store/policy-match.js';
import type { Ctx } from '../ctx.js';
import { POLICY_KINDS, TARGETS, sideFor, type PolicyKind, type PolicySide, type TargetKind } from './kinds.js';

export const matchSide = (kind: PolicyKind, side: PolicySide): MatchSide => ({
  policyTable: kind.table,
  rolesTable: side.rolesTable,
  attrTable: TARGETS[side.target].attrTable,
  targetTable: TARGETS[side.target].table,
});

/** The side of `kind` that selects `target`, for the store's matching SQL. */
export const matchSideOf = (kind: PolicyKind, target: TargetKind): MatchSide => matchSide(kind, sideFor(kind, target));

/** Every (policy kind, side) pair whose role list selects entities of `target`. */
export function sidesTargeting(target: TargetKind): { kind: PolicyKind; side: PolicySide }[] {
  return POLICY_KINDS.flatMap((kind) => kind.sides.filter((s) => s.target === target).map((side) => ({ kind, side })));
}

/**
 * Before an entity is deleted: its `@id` entries leave every policy (parity: §2.1, no 409). Only that entity
 * was selected by them, so no other match changes.
 */
export async function removeIdReferences(ctx: Ctx, target: TargetKind, id: string): Promise<void> {
  for (const { side } of sidesTargeting(target)) {
    await removeRoleEntry(ctx.db, side.rolesTable, `@${id}`);
  }
}
