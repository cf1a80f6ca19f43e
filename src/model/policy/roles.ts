/**
 * Role strings and the matching rule of all three policy kinds, as pure functions (parity:
 * docs/reference-notes.md §2.1, §2.2). The store evaluates the same rule in SQL
 * (`src/store/policy-match.ts`); {@link roleMatches} is the executable statement of the rule that the tests
 * hold the SQL to.
 */
import { fieldError } from '../errors.js';

export type Semantic = 'AllOf' | 'AnyOf';

export const ALL_ROLE = '#all';

export interface ParsedRoles {
  /** `#all` is present (then it is the only entry). */
  all: boolean;
  /** `@id` entries, without the prefix. */
  ids: string[];
  /** `#attr` entries other than `#all`, without the prefix. */
  attributes: string[];
}

export function parseRoles(roles: readonly string[]): ParsedRoles {
  const out: ParsedRoles = { all: false, ids: [], attributes: [] };
  for (const r of roles) {
    if (r === ALL_ROLE) out.all = true;
    else if (r.startsWith('@')) out.ids.push(r.slice(1));
    else if (r.startsWith('#')) out.attributes.push(r.slice(1));
  }
  return out;
}

/**
 * Whether an entity is selected by a role list (§2.2): listed by `@id`, or `#all`, or its attributes satisfy
 * the `#attr` entries (all of them for AllOf, one for AnyOf). `@id` entries are OR-ed in whatever the
 * semantic; an empty list selects nothing.
 */
export function roleMatches(
  roles: readonly string[],
  semantic: Semantic,
  entity: { id: string; roleAttributes: readonly string[] },
): boolean {
  const p = parseRoles(roles);
  if (p.all || p.ids.includes(entity.id)) return true;
  if (p.attributes.length === 0) return false;
  const has = new Set(entity.roleAttributes);
  return semantic === 'AnyOf' ? p.attributes.some((a) => has.has(a)) : p.attributes.every((a) => has.has(a));
}

/** `AllOf` / `AnyOf` in any letter case (the reference compares case-insensitively, §2.2); else undefined. */
export function normaliseSemantic(v: unknown): Semantic | undefined {
  if (typeof v !== 'string') return undefined;
  const l = v.toLowerCase();
  return l === 'allof' ? 'AllOf' : l === 'anyof' ? 'AnyOf' : undefined;
}

/**
 * Syntax of a policy role list (§2.1): every entry `#attr` or `@id` with something after the prefix, and
 * `#all` only on its own. Existence of `@id` targets needs the store and is checked by the caller.
 */
export function checkRoleSyntax(field: string, roles: readonly unknown[]): void {
  for (const r of roles) {
    if (typeof r !== 'string' || r.length < 2 || (r[0] !== '#' && r[0] !== '@')) {
      throw fieldError(field, 'role entries must be prefixed with # (for an attribute) or @ (for an id)', r);
    }
  }
  if (roles.includes(ALL_ROLE) && roles.length > 1) {
    throw fieldError(field, 'if using #all, no other roles are allowed', roles.join(','));
  }
}
