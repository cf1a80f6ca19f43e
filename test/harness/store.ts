/** A store on a temporary file with a model context over it, for unit tests of the model and the store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Ctx } from '../../src/model/ctx.js';
import { tokenMinter } from '../../src/model/tokens.js';
import { RESOURCE_HOOKS } from '../../src/model/services/hooks/index.js';
import { openStore, type OpenedStore } from '../../src/store/db.js';

export interface TestStore {
  store: OpenedStore;
  ctx: Ctx;
  close(): Promise<void>;
}

export async function openTestStore(prefix = 'edgectl-unit-'): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const store = await openStore(join(dir, 'db.sqlite'));
  return {
    store,
    ctx: storeCtx(store),
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A model context over an open store (SQLite or PostgreSQL), as the unit tests use it. */
export function storeCtx(store: OpenedStore): Ctx {
  return {
    db: store.db,
    now: () => new Date(),
    settings: { sessionTimeoutMs: 60_000, identityEnrollmentDurationMs: 60_000, routerEnrollmentDurationMs: 60_000 },
    log: silentLogger,
    tokens: tokenMinter(Buffer.alloc(32, 7)),
    hooks: RESOURCE_HOOKS,
  };
}
