/**
 * The access engine's tables (docs/policy-engine.md, "Answering access per request"):
 *
 * - `access_markers`: one row per kind of access-relevant data (and one for session removals), with a
 *   generation counter and the time of the last change. Triggers on every table that feeds that kind bump it in the writing statement, so the
 *   marker commits or rolls back with the change itself, whatever code path wrote it (generic CRUD, system
 *   records, foreign-key cascades, the offline CLI). The in-process caches of the access engine are keyed
 *   on these generations; `service-updates` reads the times.
 * - `identity_service_configs`: an identity's own config for a service, at most one per config type
 *   (the type is copied from the config, which cannot change type). Goes with the identity, the service
 *   or the config.
 * - `sessions`: service sessions, one per (API session, service, type) (the create is idempotent); they go
 *   with their API session, identity or service by cascade.
 * - `terminators`: where a service is hosted (Management CRUD; hosting routers do not connect yet). They go
 *   with their service by cascade and with their router (edge or transit: two tables) by trigger.
 */
import { sql, type Kysely } from 'kysely';
import { entityTable, keyedOnly, onPostgres, pgTrigger, PG_NOW } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** The kinds of access-relevant data, each with its own generation (see `src/model/access/markers.ts`). */
export const MARKERS = ['catalog', 'serviceAccess', 'identity', 'router', 'sessions'] as const;

type Event = 'insert' | 'delete' | 'update' | `update of ${string}`;

/** Which tables' writes bump one marker, with the events that do. */
export type Feeds = Partial<Record<(typeof MARKERS)[number], [table: string, events: Event[]][]>>;

/** Which writes bump which marker. Set tables are listed with their owner: a PUT rewrites them. */
const FEEDS: Feeds = {
  // What a service record shows: its fields, attributes, configs, config data and config type names.
  catalog: [
    ['services', ['insert', 'delete', 'update']],
    ['services_roleAttributes', ['insert', 'delete']],
    ['services_configs', ['insert', 'delete']],
    // Inserts too: a new config can become an identity's service-config override without touching services.
    ['configs', ['insert', 'delete', 'update of name, data, configTypeId']],
    ['config_types', ['insert', 'delete', 'update of name']],
  ],
  // Which services a set of service policies grants, and which policies select an identity.
  serviceAccess: [
    ['service_policies', ['insert', 'delete', 'update of type, semantic']],
    ['service_policies_identityRoles', ['insert', 'delete']],
    ['service_policies_serviceRoles', ['insert', 'delete']],
    ['service_policies_postureCheckRoles', ['insert', 'delete']],
    ['service_policy_services', ['insert', 'delete']],
    ['service_policy_posture_checks', ['insert', 'delete']],
    ['posture_checks', ['insert', 'delete', 'update']],
  ],
  // One identity's own inputs: its attributes (hence the policies selecting it) and its service configs.
  identity: [
    ['identities', ['delete']],
    ['identities_roleAttributes', ['insert', 'delete']],
    ['identity_service_configs', ['insert', 'delete', 'update']],
  ],
  // Edge routers and the two router policy kinds (session routers, current-identity edge routers).
  router: [
    ['edge_routers', ['insert', 'delete', 'update']],
    ['edge_router_policies', ['insert', 'delete', 'update of semantic']],
    ['edge_router_policies_identityRoles', ['insert', 'delete']],
    ['edge_router_policies_edgeRouterRoles', ['insert', 'delete']],
    ['edge_router_policy_edge_routers', ['insert', 'delete']],
    ['service_edge_router_policies', ['insert', 'delete', 'update of semantic']],
    ['service_edge_router_policies_serviceRoles', ['insert', 'delete']],
    ['service_edge_router_policies_edgeRouterRoles', ['insert', 'delete']],
    ['service_edge_router_policy_services', ['insert', 'delete']],
    ['service_edge_router_policy_edge_routers', ['insert', 'delete']],
  ],
  // Sessions going away (delete, or with their API session, identity or service): the session lookup of
  // `POST /sessions` is cached, and a new session is simply added to that cache.
  sessions: [['sessions', ['delete', 'update']]],
};

/** Same text format as every other timestamp of the store (ISO-8601 UTC with milliseconds). */
const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

/**
 * The name and statement of every marker trigger, and of the two triggers that take a router's terminators
 * with it (what a foreign key would do if routers were one table). The data-integrity scan finds a missing or
 * altered one by running this migration in an empty database (src/store/schema-objects.ts).
 */
function triggerStatements(): { name: string; sql: string }[] {
  return [...markerTriggerStatements(FEEDS), ...routerTriggerStatements()];
}

/** Creates the marker triggers of `feeds` (a later migration adding feeds uses the same statements). */
export async function addMarkerTriggers(db: AnyDb, feeds: Feeds): Promise<void> {
  if (onPostgres(db)) await postgresMarkerTriggers(db, feeds);
  else for (const t of markerTriggerStatements(feeds)) await sql.raw(t.sql).execute(db);
}

