/**
 * `postureQueries` of a service as a client sees it (docs/reference-notes.md §4.7): for each of the caller's
 * policies that grants the service and carries checks, whether it passes and, per check, whether it passes
 * with its timeout and (process checks) the processes to report. Computed from the caller's current posture.
 */
import type { CheckedPolicy, PostureModel } from './evaluate.js';
import { checkedPoliciesFor, evaluateCheck } from './evaluate.js';
import { postureCheckType } from './types/index.js';
import type { PostureView } from './types/type.js';

function policyQueries(p: CheckedPolicy, view: PostureView): Record<string, unknown> {
  const queries = p.checks.map((c) => {
    const type = postureCheckType(c.typeId);
    const isPassing = evaluateCheck(c, view).isPassing;
    return {
      id: c.id,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
      tags: {},
      _links: {},
      queryType: c.typeId,
      isPassing,
      ...(type?.timeout?.(c.details, view) ?? { timeout: -1, timeoutRemaining: -1 }),
      ...type?.query?.(c.details),
    };
  });
  return { policyId: p.id, policyType: p.type, isPassing: queries.every((q) => q.isPassing), postureQueries: queries };
}

/** The `postureQueries` of one service for the caller (empty while no posture check exists). */
export function postureQueriesFor(
  model: PostureModel,
  identityPolicyIds: readonly string[],
  serviceId: string,
  view: PostureView,
): Record<string, unknown>[] {
  if (model.size === 0) return [];
  return checkedPoliciesFor(model, identityPolicyIds, serviceId).map((p) => policyQueries(p, view));
}
