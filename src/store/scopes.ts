/**
 * Scopes: predicates on the rows of a listing (aliased `t`) that the generic list query ANDs with the
 * caller's filter, so paging, filtering and sorting behave as on every other list. The model composes them
 * from domain values (ids, policy sides) and hands them on without looking inside: only this module and
 * the other store modules write their SQL.
 *
 * Policy scopes answer the three questions of the affected-entity listings (docs/policy-engine.md): the
 * entities a policy selects, the policies that select an entity, and (composing both) the entities
 * reachable from an entity through a policy kind. Every side is answered through the role and attribute
 * indexes (policy-match.ts): no match is stored.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { inIdList } from './id-list.js';
import { matchedBySql, matchingPoliciesSql, type MatchSide } from './policy-match.js';
import { boolToDb } from './values.js';

/** A predicate on the listed rows (aliased `t`). */
export type Scope = RawBuilder<SqlBool>;

/** A set of policy ids inside SQL: one id, or a sub-select. */
export type PolicyIdSource = RawBuilder<unknown>;

const T_ID = sql.ref('t.id');

/** Every row. */
export const everything: Scope = sql<SqlBool>`1 = 1`;

/** Rows passing every given scope (absent ones ignored); undefined when none is given. */
export function allOf(first: Scope, ...rest: (Scope | undefined)[]): Scope;
export function allOf(...scopes: (Scope | undefined)[]): Scope | undefined;
export function allOf(...scopes: (Scope | undefined)[]): Scope | undefined {
  const given = scopes.filter((s): s is Scope => s !== undefined);
  if (given.length <= 1) return given[0];
  return sql<SqlBool>`(${sql.join(
    given.map((s) => sql`(${s})`),
    sql` and `,
  )})`;
}

/** Rows whose id is one of `ids` (any number of them: one parameter, see id-list.ts). */
export const idIn = (ids: readonly string[]): Scope => inIdList(T_ID, ids);

/** One policy, as a policy id source. */
export const onePolicy = (policyId: string): PolicyIdSource => sql`${policyId}`;

/** Entities selected by any of the policies (their side's target rows). */
export function selectedByPolicies(side: MatchSide, policyIds: PolicyIdSource): Scope {
  return matchedBySql(side, policyIds);
}

/** The policies of a side that select entity `entityId`, as a policy id source. */
export function policiesSelecting(side: MatchSide, entityId: string): PolicyIdSource {
  return sql`select x."policyId" from (${matchingPoliciesSql(side, entityId)}) x`;
}

/** Policies (the listed rows) among `policyIds`. */
export const policyIn = (policyIds: PolicyIdSource): Scope => sql<SqlBool>`${T_ID} in (${policyIds})`;

/** Configs of one service (`/services/{id}/configs`). */
export const configsOfService = (serviceId: string): Scope =>
  sql<SqlBool>`${T_ID} in (select sc."value" from services_configs sc where sc."ownerId" = ${serviceId})`;

/** Services using one config (`/configs/{id}/services`). */
export const servicesOfConfig = (configId: string): Scope =>
  sql<SqlBool>`${T_ID} in (select sc."ownerId" from services_configs sc where sc."value" = ${configId})`;

/** Configs of one config type (`/config-types/{id}/configs`). */
export const configsOfType = (configTypeId: string): Scope =>
  sql<SqlBool>`${sql.ref('t.configTypeId')} = ${configTypeId}`;

/** Terminators of one service. */
export const terminatorsOfService = (serviceId: string): Scope =>
  sql<SqlBool>`${sql.ref('t.serviceId')} = ${serviceId}`;

/** Authenticators of one identity. */
export const authenticatorsOfIdentity = (identityId: string): Scope =>
  sql<SqlBool>`${sql.ref('t.identityId')} = ${identityId}`;

/** Enrollments of one identity. */
export const enrollmentsOfIdentity = (identityId: string): Scope =>
  sql<SqlBool>`${sql.ref('t.identityId')} = ${identityId}`;

/** Sessions of one identity (a client's own). */
export const sessionsOfIdentity = (identityId: string): Scope =>
  sql<SqlBool>`${sql.ref('t.identityId')} = ${identityId}`;

/** Certificates of one API session still valid at `now` (ISO); with `id`, only that one. */
export function validCertsOfApiSession(apiSessionId: string, now: string, id?: string): Scope {
  const valid = sql<SqlBool>`${sql.ref('t.apiSessionId')} = ${apiSessionId} and ${sql.ref('t.validTo')} > ${now}`;
  return id === undefined ? valid : sql<SqlBool>`${valid} and ${T_ID} = ${id}`;
}

/** Verified edge routers. */
export const verifiedRouters: Scope = sql<SqlBool>`${sql.ref('t.isVerified')} = ${sql.lit(boolToDb(true))}`;
