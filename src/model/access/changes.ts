/**
 * The changes the access engine can apply narrowly (docs/policy-engine.md, "What a write invalidates"). The
 * generic CRUD notes one per write of a service, service policy, config, config type or identity, inside the
 * write's transaction, after its hooks ran (so a note carries the state the transaction commits); any other
 * resource's write notes UNEXPLAINED, so a transaction mixing it with these is never narrowed. The store's
 * journal (src/store/access-journal.ts) ties the notes to the marker generations they moved.
 *
 * What each change can affect, which is all a cache may drop or patch for it:
 * - service S: S's rendering; S's attributes in the service index (service-index.ts); the grants of policy sets selecting S before or after (patched: S in or out,
 *   with its Dial/Bind bits from `policies`); S's service edge router policies; on delete, the identities
 *   holding a service config for S (cascade). Its `@S` entries leave service roles, which selects nothing else.
 * - service policy P: identities P selected before (P in their list) or selects after (`identitySide`);
 *   the grants of every policy set containing P; P's service side in the service index.
 * - config C: the config maps; services listing C; identities holding C as a service config (delete cascade).
 * - config type: the config type names.
 * - identity I: I's own entry (attributes, service configs; on delete its `@I` leave policies).
 */
import { noteAccessChange, UNEXPLAINED } from '../../store/access-journal.js';
import { entityAttributes, policyRoles, servicePolicyIdentitySide } from '../../store/access.js';
import { servicePoliciesOfService } from './queries.js';
import type { Ctx } from '../ctx.js';
import type { ResourceDef } from '../resource.js';
import { matchSideOf, SERVICE_POLICY } from '../policy/kinds.js';

const SP_SERVICE = matchSideOf(SERVICE_POLICY, 'service');

export type AccessChange =
  | {
      type: 'service';
      id: string;
      policies: { id: string; type: string }[];
      /** Its role attributes as committed; null once deleted (absent in older notes: not explained). */
      attributes?: string[] | null;
    }
  | {
      type: 'servicePolicy';
      id: string;
      identitySide?: { semantic: string; identityRoles: string[] };
      /** Its service side as committed; null once deleted (absent in older notes: not explained). */
      serviceSide?: { type: string; semantic: string; serviceRoles: string[] } | null;
    }
  | { type: 'config'; id: string }
  | { type: 'configType'; id: string }
  | { type: 'identity'; id: string };

/** Notes what a generic CRUD write of `def`'s entity `id` did, inside its transaction (crud.ts). */
export async function noteEntityWrite(ctx: Ctx, def: ResourceDef, id: string, deleted: boolean): Promise<void> {
  if (!ctx.db.isTransaction) return;
  const note = await changeOf(ctx, def, id, deleted);
  noteAccessChange(ctx.db, note ?? UNEXPLAINED);
}

async function changeOf(ctx: Ctx, def: ResourceDef, id: string, deleted: boolean): Promise<AccessChange | undefined> {
  switch (def.table) {
    case 'services': {
      if (deleted) return { type: 'service', id, policies: [], attributes: null };
      const [service] = await entityAttributes(ctx.db, SP_SERVICE, [id]);
      const policies = await servicePoliciesOfService(ctx.db, id);
      return { type: 'service', id, policies, attributes: service?.attributes ?? null };
    }
    case SERVICE_POLICY.table: {
      if (deleted) return { type: 'servicePolicy', id, serviceSide: null };
      const identitySide = await servicePolicyIdentitySide(ctx.db, id);
      const [p] = await policyRoles(ctx.db, SP_SERVICE, true, [id]);
      const serviceSide = p ? { type: p.type, semantic: p.semantic, serviceRoles: p.roles } : null;
      return { type: 'servicePolicy', id, ...(identitySide && { identitySide }), serviceSide };
    }
    case 'configs':
      return { type: 'config', id };
    case 'config_types':
      return { type: 'configType', id };
    case 'identities':
      return { type: 'identity', id };
    default:
      return undefined;
  }
}
