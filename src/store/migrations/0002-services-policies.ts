/**
 * Config types, configs, services, edge routers, transit routers, posture checks (the fields every type has;
 * migration 0011 adds the rest), the three policy kinds and the policy match tables (docs/policy-engine.md).
 *
 * Edge routers and transit routers are separate tables: every query of the policy engine joins edge routers
 * only, and the generic CRUD needs no per-row kind filter. Router names are unique across both tables; the
 * model checks that (SQLite cannot express a cross-table unique constraint). Router enrollment tokens and
 * JWTs are not columns here: they live in `enrollments` like identity enrollments (migration 0004).
 */
import { sql, type Kysely } from 'kysely';
import { entityTable, keyedOnly, onPostgres, pgTrigger, setTable } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * A materialised policy match: (policyId, entityId), both cascading, keyed by policy and indexed by entity so
 * both directions are range scans. WITHOUT ROWID keeps each row to the two keys.
 */
async function matchTable(db: AnyDb, name: string, policyTable: string, targetTable: string): Promise<void> {
  await keyedOnly(
    db,
    db.schema
      .createTable(name)
      .addColumn('policyId', 'text', (c) => c.notNull().references(`${policyTable}.id`).onDelete('cascade'))
      .addColumn('entityId', 'text', (c) => c.notNull().references(`${targetTable}.id`).onDelete('cascade'))
      .addPrimaryKeyConstraint(`${name}_pk`, ['policyId', 'entityId']),
  ).execute();
  await db.schema.createIndex(`${name}_by_entity`).on(name).columns(['entityId', 'policyId']).execute();
}

/** Columns every router kind has (seed §2.11, §2.12). */
function routerTable(db: AnyDb, name: string) {
  return entityTable(db, name)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('cost', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('noTraversal', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('isVerified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('fingerprint', 'text', (c) => c.unique())
    .addColumn('certPem', 'text')
    .addColumn('unverifiedFingerprint', 'text')
    .addColumn('unverifiedCertPem', 'text');
}

export async function up(db: AnyDb): Promise<void> {
  await entityTable(db, 'config_types')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('schema', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();

  // No cascade: a config type with configs cannot be deleted (409, enforced by the model and by this key).
  await entityTable(db, 'configs')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('configTypeId', 'text', (c) => c.notNull().references('config_types.id'))
    .addColumn('data', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema.createIndex('configs_by_type').on('configs').column('configTypeId').execute();

  await entityTable(db, 'services')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('terminatorStrategy', 'text', (c) => c.notNull().defaultTo('smartrouting'))
    .addColumn('encryptionRequired', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await setTable(db, 'services', 'roleAttributes');
  // The `configs` set of a service: a config in use cannot be deleted (no cascade on `value`).
  await db.schema
    .createTable('services_configs')
    .addColumn('ownerId', 'text', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull().references('configs.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('services_configs_pk', ['ownerId', 'value'])
    .execute();
  await db.schema
    .createIndex('services_configs_by_value')
    .on('services_configs')
    .columns(['value', 'ownerId'])
    .execute();
  // Backstop for the model's check: at most one config of each config type per service.
  if (onPostgres(db))
    await pgTrigger(db, {
      name: 'services_configs_one_per_type',
      table: 'services_configs',
      timing: 'before',
      events: 'insert',
      each: 'row',
      body: `if exists (
          select 1 from services_configs sc join configs c on c.id = sc.value
          where sc."ownerId" = new."ownerId"
            and c."configTypeId" = (select "configTypeId" from configs where id = new.value)
        ) then raise exception 'services_configs: one config per config type'; end if; return new;`,
    });
  else
    await sql`
    create trigger services_configs_one_per_type before insert on services_configs
    when exists (
      select 1 from services_configs sc
      join configs c on c.id = sc.value
      where sc.ownerId = new.ownerId and c.configTypeId = (select configTypeId from configs where id = new.value)
    )
    begin select raise(abort, 'services_configs: one config per config type'); end
  `.execute(db);

  await routerTable(db, 'edge_routers')
    .addColumn('isTunnelerEnabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('appData', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await setTable(db, 'edge_routers', 'roleAttributes');
  await routerTable(db, 'transit_routers').execute();

  // The fields every posture check has; migration 0011 adds the type-specific ones.
  await entityTable(db, 'posture_checks')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('typeId', 'text', (c) => c.notNull())
    .execute();
  await setTable(db, 'posture_checks', 'roleAttributes');

  await entityTable(db, 'service_policies')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('semantic', 'text', (c) => c.notNull().defaultTo('AllOf'))
    .execute();
  for (const p of ['identityRoles', 'serviceRoles', 'postureCheckRoles']) await setTable(db, 'service_policies', p);

  await entityTable(db, 'edge_router_policies')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('semantic', 'text', (c) => c.notNull().defaultTo('AllOf'))
    .execute();
  for (const p of ['identityRoles', 'edgeRouterRoles']) await setTable(db, 'edge_router_policies', p);

  await entityTable(db, 'service_edge_router_policies')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('semantic', 'text', (c) => c.notNull().defaultTo('AllOf'))
    .execute();
  for (const p of ['serviceRoles', 'edgeRouterRoles']) await setTable(db, 'service_edge_router_policies', p);

  // Materialised matches of the small sides. Identities are matched at query time (docs/policy-engine.md).
  await matchTable(db, 'service_policy_services', 'service_policies', 'services');
  await matchTable(db, 'service_policy_posture_checks', 'service_policies', 'posture_checks');
  await matchTable(db, 'edge_router_policy_edge_routers', 'edge_router_policies', 'edge_routers');
  await matchTable(db, 'service_edge_router_policy_services', 'service_edge_router_policies', 'services');
  await matchTable(db, 'service_edge_router_policy_edge_routers', 'service_edge_router_policies', 'edge_routers');
}
