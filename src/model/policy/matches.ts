/**
 * Which policy sides select a kind of entity, and what an entity's delete does to the role lists. Nothing is materialised (docs/policy-engine.md): a policy or entity write
 * writes only its own rows, and every answer is computed from the role and attribute indexes when asked.
 */
import { removeRoleEntry } from '../../store/policy-match.js';
import type { Ctx } from '../ctx.js';
import { POLICY_KINDS, type PolicyKind, type PolicySide, type TargetKind } from './kinds.js';

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
