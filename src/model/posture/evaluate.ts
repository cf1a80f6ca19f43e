/**
 * Posture evaluation (docs/reference-notes.md §4.5 step 3, §9.3): a policy passes when all its checks pass
 * (a policy without checks passes); a session needs one passing policy among those of the requested type that
 * grant the identity the service. The policies carrying checks are cached per generation of the
 * `serviceAccess` marker, which every posture-check and policy write bumps; with no check in the store the
 * evaluation is a lookup in an empty map.
 */
import type { Executor } from '../../store/db.js';
import { defineCache, storeCache } from '../../store/runtime.js';
import { policyPostureChecks, servicesOfPolicies } from '../../store/posture.js';
import type { Ctx } from '../ctx.js';
import { matchSideOf, SERVICE_POLICY } from '../policy/kinds.js';
import { identityPosture, sessionPosture } from './posture-of.js';
import { postureCheckType } from './types/index.js';
import type { CheckOutcome, Details, PostureView } from './types/type.js';

export interface PolicyCheck {
  id: string;
  name: string;
  typeId: string;
  createdAt: string;
  updatedAt: string;
  details: Details;
}

export interface CheckedPolicy {
  id: string;
  name: string;
  type: 'Dial' | 'Bind';
  checks: PolicyCheck[];
  services: Set<string>;
}

/** The service policies that carry posture checks. */
export type PostureModel = ReadonlyMap<string, CheckedPolicy>;

/** The store's posture model, with the `serviceAccess` marker generation it was read at. */
interface KeptModel {
  gen: number;
  model: Promise<PostureModel>;
  /** The model once loaded (`postureModelNow`). */
  settled?: PostureModel;
}
const MODELS = defineCache('posture-model', (): { kept?: KeptModel } => ({}));

const CHECK_SIDE = matchSideOf(SERVICE_POLICY, 'postureCheck');
const SERVICE_SIDE = matchSideOf(SERVICE_POLICY, 'service');

async function loadModel(db: Executor): Promise<PostureModel> {
  const out = new Map<string, CheckedPolicy>();
  for (const r of await policyPostureChecks(db, CHECK_SIDE)) {
    let p = out.get(r.policyId);
    if (!p) {
      p = {
        id: r.policyId,
        name: r.policyName,
        type: r.policyType as 'Dial' | 'Bind',
        checks: [],
        services: new Set(),
      };
      out.set(r.policyId, p);
    }
    p.checks.push({
      id: r.checkId,
      name: r.checkName,
      typeId: r.typeId,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      details: r.details,
    });
  }
  for (const s of await servicesOfPolicies(db, SERVICE_SIDE, [...out.keys()]))
    out.get(s.policyId)?.services.add(s.serviceId);
  return out;
}

/** The policies carrying checks as of generation `gen` of the `serviceAccess` marker. */
export function postureModel(ctx: Ctx, gen: number): Promise<PostureModel> {
  const slot = storeCache(ctx.db, MODELS);
  if (!slot) return loadModel(ctx.db);
  if (slot.kept?.gen === gen) return slot.kept.model;
  const kept: KeptModel = { gen, model: loadModel(ctx.db) };
  slot.kept = kept;
  kept.model.then(
    (model) => (kept.settled = model),
    () => {
      if (slot.kept === kept) slot.kept = undefined;
    },
  );
  return kept.model;
}

/** The model `postureModel` would answer when it is loaded already; undefined otherwise (then `postureModel`). */
export function postureModelNow(ctx: Ctx, gen: number): PostureModel | undefined {
  const kept = storeCache(ctx.db, MODELS)?.kept;
  return kept?.gen === gen ? kept.settled : undefined;
}

/** The identity's and the API session's posture as of now (from the store's posture cache). */
export async function postureView(ctx: Ctx, identityId: string, apiSessionId: string, now: Date): Promise<PostureView> {
  const [identity, session] = await Promise.all([
    identityPosture(ctx.db, identityId),
    sessionPosture(ctx.db, apiSessionId),
  ]);
  return { identity, session, now };
}

export function evaluateCheck(check: PolicyCheck, view: PostureView): CheckOutcome {
  const type = postureCheckType(check.typeId);
  if (!type) return { isPassing: false, failure: {} };
  return type.evaluate(check.details, check.id, view);
}

export interface PolicyOutcome {
  policy: CheckedPolicy;
  isPassing: boolean;
  checks: { check: PolicyCheck; outcome: CheckOutcome }[];
}

export function evaluatePolicy(policy: CheckedPolicy, view: PostureView): PolicyOutcome {
  const checks = policy.checks.map((check) => ({ check, outcome: evaluateCheck(check, view) }));
  return { policy, isPassing: checks.every((c) => c.outcome.isPassing), checks };
}

/** The identity's policies (among `identityPolicyIds`) that grant the service with checks. */
export function checkedPoliciesFor(
  model: PostureModel,
  identityPolicyIds: readonly string[],
  serviceId: string,
  type?: 'Dial' | 'Bind',
): CheckedPolicy[] {
  const out: CheckedPolicy[] = [];
  if (model.size === 0) return out;
  for (const id of identityPolicyIds) {
    const p = model.get(id);
    if (p && p.services.has(serviceId) && (type === undefined || p.type === type)) out.push(p);
  }
  return out;
}
