/**
 * The access engine's queries (docs/policy-engine.md, "Answering access per request"). Each is an index
 * walk over the stored representation: the policies selecting an entity, and the entities a set of policies
 * selects, both through the role and attribute indexes (policy-match.ts; no match is stored, so the caller
 * names the policy side). None evaluates a policy in JavaScript, and none runs per request once the engine
 * has cached its answer, so the typed query builder is used where it fits; the policy-match sub-selects stay
 * `sql` templates.
 *
 * Functions take the executor and domain values and return domain values (booleans, parsed JSON).
 */
import { sql } from 'kysely';
import type { TypedExecutor } from './executor.js';
import { idList, inIdList } from './id-list.js';
import { matchedBySql, matchingPoliciesSql, type MatchSide } from './policy-match.js';
import { boolFromDb, jsonFromDb } from './values.js';

/** Ids of the policies of a side whose roles select entity `entityId`, sorted (a stable cache key). */
export async function policiesSelectingEntity(db: TypedExecutor, side: MatchSide, entityId: string): Promise<string[]> {
  const { rows } = await sql<{
    policyId: string;
  }>`select x."policyId" from (${matchingPoliciesSql(side, entityId)}) x order by 1`.execute(db);
  return rows.map((r) => r.policyId);
}

export interface ServiceGrant {
  serviceId: string;
  dial: boolean;
  bind: boolean;
}

/**
 * Every service any of the service policies selects, with Dial/Bind folded per service, in id order. `side` is
 * the service policies' service side. Each service is tested against the set's Dial policies and its Bind
 * policies (`matchedBySql`: each rule branch is evaluated once for the whole set, then probed per service), so
 * the cost follows the services and the distinct attributes the set names, not the (policy, service) pairs.
 */
export async function servicesGrantedBy(
  db: TypedExecutor,
  side: MatchSide,
  servicePolicyIds: readonly string[],
): Promise<ServiceGrant[]> {
  if (servicePolicyIds.length === 0) return [];
  const ofType = (type: 'Dial' | 'Bind') =>
    sql`select p.id from ${sql.table(side.policyTable)} p where p.id in (${idList(servicePolicyIds)}) and p.type = ${type}`;
  const { rows } = await sql<{
    serviceId: string;
    dial: number;
    bind: number;
  }>`select x.id as "serviceId", x.dial, x.bind
    from (select t.id, case when ${matchedBySql(side, ofType('Dial'))} then 1 else 0 end as dial,
        case when ${matchedBySql(side, ofType('Bind'))} then 1 else 0 end as bind
      from ${sql.table(side.targetTable)} t) x
    where x.dial = 1 or x.bind = 1
    order by x.id`.execute(db);
  return rows.map((r) => ({ serviceId: r.serviceId, dial: boolFromDb(r.dial), bind: boolFromDb(r.bind) }));
}

