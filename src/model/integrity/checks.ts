/**
 * The data-integrity checks (docs/decisions.md, "Data-integrity scan"): each is named, scans the store for one
 * kind of damage and says how to repair what it found. A new derived structure (a new table the controller
 * keeps from other records) gets a check here: a `scan` that recomputes it from its sources and describes each
 * difference, and a `fix` (or per-finding `repair`) that rewrites it. The runner (./run.ts) scans every check,
 * repairs in one transaction and scans again.
 */
import { MARKERS } from '../../store/migrations/0005-access-sessions.js';
import {
  danglingIdRoles,
  deleteForeignKeyOrphans,
  deleteMarker,
  deleteRoleEntry,
  deleteTerminators,
  edgeRouterTunnelers,
  foreignKeyOrphans,
  foreignKeyTables,
  identitiesByIds,
  insertMarker,
  markerNames,
  orphanTerminators,
  resetForeignKeyOrphans,
  restoreRouterIdentity,
  sqliteIntegrityProblems,
  systemEdgeRouterPolicies,
} from '../../store/integrity.js';
import { knownMigrations } from '../../store/migrations/index.js';
import {
  describeSchemaDifference,
  repairOrder,
  repairSchemaDrift,
  schemaDrift,
  schemaRepair,
} from '../../store/schema-drift.js';
import {
  isSearchIndexTable,
  repairSearchIndex,
  SEARCH_INDEXES,
  searchIndexName,
  searchIndexProblems,
} from '../../store/search-index.js';
import { deleteRouterIdentity } from '../../store/router-identities.js';
import { iso, type Ctx } from '../ctx.js';
import { deleteEntity } from '../crud.js';
import { POLICY_KINDS, TARGETS } from '../policy/kinds.js';
import { removeIdReferences } from '../policy/matches.js';
import { edgeRouterPolicies } from '../resources/edge-router-policy.js';
import { createRouterIdentity, createSystemPolicy, systemPolicyName } from '../services/router/edge-router-system.js';
import { yieldToEventLoop } from './pace.js';

export interface Finding {
  /** Human-readable, naming the records involved; also how a re-scan recognises the same problem. */
  description: string;
  /** Repairs this finding on the fix's transaction (absent: the check's `fix` handles it, or nothing can). */
  repair?: (ctx: Ctx) => Promise<void>;
}

/** What a scan knows beyond the context. */
export interface ScanEnv {
  /** The store's file: SQLite's own check reads it on a worker thread's connection (absent: on `ctx.db`). */
  file?: string;
}

/**
 * One kind of damage. A scan lets the event loop run between checks; a check whose work grows with the store
 * yields (`yieldToEventLoop`) between its steps too (per table, per policy, …), so the controller goes on
 * serving while it runs: every store call is synchronous.
 */
export interface IntegrityCheck {
  name: string;
  /** Damage to the file itself: nothing may be repaired while such a finding stands (restore instead). */
  fatal?: boolean;
  scan(ctx: Ctx, env?: ScanEnv): Promise<Finding[]>;
  /** Repairs the findings of this check's last scan; default: each finding's own `repair`, in order. */
  fix?(ctx: Ctx, findings: readonly Finding[]): Promise<void>;
}

const sqliteFile: IntegrityCheck = {
  name: 'sqlite-integrity',
  fatal: true,
  async scan(ctx, env) {
    return (await sqliteIntegrityProblems(ctx.db, env?.file)).map((m) => ({
      description: `SQLite integrity_check: ${m} (the file is damaged; edgectl cannot repair it: restore a snapshot)`,
    }));
  },
};

/** Which rows may be pointed at a built-in record instead of being deleted with their missing parent. */
const RESET_TO: Record<string, string> = {
  'identities.authPolicyId': 'default',
  'identities.typeId': 'User',
};

