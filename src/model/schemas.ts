/** JSON Schemas shared by several resource definitions (parity: docs/reference-notes.md §12 "Shared small types"). */
import { Type } from './schema-type.js';
import { fieldError } from './errors.js';
import type { PropDef } from './resource.js';

/**
 * The most entries a client may send in one list (role attributes, roles, config types, ids): enough for any
 * real policy, and far below SQLite's bound-parameter limit. Documented in docs/decisions.md ("Input bounds").
 */
export const MAX_SET_ITEMS = 1000;

/** A client-sent list of strings, bounded by {@link MAX_SET_ITEMS}. */
export const StringListSchema = () => Type.Array(Type.String(), { maxItems: MAX_SET_ITEMS });

export const NameSchema = Type.String({ minLength: 1 });
export const CostSchema = Type.Integer({ minimum: 0, maximum: 65535 });
export const PrecedenceSchema = Type.Union([Type.Literal('default'), Type.Literal('required'), Type.Literal('failed')]);
export const AttributesSchema = StringListSchema();

/** The `roleAttributes` property of services, routers and posture checks: an optional, nullable, filterable set. */
export const ROLE_ATTRIBUTES_PROP = {
  schema: AttributesSchema,
  storage: 'set',
  create: 'optional',
  update: 'optional',
  patch: true,
  nullable: true,
  default: [],
  filter: true,
} satisfies PropDef;
/** A required, filterable `name` with a substring index in the store (migration 0012: identities, services). */
export const SEARCHABLE_NAME_PROP = {
  schema: NameSchema,
  storage: 'text',
  create: 'required',
  update: 'required',
  patch: true,
  filter: true,
  search: true,
} satisfies PropDef;
export const ObjectSchema = Type.Object({}, { additionalProperties: true });
export const SemanticSchema = Type.Union([Type.Literal('AllOf'), Type.Literal('AnyOf')]);
export const UsernameSchema = Type.String({ minLength: 4, maxLength: 100 });
export const PasswordSchema = Type.String({ minLength: 5, maxLength: 100 });

/** Entity role attributes are plain strings: `#` and `@` prefixes belong to policy roles (parity: §2.1). */
export function checkRoleAttributes(field: string, attrs: unknown): void {
  if (!Array.isArray(attrs)) return;
  for (const a of attrs) {
    if (typeof a !== 'string' || a.length === 0)
      throw fieldError(field, 'role attributes must be non-empty strings', a);
    if (a.startsWith('#') || a.startsWith('@'))
      throw fieldError(field, 'role attributes may not be prefixed with # or @', a);
  }
}
