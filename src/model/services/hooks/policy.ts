/**
 * The hooks of the three policy kinds, from their {@link PolicyKind} description: role validation (§2.1) and
 * `…RolesDisplay` (§2.5). A policy write writes only its own rows: nothing it selects is materialised.
 */
import { existingIdsIn, namesByIdIn } from '../../../store/policies.js';
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import { TARGETS, type PolicyKind } from '../../policy/kinds.js';
import { checkRoleSyntax, normaliseSemantic, parseRoles } from '../../policy/roles.js';
import type { Input, ResourceHooks, Row } from '../../resource.js';
import { textList } from '../../row.js';

/** `@id` entries must name existing entities of the side's kind (§2.1; ids only, names are not resolved). */
async function checkRoleTargets(ctx: Ctx, kind: PolicyKind, input: Input): Promise<void> {
  for (const side of kind.sides) {
    const roles = textList(input[side.prop]);
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
      const roles = [...new Set(textList(out[side.prop]) ?? [])];
      checkRoleSyntax(side.prop, roles);
      out[side.prop] = roles;
    }
    await checkRoleTargets(ctx, kind, out);
    return out;
  };
}

/**
 * `…RolesDisplay` (§2.5): `#x` shows as itself, `@id` as `@<current name>`; an `@id` whose entity cannot be
 * read is left out. One name query per target kind for the whole page.
 */
function decorateFor(kind: PolicyKind) {
  return async (ctx: Ctx, rows: Row[]): Promise<void> => {
    for (const side of kind.sides) {
      const ids = [...new Set(rows.flatMap((r) => parseRoles(textList(r[side.prop]) ?? []).ids))];
      const names = await namesByIdIn(ctx.db, TARGETS[side.target].table, ids);
      for (const r of rows) {
        const display: { role: string; name: string }[] = [];
        for (const role of textList(r[side.prop]) ?? []) {
          if (!role.startsWith('@')) display.push({ role, name: role });
          else if (names.has(role.slice(1))) display.push({ role, name: `@${names.get(role.slice(1))}` });
        }
        r[`${side.prop}Display`] = display;
      }
    }
  };
}

/** The hooks of policy kind `kind`. */
export const policyHooks = (kind: PolicyKind): ResourceHooks => ({
  prepare: prepareFor(kind),
  decorate: decorateFor(kind),
});
