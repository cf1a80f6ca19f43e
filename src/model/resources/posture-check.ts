/**
 * Posture checks (docs/reference-notes.md §9.1): the common fields, a read-only `version` that grows on
 * every update, and the fields of the check's type. Each type's fields, validation and evaluation live in
 * its own module (src/model/posture/types); here they are declared for the request bodies and kept together
 * in the `details` column. Bodies are discriminated by `typeId`: the fields of the record's type are checked
 * (a missing required one after merging a patch is a 400 field error), other types' fields are ignored and
 * not stored (the reference's console sends every type's fields, the unused ones empty).
 */
import { Type } from '../schema-type.js';
import { ALL_TYPE_FIELDS, POSTURE_CHECK_TYPES } from '../posture/types/index.js';
import { defineResource } from '../resource-record.js';
import type { PropDef } from '../resource.js';
import { ROLE_ATTRIBUTES_PROP, NameSchema } from '../schemas.js';

/** Every type's own fields, accepted in bodies (virtual: prepare moves them into `details`). */
const typeFieldProps: Record<string, PropDef> = Object.fromEntries(
  [...ALL_TYPE_FIELDS].map(([name, t]) => [
    name,
    {
      schema: t.fields[name]!.schema,
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      virtual: true,
      variant: true,
    },
  ]),
);

const TypeIdSchema = Type.Union(POSTURE_CHECK_TYPES.map((t) => Type.Literal(t.id)));

export const postureChecks = defineResource({
  name: 'posture-checks',
  label: 'posture check',
  table: 'posture_checks',
  schemaName: 'postureCheck',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    typeId: { schema: TypeIdSchema, storage: 'text', create: 'required', filter: true },
    roleAttributes: ROLE_ATTRIBUTES_PROP,
    version: { schema: Type.Integer(), storage: 'int', filter: true },
    details: { schema: Type.Object({}), storage: 'json', hidden: true, audited: true },
    ...typeFieldProps,
  },
  unique: ['name'],
  roleFilter: true,
  ops: {
    list: 'listPostureChecks',
    create: 'createPostureCheck',
    detail: 'detailPostureCheck',
    update: 'updatePostureCheck',
    patch: 'patchPostureCheck',
    delete: 'deletePostureCheck',
  },
  envelopes: { list: 'listPostureCheckEnvelope', detail: 'detailPostureCheckEnvelope' },
});
