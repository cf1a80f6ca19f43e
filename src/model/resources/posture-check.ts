/**
 * Posture checks, as far as policies need them: the table, names for `postureCheckRolesDisplay`, role
 * attributes for matching, and rendering for `/service-policies/{id}/posture-checks`. No operations are
 * served yet; the posture-check slice adds the type-specific fields, the CRUD operations and the checks
 * themselves on top of this definition (its hooks already keep policy matches current).
 */
import { Type } from '@sinclair/typebox';
import { policyTargetHooks } from '../policy/target-hooks.js';
import type { ResourceDef } from '../resource.js';
import { ROLE_ATTRIBUTES_PROP, NameSchema } from '../schemas.js';

export const postureChecks: ResourceDef = {
  name: 'posture-checks',
  label: 'posture check',
  table: 'posture_checks',
  schemaName: 'postureCheck',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    typeId: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    roleAttributes: ROLE_ATTRIBUTES_PROP,
  },
  unique: ['name'],
  roleFilter: true,
  hooks: { ...policyTargetHooks('postureCheck') },
  ops: {},
  envelopes: { list: 'listPostureCheckEnvelope', detail: 'detailPostureCheckEnvelope' },
};
