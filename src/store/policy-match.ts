/**
 * The policy matching rule (docs/reference-notes.md §2.2, stated in `src/model/policy/roles.ts`) in SQL,
 * in both directions, over the role-list set tables and the targets' attribute tables:
 *
 * - {@link matchedBySql}: which entities a set of policies selects (a predicate on `<alias>.id`);
 * - {@link matchPairsSql}: the same as (policy, entity) pairs, for answers folded per policy (Dial/Bind);
 * - {@link matchingPoliciesSql}: which policies select one entity (a sub-select of policy ids);
 * - {@link selectsSql}: whether one policy selects one entity (a correlated predicate, for filters).
 *
 * Nothing is materialised: every answer is computed from these indexes when asked (docs/policy-engine.md).
 * All only walk index ranges: role tables by (ownerId, value) and (value, ownerId), attribute tables by
 * (value, ownerId). `#` entries are found by the range ['#', '$') and `@` entries by ['@', 'A'), so no
 * prefix test scans a table. Nothing here evaluates a policy in JavaScript; the one answer the model computes in
 * memory instead (a policy set's grants, src/model/access/service-index.ts) is held to these by its tests.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { dynamic, type Executor } from './db.js';

export interface MatchSide {
  /** Policy table (for the semantic). */
  policyTable: string;
  /** Role-list set table (ownerId = policy id, value = role string). */
  rolesTable: string;
  /** The target's attribute set table (ownerId = entity id, value = attribute). */
  attrTable: string;
  /** The target's own table (the selected entities' rows). */
  targetTable: string;
}

const ATTR_RANGE = (col: RawBuilder<unknown>) => sql<SqlBool>`${col} >= '#' and ${col} < '$'`;
const ID_RANGE = (col: RawBuilder<unknown>) => sql<SqlBool>`${col} >= '@' and ${col} < 'A'`;
/** How many `#` entries the role list of the policy in row `r` holds (an `AllOf` policy needs as many hits). */
const ATTR_ENTRIES = (R: RawBuilder<unknown>): RawBuilder<number> =>
  sql<number>`(select count(*) from ${R} r2 where r2."ownerId" = r."ownerId" and ${ATTR_RANGE(sql.ref('r2.value'))})`;

/**
 * Entities (rows aliased `alias`) selected by at least one policy whose id is in `policyIds` (a value list
 * or a sub-select). Each of the four rule branches is its own sub-select, which SQLite evaluates once.
 *
 * A policy with one `#` entry selects the same entities under either semantic, so it joins the `AnyOf` branch,
 * which looks up each distinct attribute once (a set of hundreds of policies names a few attributes: the
 * entities are read once per attribute, not once per policy naming it). Only `AllOf` policies with several `#`
 * entries are grouped per (policy, entity) and counted.
 */
export function matchedBySql(side: MatchSide, policyIds: RawBuilder<unknown>, alias = 't'): RawBuilder<SqlBool> {
  const R = sql.table(side.rolesTable);
  const P = sql.table(side.policyTable);
  const A = sql.table(side.attrTable);
  const id = sql.ref(`${alias}.id`);
  const rv = sql.ref('r.value');
  const attrEntries = ATTR_ENTRIES(R);
  return sql<SqlBool>`(
    exists (select 1 from ${R} r where r."ownerId" in (${policyIds}) and r."value" = '#all')
    or ${id} in (select substr(r."value", 2) from ${R} r where r."ownerId" in (${policyIds}) and ${ID_RANGE(rv)})
    or ${id} in (select a."ownerId" from ${A} a where a."value" in (
      select substr(r."value", 2) from ${R} r join ${P} p on p.id = r."ownerId"
      where r."ownerId" in (${policyIds}) and ${ATTR_RANGE(rv)} and (p.semantic = 'AnyOf' or ${attrEntries} = 1)))
    or ${id} in (select a."ownerId" from ${R} r join ${P} p on p.id = r."ownerId" join ${A} a on a."value" = substr(r."value", 2)
      where r."ownerId" in (${policyIds}) and ${ATTR_RANGE(rv)} and p.semantic = 'AllOf' and ${attrEntries} > 1
      group by r."ownerId", a."ownerId"
      having count(*) = ${attrEntries})
  )`;
}

/**
 * The (policyId, entityId) pairs of the policies in `policyIds` and the entities each selects: the four rule
 * branches of {@link matchedBySql}, each kept per policy. A pair can come out more than once (an `AnyOf` policy
 * naming two attributes the entity has, or also `@` naming it): callers group or keep distinct pairs.
 */
