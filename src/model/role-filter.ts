/** Parsing of the `roleFilter`/`roleSemantic` query parameters into an SQL scope. */
import { roleFilterSql } from '../store/role-filter.js';
import type { Scope } from '../store/scopes.js';
import { fieldError } from './errors.js';
import { MAX_SET_ITEMS } from './schemas.js';
import { setTable, type ResourceDef } from './resource.js';

/**
 * `#attr` entries match role attributes (here `#all` is a literal attribute, parity §2.4), `@id` entries
 * match ids. Anything else is a 400 field error (the reference answers 500 there).
 */
export function roleFilterScope(
  def: ResourceDef,
  roles: readonly string[],
  semantic: string | undefined,
): Scope | undefined {
  if (roles.length === 0) return undefined;
  if (roles.length > MAX_SET_ITEMS) throw fieldError('roleFilter', `at most ${MAX_SET_ITEMS} entries are accepted`);
  const sem = (semantic ?? 'AllOf').toLowerCase();
  if (sem !== 'allof' && sem !== 'anyof')
    throw fieldError('roleSemantic', 'roleSemantic must be AllOf or AnyOf', semantic);
  const attributes: string[] = [];
  const ids: string[] = [];
  for (const r of roles) {
    if (r.startsWith('#') && r.length > 1) attributes.push(r.slice(1));
    else if (r.startsWith('@') && r.length > 1) ids.push(r.slice(1));
    else throw fieldError('roleFilter', 'role entries must be prefixed with # (attribute) or @ (id)', r);
  }
  return roleFilterSql(setTable(def, 'roleAttributes'), attributes, ids, sem === 'anyof' ? 'AnyOf' : 'AllOf');
}