const foreignKeys: IntegrityCheck = {
  name: 'foreign-keys',
  async scan(ctx) {
    const out: Finding[] = [];
    const orphans = [];
    for (const table of await foreignKeyTables(ctx.db)) {
      orphans.push(...(await foreignKeyOrphans(ctx.db, table)));
      await yieldToEventLoop();
    }
    for (const fk of orphans) {
      const reset = RESET_TO[`${fk.table}.${fk.column}`];
      const repair = async (c: Ctx) => {
        if (reset) await resetForeignKeyOrphans(c.db, fk, reset);
        else await deleteForeignKeyOrphans(c.db, fk);
      };
      for (const r of fk.rows) {
        out.push({
          description: `${fk.table} ${r.row}: ${fk.column} names ${fk.parent} ${r.value}, which does not exist`,
          repair,
        });
      }
    }
    return out;
  },
  async fix(ctx, findings) {
    // One repair per foreign key covers all its rows.
    for (const repair of new Set(findings.map((f) => f.repair))) await repair?.(ctx);
  },
};

const markers: IntegrityCheck = {
  name: 'access-markers',
  async scan(ctx) {
    const present = new Set(await markerNames(ctx.db));
    const known = new Set<string>(MARKERS);
    return [
      ...MARKERS.filter((m) => !present.has(m)).map((m) => ({
        description: `access marker ${m} is missing (the access caches cannot tell when its data changes)`,
        repair: (c: Ctx) => insertMarker(c.db, m, iso(c.now())),
      })),
      ...[...present]
        .filter((m) => !known.has(m))
        .map((m) => ({ description: `access marker ${m} is unknown`, repair: (c: Ctx) => deleteMarker(c.db, m) })),
    ];
  },
};

/**
 * Every table, index, trigger and view (on PostgreSQL also every function and rule) against what the store's
 * recorded migrations create (store/schema-drift.ts): a foreign one is dropped (a trigger could rewrite every
 * write the controller makes), an altered index, trigger, view or function is created again from its
 * migration, a missing one created. Tables are never rebuilt: a missing or altered table stays a finding
 * (restore a snapshot), except SQLite's search index tables, which the search-index check rebuilds; on
 * PostgreSQL a foreign table is left too (the database may hold other programs' tables). Its repairs run first
 * in the fix, before any other repair writes.
 */
const schemaObjects: IntegrityCheck = {
  name: 'schema-objects',
  async scan(ctx) {
    const differences = (await schemaDrift(ctx.db, knownMigrations, yieldToEventLoop))
      .filter((d) => !(d.kind === 'missing' && d.object.type === 'table' && isSearchIndexTable(d.object.name)))
      .sort((a, b) => repairOrder(a) - repairOrder(b));
    return differences.map((d) => {
      const repair = schemaRepair(ctx.db, d);
      return repair.repairable
        ? { description: describeSchemaDifference(d), repair: (c: Ctx) => repairSchemaDrift(c.db, d) }
        : { description: `${describeSchemaDifference(d)} (${repair.why})` };
    });
  },
};

/** The substring-search indexes (migration 0012): a stale one would hide rows from `contains` filters. */
const searchIndexes: IntegrityCheck = {
  name: 'search-indexes',
  async scan(ctx) {
    const out: Finding[] = [];
    for (const ix of SEARCH_INDEXES) {
      const repair = (c: Ctx) => repairSearchIndex(c.db, ix);
      for (const problem of await searchIndexProblems(ctx.db, ix))
        out.push({ description: `search index ${searchIndexName(ix)}: ${problem}`, repair });
      await yieldToEventLoop();
    }
    return out;
  },
  async fix(ctx, findings) {
    // One rebuild per index covers all its findings.
    for (const repair of new Set(findings.map((f) => f.repair))) await repair?.(ctx);
  },
};

const roleReferences: IntegrityCheck = {
  name: 'policy-role-references',
  async scan(ctx) {
    const out: Finding[] = [];
    for (const kind of POLICY_KINDS) {
      for (const side of kind.sides) {
        const target = TARGETS[side.target];
        await yieldToEventLoop();
        for (const { ownerId, value } of await danglingIdRoles(ctx.db, side.rolesTable, target.table)) {
          out.push({
            description: `${kind.collection} ${ownerId}: ${side.prop} names ${value}, but there is no ${target.collection} record with that id`,
            repair: (c) => deleteRoleEntry(c.db, side.rolesTable, ownerId, value),
          });
        }
      }
    }
    return out;
  },
};

