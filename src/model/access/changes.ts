/**
 * The changes the access engine can apply narrowly (docs/policy-engine.md, "What a write invalidates"). The
 * generic CRUD notes one per write of a service, service policy, config, config type or identity, inside the
 * write's transaction, after its hooks ran (so a note carries the state the transaction commits); any other
 * resource's write notes UNEXPLAINED, so a transaction mixing it with these is never narrowed. The store's
 * journal (src/store/access-journal.ts) ties the notes to the marker generations they moved.
 *
 * What each change can affect, which is all a cache may drop or patch for it:
 * - service S: S's rendering; the grants of policy sets selecting S before or after (patched: S in or out,
 *   with its Dial/Bind bits from `policies`); S's service edge router policies; on delete, the identities
 *   holding a service config for S (cascade). Its `@S` entries leave service roles, which selects nothing else.
 * - service policy P: identities P selected before (P in their list) or selects after (`identitySide`);
 *   the grants of every policy set containing P.
 * - config C: the config maps; services listing C; identities holding C as a service config (delete cascade).
 * - config type: the config type names.
 * - identity I: I's own entry (attributes, service configs; on delete its `@I` leave policies).
 */
import { noteAccessChange, UNEXPLAINED } from '../../store/access-journal.js';
import { servicePolicyIdentitySide } from '../../store/access.js';
import { servicePoliciesOfService } from './queries.js';
import type { Ctx } from '../ctx.js';
import type { ResourceDef } from '../resource.js';
import { SERVICE_POLICY } from '../policy/kinds.js';

export type AccessChange =
  | { type: 'service'; id: string; policies: { id: string; type: string }[] }
  | { type: 'servicePolicy'; id: string; identitySide?: { semantic: string; identityRoles: string[] } }
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
    case 'services':
      return { type: 'service', id, policies: deleted ? [] : await servicePoliciesOfService(ctx.db, id) };
    case SERVICE_POLICY.table: {
      const identitySide = deleted ? undefined : await servicePolicyIdentitySide(ctx.db, id);
      return { type: 'servicePolicy', id, ...(identitySide && { identitySide }) };
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
