/**
 * No policy match is stored any more (docs/policy-engine.md, "The representation"): the tables that held which
 * services, posture checks and edge routers each policy selects go, and every reader answers from the role
 * lists and the targets' attribute tables, as the identity side always was. At the xlarge model the service
 * policies alone wrote ~31 million such rows (~3 GB), and one policy write rewrote up to 15,000 of them.
 *
 * The access markers the dropped tables' triggers moved now move with what those rows were computed from: a
 * target created or deleted (`#all` and `@id` select it), and its attributes (`#attr`). The role lists and the
 * policies' semantics fed the markers already (migration 0005).
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { addMarkerTriggers } from './0005-access-sessions.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** The match tables and the marker each one's triggers moved (migration 0002 created them, 0005 the triggers). */
const DROPPED: [table: string, marker: 'serviceAccess' | 'router'][] = [
  ['service_policy_services', 'serviceAccess'],
  ['service_policy_posture_checks', 'serviceAccess'],
  ['edge_router_policy_edge_routers', 'router'],
  ['service_edge_router_policy_services', 'router'],
  ['service_edge_router_policy_edge_routers', 'router'],
];

export async function up(db: AnyDb): Promise<void> {
  const postgres = onPostgres(db);
  for (const [table, marker] of DROPPED) {
    await db.schema.dropTable(table).execute();
    // A PostgreSQL trigger goes with its table, its function does not (SQLite's triggers are the statements).
    if (postgres) await sql.raw(`drop function "access_${marker}_${table}"()`).execute(db);
  }
  // The replicas' change counters of the dropped tables (migration 0015).
  if (postgres)
    await db
      .deleteFrom('store_changes')
      .where(
        'name',
        'in',
        DROPPED.map(([t]) => t),
      )
      .execute();
  await addMarkerTriggers(db, {
    // Service policies select services and posture checks: by id, `#all` or their attributes.
    serviceAccess: [
      ['services', ['insert', 'delete']],
      ['services_roleAttributes', ['insert', 'delete']],
      ['posture_checks_roleAttributes', ['insert', 'delete']],
    ],
    // Service edge router policies select services; both router policy kinds select edge routers (whose own
    // inserts and deletes fed this marker already).
    router: [
      ['services', ['insert', 'delete']],
      ['services_roleAttributes', ['insert', 'delete']],
      ['edge_routers_roleAttributes', ['insert', 'delete']],
    ],
  });
}
