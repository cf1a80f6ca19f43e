/**
 * Hooks every entity kind that policies select shares: keep its materialised matches current after a write,
 * and drop its `@id` from policies before it is deleted (§2.1, §2.6).
 */
import type { ResourceHooks } from '../resource.js';
import type { TargetKind } from './kinds.js';
import { rematchEntityAll, removeIdReferences } from './matches.js';
import { textOf } from '../row.js';

export function policyTargetHooks(target: TargetKind): Required<Pick<ResourceHooks, 'afterWrite' | 'beforeDelete'>> {
  return {
    async afterWrite(ctx, id, mode, input) {
      if (mode === 'create' || input.roleAttributes !== undefined) await rematchEntityAll(ctx, target, id);
    },
    async beforeDelete(ctx, row) {
      await removeIdReferences(ctx, target, textOf(row, 'id'));
    },
  };
}
