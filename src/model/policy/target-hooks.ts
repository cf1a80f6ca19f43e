/**
 * The hook every entity kind that policies select shares: drop its `@id` from policies before it is deleted
 * (§2.1, §2.6). Nothing else is written for policies when an entity is created or its attributes change: what
 * selects it is answered from the attribute index when asked (docs/policy-engine.md).
 */
import type { ResourceHooks } from '../resource.js';
import type { TargetKind } from './kinds.js';
import { removeIdReferences } from './matches.js';
import { textOf } from '../row.js';

export function policyTargetHooks(target: TargetKind): Required<Pick<ResourceHooks, 'beforeDelete'>> {
  return {
    async beforeDelete(ctx, row) {
      await removeIdReferences(ctx, target, textOf(row, 'id'));
    },
  };
}