/** SQLite's marker triggers: one per (marker, table, event), once per row. */
function markerTriggerStatements(feeds: Feeds): { name: string; sql: string }[] {
  const out: { name: string; sql: string }[] = [];
  for (const [marker, tables] of Object.entries(feeds)) {
    for (const [table, events] of tables) {
      for (const event of events) {
        const name = `access_${marker}_${table}_${event.split(' ')[0]}`;
        out.push({
          name,
          sql:
            `create trigger "${name}" after ${event} on "${table}" for each row begin ` +
            `update access_markers set gen = gen + 1, "changedAt" = ${NOW} where name = '${marker}'; end`,
        });
      }
    }
  }
  return out;
}

function routerTriggerStatements(): { name: string; sql: string }[] {
  const out: { name: string; sql: string }[] = [];
  for (const routers of ['edge_routers', 'transit_routers']) {
    out.push({
      name: `${routers}_terminators`,
      sql: `create trigger "${routers}_terminators" after delete on "${routers}" for each row begin delete from terminators where "routerId" = old.id; end`,
    });
  }
  return out;
}

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('access_markers')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('gen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('changedAt', 'text', (c) => c.notNull())
    .execute();
  const now = new Date().toISOString();
  await db
    .insertInto('access_markers')
    .values(MARKERS.map((name) => ({ name, gen: 0, changedAt: now })))
    .execute();

  await keyedOnly(
    db,
    db.schema
      .createTable('identity_service_configs')
      .addColumn('identityId', 'text', (c) => c.notNull().references('identities.id').onDelete('cascade'))
      .addColumn('serviceId', 'text', (c) => c.notNull().references('services.id').onDelete('cascade'))
      .addColumn('configTypeId', 'text', (c) => c.notNull())
      .addColumn('configId', 'text', (c) => c.notNull().references('configs.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('identity_service_configs_pk', ['identityId', 'serviceId', 'configTypeId']),
  ).execute();
  await db.schema
    .createIndex('identity_service_configs_by_config')
    .on('identity_service_configs')
    .column('configId')
    .execute();
  await db.schema
    .createIndex('identity_service_configs_by_service')
    .on('identity_service_configs')
    .column('serviceId')
    .execute();

  await entityTable(db, 'sessions')
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('apiSessionId', 'text', (c) => c.notNull().references('api_sessions.id').onDelete('cascade'))
    .addColumn('identityId', 'text', (c) => c.notNull().references('identities.id').onDelete('cascade'))
    .addColumn('serviceId', 'text', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sessions_one_per_type')
    .unique()
    .on('sessions')
    .columns(['apiSessionId', 'serviceId', 'type'])
    .execute();
  await db.schema.createIndex('sessions_by_identity').on('sessions').column('identityId').execute();
  await db.schema.createIndex('sessions_by_service').on('sessions').column('serviceId').execute();

  // Router ids name an edge or a transit router (two tables), so no foreign key on routerId.
  await entityTable(db, 'terminators')
    .addColumn('serviceId', 'text', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('routerId', 'text', (c) => c.notNull())
    .addColumn('binding', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('identity', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('cost', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('precedence', 'text', (c) => c.notNull().defaultTo('default'))
    .execute();
  await db.schema.createIndex('terminators_by_service').on('terminators').column('serviceId').execute();
  await db.schema.createIndex('terminators_by_router').on('terminators').column('routerId').execute();
  if (onPostgres(db)) await postgresTriggers(db);
  else for (const t of triggerStatements()) await sql.raw(t.sql).execute(db);
}

/**
 * The same triggers on PostgreSQL: one per (marker, table), once per statement (a statement that changes many
 * rows moves its marker once), and the router triggers that take terminators with their router.
 */
const quoteList = (cols: string): string =>
  cols
    .split(',')
    .map((c) => `"${c.trim()}"`)
    .join(', ');

async function postgresTriggers(db: AnyDb): Promise<void> {
  await postgresMarkerTriggers(db, FEEDS);
  for (const routers of ['edge_routers', 'transit_routers']) {
    await pgTrigger(db, {
      name: `${routers}_terminators`,
      table: routers,
      timing: 'after',
      events: 'delete',
      each: 'row',
      body: `delete from terminators where "routerId" = old.id; return null;`,
    });
  }
}

async function postgresMarkerTriggers(db: AnyDb, feeds: Feeds): Promise<void> {
  for (const [marker, tables] of Object.entries(feeds)) {
    for (const [table, events] of tables) {
      await pgTrigger(db, {
        name: `access_${marker}_${table}`,
        table,
        timing: 'after',
        // PostgreSQL folds unquoted names to lower case: the `update of` columns are quoted.
        events: events
          .map((e) => e.replace(/^update of (.+)$/, (_, cols: string) => `update of ${quoteList(cols)}`))
          .join(' or '),
        each: 'statement',
        body: `update access_markers set gen = gen + 1, "changedAt" = ${PG_NOW} where name = '${marker}'; return null;`,
      });
    }
  }
}
