/**
 * What edge routers and transit routers share (seed §2.11, §2.12): the props. Their shared behaviour (null
 * `cost`/`noTraversal`, the cross-kind unique name, connection and enrollment fields) is services/hooks/router.ts.
 */
import { Type } from '../schema-type.js';
import type { PropDef } from '../resource.js';
import { CostSchema, NameSchema } from '../schemas.js';

export const routerProps = {
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
} satisfies Record<string, PropDef>;
