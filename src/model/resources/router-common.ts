/**
 * What edge routers and transit routers share (seed §2.11, §2.12): the props, the null handling of `cost`
 * and `noTraversal`, the cross-kind unique name and the read-only connection and enrollment fields. Both
 * kinds are built from these so nothing is written twice.
 */
import { Type } from '../schema-type.js';
import { routerNameTaken, type RouterTable } from '../../store/routers.js';
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import type { Input, PropDef, Row } from '../resource.js';
import { CostSchema, NameSchema } from '../schemas.js';

export const routerProps: Record<string, PropDef> = {
  name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
  cost: {
    schema: CostSchema,
    storage: 'int',
    create: 'optional',
    update: 'optional',
    patch: true,
    nullable: true,
    default: 0,
    filter: true,
  },
  noTraversal: {
    schema: Type.Boolean(),
    storage: 'bool',
    create: 'optional',
    update: 'optional',
    patch: true,
    nullable: true,
    default: false,
    filter: true,
  },
  isVerified: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
  fingerprint: { schema: Type.String(), storage: 'text', filter: true },
  unverifiedFingerprint: { schema: Type.String(), storage: 'text', renderNull: true },
  unverifiedCertPem: { schema: Type.String(), storage: 'text', renderNull: true },
};

/**
 * Null `cost` / `noTraversal` mean the default (the reference maps a missing pointer to 0 / false), and a
 * router name is unique across edge and transit routers, which live in two tables.
 */
export async function prepareRouter(ctx: Ctx, input: Input, otherTable: RouterTable): Promise<Input> {
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
 * `attachRouterEnrollments`, services/router-enrollment.ts), null once it has enrolled.
 */
export function decorateRouter(r: Row): void {
  r.isOnline ??= false;
  r.enrollmentToken ??= null;
  r.enrollmentJwt ??= null;
  r.enrollmentCreatedAt ??= null;
  r.enrollmentExpiresAt ??= null;
}