/** Entities (edge routers) of a side's target selected by any of the policies. */
export async function entitiesSelectedBy(
  db: TypedExecutor,
  side: MatchSide,
  policyIds: readonly string[],
): Promise<Set<string>> {
  if (policyIds.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`select t.id from ${sql.table(side.targetTable)} t
    where ${matchedBySql(side, idList(policyIds))}`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** An identity's own configs per service: serviceId → configTypeId → configId. */
export async function serviceConfigOverrides(
  db: TypedExecutor,
  identityId: string,
): Promise<Map<string, Map<string, string>>> {
  const rows = await db
    .selectFrom('identity_service_configs')
    .select(['serviceId', 'configTypeId', 'configId'])
    .where('identityId', '=', identityId)
    .execute();
  const out = new Map<string, Map<string, string>>();
  for (const r of rows) {
    let m = out.get(r.serviceId);
    if (!m) out.set(r.serviceId, (m = new Map()));
    m.set(r.configTypeId, r.configId);
  }
  return out;
}

export interface GrantingPolicy {
  id: string;
  name: string;
  type: string;
}

/**
 * Service policies (of one type, if given) among `identityPolicyIds` that also select the service, by id.
 * `side` is the service policies' service side.
 */
export async function policiesGranting(
  db: TypedExecutor,
  side: MatchSide,
  identityPolicyIds: readonly string[],
  serviceId: string,
  type?: 'Dial' | 'Bind',
): Promise<GrantingPolicy[]> {
  if (identityPolicyIds.length === 0) return [];
  return db
    .selectFrom('service_policies as p')
    .select(['p.id', 'p.name', 'p.type'])
    .where('p.id', 'in', identityPolicyIds)
    .where(sql.ref('p.id'), 'in', sql`(select x."policyId" from (${matchingPoliciesSql(side, serviceId)}) x)`)
    .$if(type !== undefined, (q) => q.where('p.type', '=', type!))
    .orderBy('p.id')
    .execute();
}

export interface StoredConfig {
  id: string;
  name: string;
  typeId: string;
  data: unknown;
}

/** Every config with its parsed data (the service catalog's configs). */
export async function allConfigs(db: TypedExecutor): Promise<StoredConfig[]> {
  const rows = await db.selectFrom('configs').select(['id', 'name', 'configTypeId', 'data']).execute();
  return rows.map((c) => ({ id: c.id, name: c.name, typeId: c.configTypeId, data: jsonFromDb(c.data) }));
}

/** Every config type's id and name. */
export function allConfigTypeNames(db: TypedExecutor): Promise<{ id: string; name: string }[]> {
  return db.selectFrom('config_types').select(['id', 'name']).execute();
}

export interface ApiSessionAccess {
  /** Config types given at authenticate (ids, or `all`). */
  configTypes: string[];
  createdAt: string;
}

/** What access answers need of an API session; undefined when it no longer exists. */
export async function apiSessionAccess(db: TypedExecutor, apiSessionId: string): Promise<ApiSessionAccess | undefined> {
  const row = await db
    .selectFrom('api_sessions')
    .select(['configTypes', 'createdAt'])
    .where('id', '=', apiSessionId)
    .executeTakeFirst();
  return row ? { configTypes: jsonFromDb<string[]>(row.configTypes), createdAt: row.createdAt } : undefined;
}

/** The id of the identity with this id, else with this name (`asIdentity`); undefined when neither. */
export async function identityIdByIdOrName(db: TypedExecutor, idOrName: string): Promise<string | undefined> {
  const byId = await db.selectFrom('identities').select('id').where('id', '=', idOrName).executeTakeFirst();
  if (byId) return byId.id;
  return (await db.selectFrom('identities').select('id').where('name', '=', idOrName).executeTakeFirst())?.id;
}

/** Config types named by id or by name among `wanted` (any number of entries: the list travels as one JSON value). */
export function configTypesByIdOrName(
  db: TypedExecutor,
  wanted: readonly string[],
): Promise<{ id: string; name: string }[]> {
  if (wanted.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('config_types')
    .select(['id', 'name'])
    .where((eb) => eb.or([inIdList(sql.ref('id'), wanted), inIdList(sql.ref('name'), wanted)]))
    .execute();
}

/**
 * The service policies selecting a service, with their type; for narrow invalidation. `side` is the service
 * policies' service side.
 */
export function servicePoliciesSelectingService(
  db: TypedExecutor,
  side: MatchSide,
  serviceId: string,
): Promise<{ id: string; type: string }[]> {
  return db
    .selectFrom('service_policies as p')
    .select(['p.id', 'p.type'])
    .where(sql.ref('p.id'), 'in', sql`(select x."policyId" from (${matchingPoliciesSql(side, serviceId)}) x)`)
    .execute();
}

/** A service policy's identity side (semantic and identity roles); undefined when it does not exist. */
export async function servicePolicyIdentitySide(
  db: TypedExecutor,
  policyId: string,
): Promise<{ semantic: string; identityRoles: string[] } | undefined> {
  const p = await db.selectFrom('service_policies').select('semantic').where('id', '=', policyId).executeTakeFirst();
  if (!p) return undefined;
  const roles = await db
    .selectFrom('service_policies_identityRoles')
    .select('value')
    .where('ownerId', '=', policyId)
    .execute();
  return { semantic: p.semantic, identityRoles: roles.map((r) => r.value) };
}

/** An identity's role attributes. */
export async function identityRoleAttributes(db: TypedExecutor, identityId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('identities_roleAttributes')
    .select('value')
    .where('ownerId', '=', identityId)
    .execute();
  return rows.map((r) => r.value);
}

/** A target entity (service) and its role attributes. */
export interface EntityAttributes {
  id: string;
  attributes: string[];
}

/**
 * Entities of a side's target with their role attributes, in id order: every one, or those among `ids` that
 * exist. Two index walks (the target's rows, its attribute table), grouped here.
 */
export async function entityAttributes(
  db: TypedExecutor,
  side: MatchSide,
  ids?: readonly string[],
): Promise<EntityAttributes[]> {
  const only = (col: string) => (ids ? sql`where ${inIdList(sql.ref(col), ids)}` : sql``);
  const { rows: entities } = await sql<{ id: string }>`select t.id from ${sql.table(side.targetTable)} t
    ${only('t.id')} order by t.id`.execute(db);
  const { rows: attrs } = await sql<{ ownerId: string; value: string }>`select a."ownerId", a."value"
    from ${sql.table(side.attrTable)} a ${only('a.ownerId')}`.execute(db);
  const byId = new Map<string, string[]>();
  const out = entities.map((e) => {
    const attributes: string[] = [];
    byId.set(e.id, attributes);
    return { id: e.id, attributes };
  });
  for (const a of attrs) byId.get(a.ownerId)?.push(a.value);
  return out;
}

/** A policy's type (service policies; '' for other kinds), semantic and the role list of one side. */
export interface PolicyRoles {
  id: string;
  type: string;
  semantic: string;
  roles: string[];
}

/** Policies of a side with their role list on that side: every one, or those among `ids` that exist. */
export async function policyRoles(
  db: TypedExecutor,
  side: MatchSide,
  withType: boolean,
  ids?: readonly string[],
): Promise<PolicyRoles[]> {
  const only = (col: string) => (ids ? sql`where ${inIdList(sql.ref(col), ids)}` : sql``);
  const type = withType ? sql.ref('p.type') : sql.lit('');
  const { rows: policies } = await sql<{ id: string; type: string; semantic: string }>`select p.id,
    ${type} as type, p.semantic from ${sql.table(side.policyTable)} p ${only('p.id')} order by p.id`.execute(db);
  const { rows: roles } = await sql<{ ownerId: string; value: string }>`select r."ownerId", r."value"
    from ${sql.table(side.rolesTable)} r ${only('r.ownerId')}`.execute(db);
  const byId = new Map<string, string[]>();
  const out = policies.map((p) => {
    const entry = { id: p.id, type: p.type, semantic: p.semantic, roles: [] as string[] };
    byId.set(p.id, entry.roles);
    return entry;
  });
  for (const r of roles) byId.get(r.ownerId)?.push(r.value);
  return out;
}
