/**
 * Policy advice for an identity and a service (docs/reference-notes.md §2.3, the reference's policy
 * advisor): whether the identity may Dial or Bind the service, how many edge routers its edge router
 * policies give it, how many serve the service, and the routers common to both with their online state.
 */
import type { Ctx } from '../../ctx.js';
import { getRow } from '../../crud.js';
import { entityRef } from '../../render.js';
import { identities } from '../../resources/identity.js';
import { services } from '../../resources/service.js';
import { accessEngine } from '../../access/engine.js';
import { BIND, DIAL } from '../../access/queries.js';
import { commonRouters } from '../session/session-routers.js';

export async function policyAdvice(ctx: Ctx, identityId: string, serviceId: string): Promise<Record<string, unknown>> {
  const identity = await getRow(ctx, identities, identityId);
  const service = await getRow(ctx, services, serviceId);
  const engine = accessEngine(ctx);
  const m = await engine.markers(ctx);
  const view = await engine.view(ctx, identityId, m);
  const bits = view.grants.perms.get(serviceId) ?? 0;
  const { mine, serving, common } = await commonRouters(ctx, m, view.identity, serviceId);
  return {
    identityId,
    identity: entityRef('identities', identityId, identity.name),
    serviceId,
    service: entityRef('services', serviceId, service.name),
    isDialAllowed: (bits & DIAL) !== 0,
    isBindAllowed: (bits & BIND) !== 0,
    identityRouterCount: mine.size,
    serviceRouterCount: serving.size,
    commonRouters: common.map((r) => ({ ...entityRef('edge-routers', r.id, r.name), isOnline: r.isOnline })),
  };
}
