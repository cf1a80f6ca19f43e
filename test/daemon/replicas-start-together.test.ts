/**
 * Three `edgectl serve` processes started at the same moment on an empty PostgreSQL database: exactly one of
 * them migrates it (the others wait on the migration lock, then find nothing to apply), every migration is
 * recorded once, and all three serve the same network (the first to seal the PKI and token key in the
 * database wins; the others use them). `EDGECTL_START_RUNS` repeats it (the check is 20 runs; the
 * suite runs two).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ApiClient } from '../harness/server.js';
import { emptyDatabase, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';
import { serveProcess } from '../harness/serve-process.js';
import { assertBuilt } from '../harness/cli.js';
import { migrationNames } from '../../src/store/migrations/index.js';

const skip = await postgresSkip();
const { tempDir, track } = scratch('edgectl-start-together-');
const RUNS = Number(process.env.EDGECTL_START_RUNS ?? 2);
const ENV = {
  EDGECTL_ADMIN_USERNAME: 'admin',
  EDGECTL_ADMIN_PASSWORD: 'admin-Passw0rd!',
  EDGECTL_MASTER_KEY: 'start-together-master-key-0123456789-abc',
};

test(
  `three replicas started together on an empty database: one migrator, three serving (${RUNS} runs)`,
  { skip },
  async () => {
    assertBuilt();
    for (let run = 0; run < RUNS; run++) {
      const database = await emptyDatabase();
      try {
        const dirs = [tempDir(), tempDir(), tempDir()];
        const served = await Promise.all(
          dirs.map((dir) =>
            serveProcess(['--data-dir', dir, '--listen', '127.0.0.1:0', '--db', database.url], ENV, track),
          ),
        );
        try {
          const migrators = served.filter((s) => s.output().includes('"store migrated:'));
          assert.equal(migrators.length, 1, `run ${run}: exactly one replica migrated the database`);
          const c = new pg.Client({ connectionString: database.url });
          await c.connect();
          try {
            const { rows } = await c.query(
              'select name, count(*)::int as n from schema_migrations group by name order by name',
            );
            assert.deepEqual(
              rows.map((r) => [r.name, r.n]),
              migrationNames.map((n) => [n, 1]),
            );
          } finally {
            await c.end();
          }
          // One network: an API session made on the first replica works on every one, under the PKI they share.
          const ca = readFileSync(join(dirs[0]!, 'pki', 'ca-bundle.pem'), 'utf8');
          const admin = new ApiClient(ca, `${served[0]!.url}/edge/management/v1`);
          const login = await admin.login(ENV.EDGECTL_ADMIN_USERNAME, ENV.EDGECTL_ADMIN_PASSWORD);
          assert.equal(login.status, 200, login.text);
          for (const s of served) {
            const me = await new ApiClient(ca, `${s.url}/edge/management/v1`)
              .withToken(admin.token)
              .get('/current-identity');
            assert.equal(me.status, 200, me.text);
          }
        } finally {
          for (const s of served) s.child.kill('SIGKILL');
          await Promise.all(served.map((s) => s.exit));
        }
      } finally {
        await database.drop();
      }
    }
  },
);
