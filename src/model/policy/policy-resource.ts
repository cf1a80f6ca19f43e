/**
 * The resource definition of a policy kind, built from its {@link PolicyKind} description: role-list props,
 * semantic, role validation (§2.1), `…RolesDisplay` (§2.5) and match maintenance. The three policy
 * resources only add their own fields and operation names.
 */
import { Type } from '../schema-type.js';
import { existingIdsIn, namesByIdIn } from '../../store/policies.js';
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import type { Input, PropDef, ResourceDef, Row, WriteMode } from '../resource.js';
import { NameSchema, StringListSchema } from '../schemas.js';
import type { FieldDef } from '../filter/fields.js';
import { TARGETS, type PolicyKind } from './kinds.js';
import { rematchPolicyAll } from './matches.js';
import { checkRoleSyntax, normaliseSemantic, parseRoles } from './roles.js';

export const RolesSchema = StringListSchema();

/** Field name under which a materialised side is filterable (`services`, `edgeRouters`, `postureChecks`). */
const MATCH_FIELD: Record<string, string> = {
  service: 'services',
  edgeRouter: 'edgeRouters',
  postureCheck: 'postureChecks',
};

/** `@id` entries must name existing entities of the side's kind (§2.1; ids only, names are not resolved). */
async function checkRoleTargets(ctx: Ctx, kind: PolicyKind, input: Input): Promise<void> {
  for (const side of kind.sides) {
    const roles = input[side.prop] as string[] | undefined;
    if (!roles?.length) continue;
    const { ids } = parseRoles(roles);
    if (ids.length === 0) continue;
    const target = TARGETS[side.target];
    const found = await existingIdsIn(ctx.db, target.table, ids);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0)
      throw fieldError(side.prop, `no ${target.collection} found with the given ids`, missing.join(','));
  }
}

function prepareFor(kind: PolicyKind) {
  return async (ctx: Ctx, input: Input): Promise<Input> => {
    const out = { ...input };
    if (out.semantic !== undefined) {
      const s = normaliseSemantic(out.semantic);
      if (!s) throw fieldError('semantic', 'semantic must be one of AllOf, AnyOf', out.semantic);
      out.semantic = s;
    }
    for (const side of kind.sides) {
      if (out[side.prop] === undefined) continue;
      if (out[side.prop] === null) out[side.prop] = [];
      const roles = [...new Set(out[side.prop] as string[])];
      checkRoleSyntax(side.prop, roles);
      out[side.prop] = roles;
    }
    await checkRoleTargets(ctx, kind, out);
    return out;
  };
}

const sameList = (a: unknown, b: unknown) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

/** Matches change only when the semantic or a role list does; a rename or a tag change rewrites nothing. */
function afterWriteFor(kind: PolicyKind) {
  return async (ctx: Ctx, id: string, mode: WriteMode, input: Input, existing?: Row): Promise<void> => {
    const changed =
      mode === 'create' ||
      (input.semantic !== undefined && input.semantic !== existing?.semantic) ||
      kind.sides.some((s) => input[s.prop] !== undefined && !sameList(input[s.prop], existing?.[s.prop]));
    if (changed) await rematchPolicyAll(ctx, kind, id);
  };
}

/**
 * `…RolesDisplay` (§2.5): `#x` shows as itself, `@id` as `@<current name>`; an `@id` whose entity cannot be
 * read is left out. One name query per target kind for the whole page.
 */
function decorateFor(kind: PolicyKind) {
  return async (ctx: Ctx, rows: Row[]): Promise<void> => {
    for (const side of kind.sides) {
      const ids = [...new Set(rows.flatMap((r) => parseRoles((r[side.prop] as string[]) ?? []).ids))];
      const names = await namesByIdIn(ctx.db, TARGETS[side.target].table, ids);
      for (const r of rows) {
        const display: { role: string; name: string }[] = [];
        for (const role of (r[side.prop] as string[]) ?? []) {
          if (!role.startsWith('@')) display.push({ role, name: role });
          else if (names.has(role.slice(1))) display.push({ role, name: `@${names.get(role.slice(1))}` });
        }
        r[`${side.prop}Display`] = display;
      }
    }
  };
}

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
    if (side.matchTable)
      extraFields[MATCH_FIELD[side.target]!] = {
        kind: 'set',
        table: side.matchTable,
        ownerColumn: 'policyId',
        valueColumn: 'entityId',
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
    hooks: { prepare: prepareFor(kind), afterWrite: afterWriteFor(kind), decorate: decorateFor(kind) },
    ops: spec.ops,
    envelopes: spec.envelopes,
  };
}
