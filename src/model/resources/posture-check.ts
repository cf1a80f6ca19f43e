/**
 * Posture checks (docs/reference-notes.md §9.1): the common fields, a read-only `version` that grows on
 * every update, and the fields of the check's type. Each type's fields, validation and evaluation live in
 * its own module (src/model/posture/types); here they are declared for the request bodies and kept together
 * in the `details` column. A field of another type, or a missing required field of the record's type after
 * merging a patch, is a 400 field error.
 */
import { Type } from '../schema-type.js';
import { fieldError } from '../errors.js';
import { policyTargetHooks } from '../policy/target-hooks.js';
import { ALL_TYPE_FIELDS, POSTURE_CHECK_TYPES, postureCheckType } from '../posture/types/index.js';
import type { Details } from '../posture/types/type.js';
import { validateAgainst } from '../json-schema.js';
import type { Input, PropDef, ResourceDef, Row, WriteMode } from '../resource.js';
import { ROLE_ATTRIBUTES_PROP, NameSchema, checkRoleAttributes } from '../schemas.js';

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
    },
  ]),
);

const TypeIdSchema = Type.Union(POSTURE_CHECK_TYPES.map((t) => Type.Literal(t.id)));

/** The type's fields of a write: refuses another type's fields and missing required ones, then validates. */
function typeDetails(typeId: string, input: Input, mode: WriteMode, existing?: Row): Details {
  const type = postureCheckType(typeId);
  if (!type) throw fieldError('typeId', 'unknown posture check type', typeId);
  const given: Details = {};
  for (const [k, v] of Object.entries(input)) {
    const owner = ALL_TYPE_FIELDS.get(k);
    if (!owner || v === undefined) continue;
    if (owner !== type) throw fieldError(k, `not a field of posture check type ${typeId}`, JSON.stringify(v));
    given[k] = v;
  }
  const details: Details = mode === 'patch' ? { ...((existing?.details as Details) ?? {}), ...given } : given;
  for (const [k, f] of Object.entries(type.fields)) {
    if (details[k] === undefined || details[k] === null) {
      if (f.required) throw fieldError(k, `${k} is required for posture check type ${typeId}`);
      delete details[k];
      continue;
    }
    validateAgainst(f.schema as unknown as Record<string, unknown>, details[k], k);
  }
  type.validate?.(details);
  return details;
}

/** The stored row with its type's fields on top (defaults where the type has them). */
export function withTypeFields(row: Row): Row {
  const type = postureCheckType(row.typeId as string);
  const details = (row.details as Details | null) ?? {};
  for (const [k, f] of Object.entries(type?.fields ?? {})) row[k] = details[k] ?? f.default;
  return row;
}

export const postureChecks: ResourceDef = {
  name: 'posture-checks',
  label: 'posture check',
  table: 'posture_checks',
  schemaName: 'postureCheck',
  props: {
    name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
    typeId: { schema: TypeIdSchema, storage: 'text', create: 'required', filter: true },
    roleAttributes: ROLE_ATTRIBUTES_PROP,
    version: { schema: Type.Integer(), storage: 'int', filter: true },
    details: { schema: Type.Object({}), storage: 'json', hidden: true },
    ...typeFieldProps,
  },
  unique: ['name'],
  roleFilter: true,
  hooks: {
    ...policyTargetHooks('postureCheck'),
    prepare(_ctx, input, mode, existing) {
      checkRoleAttributes('roleAttributes', input.roleAttributes);
      const typeId = (mode === 'create' ? input.typeId : existing?.typeId) as string;
      const details = typeDetails(typeId, input, mode, existing);
      const out: Input = { ...input, details };
      for (const k of ALL_TYPE_FIELDS.keys()) delete out[k];
      if (mode === 'create') out.version = 1;
      else out.version = ((existing?.version as number | undefined) ?? 1) + 1;
      return out;
    },
    decorate(_ctx, rows) {
      for (const r of rows) withTypeFields(r);
    },
  },
  ops: {
    list: 'listPostureChecks',
    create: 'createPostureCheck',
    detail: 'detailPostureCheck',
    update: 'updatePostureCheck',
    patch: 'patchPostureCheck',
    delete: 'deletePostureCheck',
  },
  envelopes: { list: 'listPostureCheckEnvelope', detail: 'detailPostureCheckEnvelope' },
};