const terminators: IntegrityCheck = {
  name: 'terminator-routers',
  async scan(ctx) {
    return (await orphanTerminators(ctx.db)).map((t) => ({
      description: `terminators ${t.id}: routerId names router ${t.routerId}, which does not exist`,
      repair: (c: Ctx) => deleteTerminators(c.db, [t.id]),
    }));
  },
};

const tunnelerRecords: IntegrityCheck = {
  name: 'tunneler-system-records',
  async scan(ctx) {
    const routers = await edgeRouterTunnelers(ctx.db);
    const policies = new Map((await systemEdgeRouterPolicies(ctx.db)).map((p) => [p.id, p]));
    const idents = new Map(
      (
        await identitiesByIds(
          ctx.db,
          routers.map((r) => r.id),
        )
      ).map((i) => [i.id, i]),
    );
    const tunnelers = new Set(routers.filter((r) => r.tunneler).map((r) => r.id));
    const out: Finding[] = [];
    for (const r of routers) {
      const ident = idents.get(r.id);
      if (r.tunneler) {
        if (!ident) {
          out.push({
            description: `edge router ${r.id} is tunneler-enabled but has no Router identity ${r.id}`,
            repair: (c) => createRouterIdentity(c, r.id, r.name),
          });
        } else if (ident.typeId !== 'Router' || ident.name !== r.name) {
          out.push({
            description: `identity ${r.id} of tunneler-enabled edge router ${r.id} should be of type Router and named "${r.name}" (is ${ident.typeId}, "${ident.name}")`,
            repair: (c) => restoreRouterIdentity(c.db, r.id, r.name, iso(c.now())),
          });
        }
        const p = policies.get(r.id);
        const want = `@${r.id}`;
        if (!p) {
          out.push({
            description: `edge router ${r.id} is tunneler-enabled but has no system edge router policy ${systemPolicyName(r.id)}`,
            repair: (c) => createSystemPolicy(c, r.id),
          });
        } else if (
          p.name !== systemPolicyName(r.id) ||
          p.semantic !== 'AnyOf' ||
          p.identityRoles.join() !== want ||
          p.edgeRouterRoles.join() !== want
        ) {
          out.push({
            description: `system edge router policy ${p.id} of edge router ${r.id} differs from what the router needs (name ${systemPolicyName(r.id)}, AnyOf, ${want} on both sides)`,
            repair: async (c) => {
              await deleteEntity(c, edgeRouterPolicies, p.id, { allowSystem: true });
              await createSystemPolicy(c, r.id);
            },
          });
        }
      } else if (ident?.typeId === 'Router') {
        out.push({
          description: `edge router ${r.id} is not tunneler-enabled but its Router identity ${r.id} remains`,
          repair: async (c) => {
            await removeIdReferences(c, 'identity', r.id);
            await deleteRouterIdentity(c.db, r.id);
          },
        });
      }
    }
    for (const p of policies.values()) {
      if (tunnelers.has(p.id)) continue;
      out.push({
        description: `system edge router policy ${p.id} ("${p.name}") belongs to no tunneler-enabled edge router`,
        repair: (c) => deleteEntity(c, edgeRouterPolicies, p.id, { allowSystem: true }),
      });
    }
    return out;
  },
};

/**
 * Every check, in repair order: the file first (nothing is repaired on a damaged file), then the schema
 * objects (a foreign trigger is gone before any repair writes), the markers, dangling rows, role entries and
 * system records. (Policy matches are not stored, so nothing derived from them can drift.)
 */
export const INTEGRITY_CHECKS: readonly IntegrityCheck[] = [
  sqliteFile,
  schemaObjects,
  markers,
  foreignKeys,
  roleReferences,
  terminators,
  tunnelerRecords,
  searchIndexes,
];
