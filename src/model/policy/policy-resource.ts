/**
 * The resource definition of a policy kind, built from its {@link PolicyKind} description: role-list props,
 * semantic and the filterable selected sets. Role validation (§2.1) and `…RolesDisplay` (§2.5) are
 * services/hooks/policy.ts. The three policy resources only add their own fields and operation names.
 */
import { Type } from '../schema-type.js';
import type { PropDef, ResourceDef } from '../resource.js';
import { NameSchema, StringListSchema } from '../schemas.js';
import type { FieldDef } from '../filter/fields.js';
import { matchSide, TARGETS, type PolicyKind } from './kinds.js';

export const RolesSchema = StringListSchema();

/**
 * Field name under which what a side selects is filterable (`services`, `edgeRouters`, `postureChecks`), e.g.
 * `anyOf(services) = "<id>"`: each candidate (policy, entity) pair is tested by the rule, nothing is stored.
 * The identity side has none: such a filter would test every identity of the store.
 */
const MATCH_FIELD: Record<string, string> = {
  service: 'services',
  edgeRouter: 'edgeRouters',
  postureCheck: 'postureChecks',
};

export interface PolicyResourceSpec {
  kind: PolicyKind;
  label: string;
  schemaName: string;
  /** Fields of this kind besides name, semantic and the role lists (e.g. a service policy's `type`). */
  props?: Record<string, PropDef>;
  ops: ResourceDef['ops'];
  envelopes: ResourceDef['envelopes'];
  /** Render `isSystem` (edge router policies, §2.7). */
  showSystem?: boolean;
}

export function policyResource(spec: PolicyResourceSpec): ResourceDef {
  const { kind } = spec;
  const roleProps: Record<string, PropDef> = {};
  const extraFields: Record<string, FieldDef> = {};
  for (const side of kind.sides) {
    roleProps[side.prop] = {
      schema: RolesSchema,
      storage: 'set',
      create: 'optional',
      update: 'optional',
      patch: true,
      nullable: true,
      default: [],
      filter: true,
    };
    const field = MATCH_FIELD[side.target];
    if (field)
      extraFields[field] = {
        kind: 'set',
        table: TARGETS[side.target].table,
        ownerColumn: 'id',
        valueColumn: 'id',
        selects: matchSide(kind, side),
      };
  }
  return {
    name: kind.collection,
    label: spec.label,
    table: kind.table,
    schemaName: spec.schemaName,
    props: {
      name: { schema: NameSchema, storage: 'text', create: 'required', update: 'required', patch: true, filter: true },
      // parity: required on create and update as in the reference's schemas; any letter case accepted (§2.2).
      semantic: {
        schema: Type.String(),
        storage: 'text',
        create: 'required',
        update: 'required',
        patch: true,
        default: 'AllOf',
        filter: true,
      },
      ...spec.props,
      ...roleProps,
    },
    unique: ['name'],
    extraFields,
    showSystem: spec.showSystem,
    links: (id) =>
      Object.fromEntries(
        kind.sides.map((s) => [
          TARGETS[s.target].collection,
          `./${kind.collection}/${id}/${TARGETS[s.target].collection}`,
        ]),
      ),
    ops: spec.ops,
    envelopes: spec.envelopes,
  };
}
