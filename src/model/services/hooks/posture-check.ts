/**
 * Posture checks (docs/reference-notes.md §9.1): a write keeps the fields of the check's type together in
 * `details` (a missing required one after merging a patch is a 400 field error; another type's fields are
 * ignored, as the contract's body is discriminated by `typeId`) and bumps `version`; reads put the type's
 * fields back on top.
 */
import { fieldError } from '../../errors.js';
import { policyTargetHooks } from '../../policy/target-hooks.js';
import { ALL_TYPE_FIELDS, postureCheckType } from '../../posture/types/index.js';
import type { Details } from '../../posture/types/type.js';
import { validateAgainst } from '../../json-schema.js';
import type { Input, ResourceHooks, Row, WriteMode } from '../../resource.js';
import { checkRoleAttributes } from '../../schemas.js';
import { textOf } from '../../row.js';

/** The type's fields of a write (other types' are left out): refuses missing required ones, then validates. */
function typeDetails(typeId: string, input: Input, mode: WriteMode, existing?: Row): Details {
  const type = postureCheckType(typeId);
  if (!type) throw fieldError('typeId', 'unknown posture check type', typeId);
  const given: Details = {};
  for (const [k, v] of Object.entries(input)) if (k in type.fields && v !== undefined) given[k] = v;
  type.normalize?.(given);
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
  const type = postureCheckType(textOf(row, 'typeId'));
  const details = (row.details as Details | null) ?? {};
  for (const [k, f] of Object.entries(type?.fields ?? {})) row[k] = details[k] ?? f.default;
  return row;
}

export const postureCheckHooks: ResourceHooks = {
  ...policyTargetHooks('postureCheck'),
  prepare(_ctx, input, mode, existing) {
    checkRoleAttributes('roleAttributes', input.roleAttributes);
    const typeId = mode === 'create' ? input.typeId : existing?.typeId;
    const details = typeDetails(typeof typeId === 'string' ? typeId : '', input, mode, existing);
    const out: Input = { ...input, details };
    for (const k of ALL_TYPE_FIELDS.keys()) delete out[k];
    if (mode === 'create') out.version = 1;
    else out.version = (typeof existing?.version === 'number' ? existing.version : 1) + 1;
    return out;
  },
  decorate(_ctx, rows) {
    for (const r of rows) withTypeFields(r);
  },
};
