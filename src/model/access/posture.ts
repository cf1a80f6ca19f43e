/**
 * The posture step of session creation (docs/reference-notes.md §4.5, step 3): among the service policies of
 * the requested type that link the identity and the service, at least one must pass (all its checks pass; a
 * policy without checks passes), else 409 INVALID_POSTURE naming the failing policies and their checks, and
 * the refusal is recorded as a failed service request (§9.3). The granting policies are only looked up when
 * none of those carrying checks passes; with no posture checks in the store nothing is queried.
 */
import type { Markers } from '../../store/access-markers.js';
import { iso, type Ctx } from '../ctx.js';
import { DomainError } from '../errors.js';
import { checkedPoliciesFor, evaluatePolicy, postureModel, postureView } from '../posture/evaluate.js';
import { recordFailedRequest } from '../posture/posture-of.js';

export interface PostureRequest {
  identityId: string;
  apiSessionId: string;
  serviceId: string;
  serviceName: string;
  type: 'Dial' | 'Bind';
  /** The service policies selecting the identity (the access engine's, sorted). */
  identityPolicyIds: readonly string[];
  /** Generation of the `serviceAccess` access marker the request read. */
  serviceAccessGen: number;
  /** The granting policies of `type`, looked up only when a check needs them. */
  policies(): Promise<{ id: string; name: string }[]>;
}

/** Throws 409 INVALID_POSTURE when no granting policy passes; resolves when the session may be created. */
export async function checkSessionPosture(ctx: Ctx, req: PostureRequest): Promise<void> {
  const model = await postureModel(ctx, req.serviceAccessGen);
  if (model.size === 0) return;
  const checked = checkedPoliciesFor(model, req.identityPolicyIds, req.serviceId, req.type);
  if (checked.length === 0) return;
  const now = ctx.now();
  const view = await postureView(ctx, req.identityId, req.apiSessionId, now);
  const outcomes = checked.map((p) => evaluatePolicy(p, view));
  if (outcomes.some((o) => o.isPassing)) return;
  // A granting policy without checks passes.
  const granting = await req.policies();
  if (granting.some((g) => !model.has(g.id))) return;

  await recordFailedRequest(ctx.db, req.identityId, {
    when: iso(now),
    apiSessionId: req.apiSessionId,
    serviceId: req.serviceId,
    serviceName: req.serviceName,
    sessionType: req.type,
    policyFailures: outcomes.map((o) => ({
      policyId: o.policy.id,
      policyName: o.policy.name,
      checks: o.checks
        .filter((c) => !c.outcome.isPassing)
        .map((c) => ({
          postureCheckId: c.check.id,
          postureCheckName: c.check.name,
          postureCheckType: c.check.typeId,
          ...c.outcome.failure,
        })),
    })),
  });
  const ids = outcomes.map((o) => o.policy.id);
  throw new DomainError('INVALID_POSTURE', {
    cause: {
      message: `Failed to pass posture checks for service policies: [${ids.join(' ')}]`,
      data: Object.fromEntries(
        outcomes.map((o) => [
          o.policy.id,
          o.checks
            .filter((c) => !c.outcome.isPassing)
            .map((c) => ({ id: c.check.id, typeId: c.check.typeId, isPassing: false })),
        ]),
      ),
    },
  });
}

/** The granting policies that pass the posture of an API session (all of them while no check exists). */
export async function passingPolicies<P extends { id: string }>(
  ctx: Ctx,
  m: Markers,
  granting: P[],
  identityId: string,
  apiSessionId: string,
): Promise<P[]> {
  const model = await postureModel(ctx, m.serviceAccess.gen);
  if (model.size === 0) return granting;
  const view = await postureView(ctx, identityId, apiSessionId, ctx.now());
  return granting.filter((g) => {
    const p = model.get(g.id);
    return !p || evaluatePolicy(p, view).isPassing;
  });
}