export function matchPairsSql(
  side: MatchSide,
  policyIds: RawBuilder<unknown>,
): RawBuilder<{ policyId: string; entityId: string }> {
  const R = sql.table(side.rolesTable);
  const P = sql.table(side.policyTable);
  const A = sql.table(side.attrTable);
  const T = sql.table(side.targetTable);
  const rv = sql.ref('r.value');
  const attrPairs = (semantic: 'AllOf' | 'AnyOf') =>
    sql`select r."ownerId" as "policyId", a."ownerId" as "entityId"
      from ${R} r join ${P} p on p.id = r."ownerId" join ${A} a on a."value" = substr(r."value", 2)
      where r."ownerId" in (${policyIds}) and ${ATTR_RANGE(rv)} and p.semantic = ${semantic}`;
  return sql<{ policyId: string; entityId: string }>`
    select r."ownerId" as "policyId", t.id as "entityId" from ${R} r cross join ${T} t
      where r."ownerId" in (${policyIds}) and r."value" = '#all'
    union all select r."ownerId", t.id from ${R} r join ${T} t on t.id = substr(r."value", 2)
      where r."ownerId" in (${policyIds}) and ${ID_RANGE(rv)}
    union all ${attrPairs('AnyOf')}
    union all ${attrPairs('AllOf')}
      group by r."ownerId", a."ownerId"
      having count(*) = ${ATTR_ENTRIES(R)}`;
}

/**
 * Whether the policy `policy` selects the entity `entity` (two column references of the enclosing query): the
 * rule's branches for one pair, each a few lookups in the role table's `(ownerId, value)` key and the
 * attribute table's `(ownerId, value)` key, so a filter over a policy's selected entities costs per candidate
 * pair what the pair's role list holds, not what the policy selects.
 */
export function selectsSql(
  side: MatchSide,
  policy: RawBuilder<unknown>,
  entity: RawBuilder<unknown>,
): RawBuilder<SqlBool> {
  // Aliases of their own: `policy` and `entity` name the enclosing query's rows, which a `p` or `r` here would hide.
  const R = sql.table(side.rolesTable);
  const P = sql.table(side.policyTable);
  const A = sql.table(side.attrTable);
  const rv = sql.ref('sel_r.value');
  const semantic = sql`(select sel_p.semantic from ${P} sel_p where sel_p.id = ${policy})`;
  return sql<SqlBool>`(
    exists (select 1 from ${R} sel_r where sel_r."ownerId" = ${policy} and sel_r."value" = '#all')
    or exists (select 1 from ${R} sel_r where sel_r."ownerId" = ${policy} and sel_r."value" = '@' || ${entity})
    or (${semantic} = 'AnyOf' and exists (select 1 from ${R} sel_r
      join ${A} sel_a on sel_a."ownerId" = ${entity} and sel_a."value" = substr(sel_r."value", 2)
      where sel_r."ownerId" = ${policy} and ${ATTR_RANGE(rv)}))
    or (${semantic} = 'AllOf' and exists (select 1 from ${R} sel_r where sel_r."ownerId" = ${policy} and ${ATTR_RANGE(rv)})
      and not exists (select 1 from ${R} sel_r where sel_r."ownerId" = ${policy} and ${ATTR_RANGE(rv)}
        and not exists (select 1 from ${A} sel_a where sel_a."ownerId" = ${entity} and sel_a."value" = substr(sel_r."value", 2))))
  )`;
}

/**
 * The ids (column `policyId`) of the policies whose role list selects entity `entityId`: the entity's keys
 * (`#attr` for each attribute, `#all`, `@id`) are looked up in the role table's value index, then grouped
 * per policy; AllOf needs as many attribute hits as the policy has `#` entries.
 */
export function matchingPoliciesSql(side: MatchSide, entityId: string): RawBuilder<{ policyId: string }> {
  const R = sql.table(side.rolesTable);
  const P = sql.table(side.policyTable);
  const A = sql.table(side.attrTable);
  const atId = `@${entityId}`;
  return sql<{ policyId: string }>`select r."ownerId" as "policyId" from (
      select '#' || a."value" as k from ${A} a where a."ownerId" = ${entityId}
      union all select '#all'
      union all select ${atId}
    ) keys
    join ${R} r on r."value" = keys.k
    join ${P} p on p.id = r."ownerId"
    group by r."ownerId"
    having max(case when r."value" = '#all' or r."value" = ${atId} then 1 else 0 end) = 1
      or min(p.semantic) = 'AnyOf'
      or count(*) = ${ATTR_ENTRIES(R)}`;
}

/** Removes one role entry (e.g. `@<id>` of a deleted entity) from every policy of a role-list table. */
export async function removeRoleEntry(db: Executor, rolesTable: string, value: string): Promise<void> {
  await dynamic(db).deleteFrom(rolesTable).where('value', '=', value).execute();
}
