/**
 * The controller's own CPU per warm request on the hot paths, without TLS, sockets or HTTP parsing: a kept
 * model's data dir (`--keep`) opened by a controller in this process, requests through Fastify's `inject`, 16 in
 * flight. Scenarios as the bench's (bench/run.ts): the client service list (default page; `limit=500`) as the
 * first 16 load users in turn, session creates (Dial) over the realistic mix (100 identities, up to 512 pairs).
 * Each scenario is warmed, then timed `--rounds` times; the CPU of this process per request (process.cpuUsage,
 * every thread) is printed per round. What `inject` itself costs is in every figure alike, so compare builds
 * (alternate processes), not these figures with the bench's. Fastify's `inject` retains every response on Node 20
 * (~18 KB per default page), so keep `--count` to a few thousand, and low for `limit=500`.
 * Usage: node --import tsx bench/inject-hot-paths.ts MODEL_DIR [--count N] [--rounds N] [--only KEY,...] [--copy]
 * `--copy`: work on a copy of the data dir (the sessions it creates are written to the model otherwise).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/daemon/config.js';
import { startDaemon } from '../src/daemon/daemon.js';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    count: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
    copy: { type: 'boolean', default: false },
  },
});
const model = positionals[0];
if (!model) throw new Error('usage: inject-hot-paths.ts MODEL_DIR [--count N] [--rounds N] [--only KEY,...]');
const count = Number(opts.count);
const rounds = Number(opts.rounds);
const only = opts.only ? new Set(opts.only.split(',')) : undefined;
let dir = model;
if (opts.copy) {
  dir = mkdtempSync(join(tmpdir(), 'edgectl-hot-'));
  cpSync(model, dir, { recursive: true });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}
const users = (
  JSON.parse(readFileSync(join(dir, 'bench-model.json'), 'utf8')) as {
    users: { username: string; password: string }[];
  }
).users;
const configFile = join(dir, 'hot-paths.yml');
writeFileSync(
  configFile,
  'log:\n  level: silent\nedge:\n  api:\n    rateLimit:\n      auth:\n' +
    ['perSource', 'failuresPerSource', 'failuresPerAccount']
      .map((k) => `        ${k}: { burst: 1000000000, perMinute: 1000000000 }\n`)
      .join(''),
);
const daemon = await startDaemon(
  loadConfig({ flags: { dataDir: dir, listen: '127.0.0.1:0', config: configFile, logLevel: 'silent' }, env: {} }),
  { adminCredentials: async () => ({ username: 'hot-admin', password: 'hot-Admin-Passw0rd!' }) },
);
const app = daemon.app;
const CLIENT = '/edge/client/v1';

interface Req {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

const tokens: string[] = [];
for (const u of users) {
  const r = await app.inject({
    method: 'POST',
    url: `${CLIENT}/authenticate?method=password`,
    payload: { username: u.username, password: u.password },
  });
  if (r.statusCode !== 200) throw new Error(`login ${u.username}: ${r.statusCode} ${r.body}`);
  tokens.push((JSON.parse(r.body) as { data: { token: string } }).data.token);
}

/** The bench's mix (bench/run.ts `mixOf`): each identity's Dial services in a spread order, taken in turn. */
async function dialMix(): Promise<Req[]> {
  const spread: string[][] = [];
  for (const token of tokens) {
    const may: string[] = [];
    for (let offset = 0; ; offset += 500) {
      const r = await app.inject({
        method: 'GET',
        url: `${CLIENT}/services?limit=500&offset=${offset}`,
        headers: { 'zt-session': token },
      });
      const page = JSON.parse(r.body) as {
        data: { id: string; permissions: string[] }[];
        meta: { pagination: { totalCount: number } };
      };
      for (const s of page.data) if (s.permissions.includes('Dial')) may.push(s.id);
      if (offset + 500 >= page.meta.pagination.totalCount) break;
    }
    spread.push(
      may
        .map((id, j) => ({ id, at: (j * 0.6180339887) % 1 }))
        .sort((x, y) => x.at - y.at)
        .map((x) => x.id),
    );
  }
  const pairs: Req[] = [];
  for (let k = 0; pairs.length < 512; k++) {
    let took = false;
    for (let u = 0; u < spread.length && pairs.length < 512; u++) {
      const serviceId = spread[u]![k];
      if (serviceId === undefined) continue;
      pairs.push({
        method: 'POST',
        url: `${CLIENT}/sessions`,
        headers: { 'zt-session': tokens[u]!, 'content-type': 'application/json' },
        payload: JSON.stringify({ serviceId, type: 'Dial' }),
      });
      took = true;
    }
    if (!took) break;
  }
  return pairs;
}

const loadUsers = tokens.slice(0, 16);
const scenarios: { key: string; requests: () => Promise<Req[]>; status: number }[] = [
  {
    key: 'service-list',
    status: 200,
    requests: async () =>
      loadUsers.map((t) => ({ method: 'GET', url: `${CLIENT}/services`, headers: { 'zt-session': t } })),
  },
  {
    key: 'service-list-500',
    status: 200,
    requests: async () =>
      loadUsers.map((t) => ({ method: 'GET', url: `${CLIENT}/services?limit=500`, headers: { 'zt-session': t } })),
  },
  { key: 'session-dial-mix', status: 201, requests: dialMix },
];

/** `n` requests, 16 in flight, cycling through `reqs`. */
async function drive(reqs: Req[], n: number, status: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        const r = reqs[next++ % reqs.length]!;
        const res = await app.inject(r);
        if (res.statusCode !== status) throw new Error(`${r.method} ${r.url}: ${res.statusCode} ${res.body}`);
      }
    }),
  );
}

for (const s of scenarios) {
  if (only && !only.has(s.key)) continue;
  const reqs = await s.requests();
  await drive(reqs, Math.max(2000, reqs.length * 2), s.status);
  const figures: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const c0 = process.cpuUsage();
    await drive(reqs, count, s.status);
    const c = process.cpuUsage(c0);
    figures.push(((c.user + c.system) / count).toFixed(1));
  }
  console.log(`${s.key.padEnd(18)} CPU µs per request: ${figures.join(' ')}`);
}
await daemon.close();
process.exit(0);
