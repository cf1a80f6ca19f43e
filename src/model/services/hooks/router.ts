/**
 * Edge and transit routers (seed §2.11, §2.12): the cross-kind unique name, null `cost`/`noTraversal`, the
 * router's enrollment created with it, and for tunneler-enabled edge routers their identity and system policy.
 */
import { routerNameTaken, type RouterTable } from '../../../store/routers.js';
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import { policyTargetHooks } from '../../policy/target-hooks.js';
import type { Input, ResourceHooks, Row } from '../../resource.js';
import { checkRoleAttributes } from '../../schemas.js';
import { removeTunnelerRecords, syncTunnelerRecords } from '../router/edge-router-system.js';
import { attachRouterEnrollments, createRouterEnrollment } from '../enrollment/router-enrollment.js';

/**
 * Null `cost` / `noTraversal` mean the default (the reference maps a missing pointer to 0 / false), and a
 * router name is unique across edge and transit routers, which live in two tables.
 */
async function prepareRouter(ctx: Ctx, input: Input, otherTable: RouterTable): Promise<Input> {
  const out = { ...input };
  if (out.cost === null) out.cost = 0;
  if (out.noTraversal === null) out.noTraversal = false;
  if (typeof out.name === 'string') {
    if (await routerNameTaken(ctx.db, otherTable, out.name)) throw fieldError('name', 'name must be unique', out.name);
  }
  return out;
}

/**
 * Connection state and enrollment fields. No router connects to this controller yet, so routers are
 * offline; enrollment token and JWT come from the router's outstanding enrollment (set by
 * `attachRouterEnrollments`, services/enrollment/router-enrollment.ts), null once it has enrolled.
 */
function decorateRouter(r: Row): void {
  r.isOnline ??= false;
  // Required by the current spec; edgectl has no router disabling.
  r.disabled ??= false;
  r.enrollmentToken ??= null;
  r.enrollmentJwt ??= null;
  r.enrollmentCreatedAt ??= null;
  r.enrollmentExpiresAt ??= null;
}

const targetHooks = policyTargetHooks('edgeRouter');

export const edgeRouterHooks: ResourceHooks = {
  async prepare(ctx, input) {
    const out = await prepareRouter(ctx, input, 'transit_routers');
    if (out.roleAttributes === null) out.roleAttributes = [];
    if (out.roleAttributes !== undefined) checkRoleAttributes('roleAttributes', out.roleAttributes);
    if (out.appData === null) out.appData = {};
    return out;
  },
  async afterWrite(ctx, id, mode, input, existing) {
    await syncTunnelerRecords(ctx, id, input, existing);
    // A new router gets its erott enrollment in the same transaction (§7.2).
    if (mode === 'create') await createRouterEnrollment(ctx, 'edge', id);
  },
  async beforeDelete(ctx, row) {
    await removeTunnelerRecords(ctx, String(row.id));
    await targetHooks.beforeDelete(ctx, row);
  },
  async decorate(ctx, rows) {
    await attachRouterEnrollments(ctx, rows, 'edge');
    for (const r of rows) {
      decorateRouter(r);
      r.hostname ??= '';
      r.supportedProtocols ??= {};
      r.syncStatus ??= 'SYNC_UNKNOWN';
    }
  },
};

/** Transit routers, served at both `/transit-routers` and `/routers`. */
export const transitRouterHooks: ResourceHooks = {
  prepare: (ctx, input) => prepareRouter(ctx, input, 'edge_routers'),
  // A new router gets its trott enrollment in the same transaction (§7.2).
  async afterWrite(ctx, id, mode) {
    if (mode === 'create') await createRouterEnrollment(ctx, 'transit', id);
  },
  async decorate(ctx, rows) {
    await attachRouterEnrollments(ctx, rows, 'transit');
    for (const r of rows) {
      decorateRouter(r);
      // Required (not nullable) in routerDetail: empty until the router enrolls.
      r.fingerprint ??= '';
    }
  },
};
