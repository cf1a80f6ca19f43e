/**
 * What the access engine's caches hold per entry on a built model: the heap (and external memory) one more
 * cached identity, policy set or service costs, measured after a full collection. Identities are taken in id order
 * after a warm-up that loads the catalogs and the first policy sets, so the figure per identity is its own entry
 * plus the policy sets it is the first to need (counted and printed). First, the service index on its own.
 * Usage: node --expose-gc --import tsx bench/access-memory.ts DATA_DIR [--identities N] [--services N]
 * (a SQLite model kept by `npm run bench -- --keep`).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/db.js';
import { storeCache } from '../src/store/runtime.js';
import { ACCESS_ENGINE } from '../src/model/access/engine.js';
import { silentLogger, type Ctx } from '../src/model/ctx.js';
import { RESOURCE_HOOKS } from '../src/model/services/hooks/index.js';
import { tokenMinter } from '../src/model/tokens.js';
import { loadOrCreateTokenKey } from '../src/daemon/token-key.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    identities: { type: 'string', default: '2000' },
    services: { type: 'string', default: '2000' },
  },
});
const dir = positionals[0];
if (!dir) throw new Error('usage: access-memory.ts DATA_DIR [--identities N] [--services N]');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const store = await openStore(join(dir, 'edgectl.db'));
const ctx = {
  db: store.db,
  now: () => new Date(),
  log: silentLogger,
  hooks: RESOURCE_HOOKS,
  tokens: tokenMinter(loadOrCreateTokenKey(dir).key),
  settings: { sessionTimeoutMs: 30 * 60_000 },
} as unknown as Ctx;
const engine = storeCache(store.db, ACCESS_ENGINE)!;
const db = store.db as unknown as {
  selectFrom(t: string): {
    select(c: string): { orderBy(c: string): { limit(n: number): { execute(): Promise<{ id: string }[]> } } };
  };
};
const ids = async (table: string, n: number) =>
  (await db.selectFrom(table).select('id').orderBy('id').limit(n).execute()).map((r) => r.id);

const memory = () => {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
};
const entries = () => Object.fromEntries(engine.cacheStats().map((c) => [c.cache, c.entries]));
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

const nIdentities = Number(args.identities);
const nServices = Number(args.services);
const identityIds = await ids('identities', nIdentities + 100);
const serviceIds = await ids('services', nServices);

// The service index alone (service-index.ts): what a policy set's grants are computed from.
let before = memory();
let t0 = performance.now();
await engine.serviceIndex(ctx, await engine.markers(ctx));
let after = memory();
console.log(
  `service index built in ${(performance.now() - t0).toFixed(0)} ms: heap ${kb(after.heap - before.heap)}, ` +
    `external ${kb(after.external - before.external)}`,
);

// Warm-up: the catalogs and the policy sets of the first 100 identities.
t0 = performance.now();
for (const id of identityIds.slice(0, 100)) await engine.view(ctx, id);
console.log(`warm-up (catalogs, 100 identities) in ${(performance.now() - t0).toFixed(0)} ms`);
before = memory();
let had = entries();
t0 = performance.now();
for (const id of identityIds.slice(100)) await engine.view(ctx, id);
after = memory();
let now = entries();
const n = identityIds.length - 100;
console.log(
  `${n} more identities in ${(performance.now() - t0).toFixed(0)} ms: heap ${kb((after.heap - before.heap) / n)} and ` +
    `external ${kb((after.external - before.external) / n)} per identity; new entries: ` +
    `identities ${now.identities! - had.identities!}, policy sets' grants ${now.grants! - had.grants!}`,
);

before = memory();
had = entries();
t0 = performance.now();
const m = await engine.markers(ctx);
for (const id of serviceIds) await engine.routersOfService(ctx, m, id);
after = memory();
now = entries();
console.log(
  `${serviceIds.length} services' routers in ${(performance.now() - t0).toFixed(0)} ms: heap ` +
    `${kb((after.heap - before.heap) / serviceIds.length)} per service; new entries: service edge router policy ` +
    `lists ${now.serviceRouterPolicies! - had.serviceRouterPolicies!}, router sets ${now.serviceRouters! - had.serviceRouters!}`,
);
console.log(`entries: ${JSON.stringify(now)}; heap ${(after.heap / 1048576).toFixed(0)} MiB`);
await store.close();
