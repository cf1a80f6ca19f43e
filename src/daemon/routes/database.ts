/**
 * Database operations on the Management API (parity: docs/reference-notes.md §8): the integrity scan and fix
 * run in the background (202 at once, one at a time among the controllers sharing the store), their results are
 * read back, and an online snapshot (SQLite's backup, or pg_dump of a PostgreSQL store) is taken at most once a
 * minute.
 */
import { empty, ok } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

const MGMT = ['management'] as const;

export const databaseRoutes: RouteDef[] = [
  route({
    apis: MGMT,
    method: 'POST',
    path: '/database/check-data-integrity',
    operationId: 'checkDataIntegrity',
    tag: 'Database',
    access: 'admin',
    success: 202,
    envelope: 'empty',
    async handler(rc) {
      await rc.deps.database.start(false, rc.ctx.actor);
      return { ...empty(), status: 202 };
    },
  }),
  route({
    apis: MGMT,
    method: 'POST',
    path: '/database/fix-data-integrity',
    operationId: 'fixDataIntegrity',
    tag: 'Database',
    access: 'admin',
    success: 202,
    envelope: 'empty',
    async handler(rc) {
      await rc.deps.database.start(true, rc.ctx.actor);
      return { ...empty(), status: 202 };
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/database/data-integrity-results',
    operationId: 'dataIntegrityResults',
    tag: 'Database',
    access: 'admin',
    success: 200,
    envelope: 'dataIntegrityCheckResultEnvelope',
    async handler(rc) {
      const data = await rc.deps.database.results();
      // parity: §8, one unpaged list
      return {
        data,
        meta: { pagination: { limit: -1, offset: 0, totalCount: data.results.length }, filterableFields: [] },
      };
    },
  }),
  route({
    apis: MGMT,
    method: 'POST',
    path: '/database/snapshot',
    operationId: 'createDatabaseSnapshot',
    tag: 'Database',
    access: 'admin',
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      // The reference answers an empty object; the file's path is an addition (docs/decisions.md).
      return ok({ path: await rc.deps.database.snapshot(rc.ctx.actor) });
    },
  }),
];
