/**
 * `npm run bench [-- --size small|medium|large] [--seconds N] [--concurrency N] [--repeat N] [--keep]`
 *
 * Builds a model of the given size through the model services (in its own process), starts the built
 * controller and a bare Fastify baseline (each in its own process, same TLS material and Fastify options),
 * then measures from this process over loopback: authenticate, client service list (default page and limit
 * 500), session create (Dial and Bind, repeated; and new sessions), and how quickly policy changes touching
 * `#all` become visible.
 * Every run has a warm-up of the same load first. Each operation runs `--repeat` times (default 3), each run
 * preceded by a baseline run; an operation reports its median run, the reference is the median baseline
 * run, so the machine's noise (other processes, checkpoints, collections) moves both sides alike. A session
 * of another process on the machine still shows: compare runs on a quiet machine.
 * The controller logs at `warn` (the baseline logs nothing): per-request access logs at `info` are a
 * deployment choice, not part of the request path being measured. A table is printed, with the issue's
 * targets checked, and the figures are written as JSON under bench/results/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { SIZES } from './model.js';
import { runLoad, send, type Target } from './load.js';
import type { Stats } from './stats.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    keep: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '3' },
  },
});
const size = SIZES[args.size!];
if (!size) throw new Error(`unknown size ${args.size}; use ${Object.keys(SIZES).join(', ')}`);
const seconds = Number(args.seconds);
const concurrency = Number(args.concurrency);
const repeat = Number(args.repeat);
const ADMIN = { username: 'bench-admin', password: 'bench-Admin-Passw0rd!' };

function dirSize(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? dirSize(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );
}

/** Runs a node script and resolves with its last stdout line. */
function runScript(scriptArgs: string[]): Promise<string> {
  const child = spawn(process.execPath, scriptArgs, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(out.trim().split('\n').pop()!) : reject(new Error(`${scriptArgs.join(' ')} exited ${code}`)),
    ),
  );
}

/** Starts a process and resolves with the first stdout line matching `pick` (fixture). */
function startProcess(
  argv: string[],
  env: NodeJS.ProcessEnv,
  pick: (line: string) => string | undefined,
): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(process.execPath, argv, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c) => {
      buf += c;
      for (const line of buf.split('\n')) {
        const v = pick(line);
        if (v) return resolve({ child, value: v });
      }
    });
    child.on('exit', (code) => reject(new Error(`process exited ${code} before it was ready`)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Peak resident memory (VmHWM) of a process, in MiB. */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), `edgectl-bench-${args.size}-`));
console.log(`building the ${args.size} model in ${dataDir} …`);
const model = JSON.parse(
  await runScript(['--import', 'tsx', 'bench/build-model.ts', dataDir, args.size!, String(concurrency)]),
) as {
  users: { id: string; username: string; password: string }[];
  serviceIds: string[];
  seconds: number;
};
console.log(`model built in ${model.seconds.toFixed(1)} s`);

const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
const agent = new https.Agent({ keepAlive: true, ca });
const port = await freePort();
const controllerUrl = `https://127.0.0.1:${port}`;
const controller = spawn(
  process.execPath,
  ['bin/edgectl', 'serve', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`, '--log-level', 'warn'],
  {
    cwd: root,
    env: { ...process.env, EDGECTL_ADMIN_USERNAME: ADMIN.username, EDGECTL_ADMIN_PASSWORD: ADMIN.password },
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
for (let waited = 0; ; waited += 100) {
  const up = await send({ ca, base: controllerUrl }, agent, { method: 'GET', path: '/version' }).then(
    (r) => r.status === 200,
    () => false,
  );
  if (up) break;
  if (waited > 60_000 || controller.exitCode !== null) throw new Error('the controller did not start');
  await new Promise((r) => setTimeout(r, 100));
}
const baseline = await startProcess(['--import', 'tsx', 'bench/baseline-server.ts', join(dataDir, 'pki')], {}, (l) =>
  l.startsWith('https://') ? l.trim() : undefined,
);
const client: Target = { ca, base: `${controllerUrl}/edge/client/v1` };
const mgmt: Target = { ca, base: `${controllerUrl}/edge/management/v1` };
const baseTarget: Target = { ca, base: baseline.value };

async function login(target: Target, username: string, password: string): Promise<string> {
  const res = await send(target, agent, {
    method: 'POST',
    path: '/authenticate?method=password',
    body: { username, password },
  });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${res.body}`);
  return JSON.parse(res.body).data.token;
}

const results: Record<string, Stats & { ratio: number }> = {};
const load = { concurrency, seconds, warmupSeconds: 1 };
// The load generator collects its own garbage between measurements, so one measurement's responses (up to
// 300 KB each at limit 500) do not become the next one's pauses.
v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;
const hello = () => ({ method: 'GET', path: '/hello' });
const baselines: Stats[] = [];
const byThroughput = (a: Stats, b: Stats) => a.throughput - b.throughput;
const median = (runs: Stats[]) => [...runs].sort(byThroughput)[Math.floor((runs.length - 1) / 2)]!;

/**
 * Each operation runs `repeat` times, each run preceded by a baseline run, and keeps its median run: the
 * machine's noise (other processes, checkpoints, collections) then shifts both sides alike, and the
 * reference is the median of every baseline run of the session.
 */
async function measure(
  name: string,
  call: Parameters<typeof runLoad>[2],
  opts: Partial<typeof load> & { repeat?: number } = {},
): Promise<void> {
  const runs: Stats[] = [];
  for (let i = 0; i < (opts.repeat ?? repeat); i++) {
    collect();
    baselines.push(await runLoad(baseTarget, load, hello));
    collect();
    runs.push(await runLoad(client, { ...load, ...opts }, call));
  }
  results[name] = { ...median(runs), ratio: NaN };
}

const tokens = await Promise.all(model.users.map((u) => login(client, u.username, u.password)));
const auth = (c: number) => ({ 'zt-session': tokens[c % tokens.length]! });
await measure(
  'authenticate (password)',
  (c) => ({
    method: 'POST',
    path: '/authenticate?method=password',
    body: { username: model.users[c % model.users.length]!.username, password: model.users[0]!.password },
  }),
  { warmupSeconds: 0, repeat: 1 },
);
await measure('client service list (default page)', (c) => ({ method: 'GET', path: '/services', headers: auth(c) }));
await measure('session create (Dial)', (c) => ({
  method: 'POST',
  path: '/sessions',
  headers: auth(c),
  body: { serviceId: model.serviceIds[0], type: 'Dial' },
  ok: [201],
}));
await measure('session create (Bind)', (c) => ({
  method: 'POST',
  path: '/sessions',
  headers: auth(c),
  body: { serviceId: model.serviceIds[1] ?? model.serviceIds[0], type: 'Bind' },
  ok: [201],
}));
await measure('client service list (limit 500)', (c) => ({
  method: 'GET',
  path: '/services?limit=500',
  headers: auth(c),
}));
// Informational: every request a session that does not exist yet (each client walks the services it may Dial).
const dialable = await Promise.all(
  tokens.map(async (token) => {
    const ids: string[] = [];
    for (let offset = 0; offset < model.serviceIds.length; offset += 500) {
      const page = JSON.parse(
        (
          await send(client, agent, {
            method: 'GET',
            path: `/services?limit=500&offset=${offset}`,
            headers: { 'zt-session': token },
          })
        ).body,
      );
      for (const svc of page.data) if (svc.permissions.includes('Dial')) ids.push(svc.id);
      if (offset + 500 >= page.meta.pagination.totalCount) break;
    }
    return ids;
  }),
);
const walked = dialable.map(() => 0);
await measure(
  'session create (new sessions)',
  (c) => ({
    method: 'POST',
    path: '/sessions',
    headers: auth(c),
    body: { serviceId: dialable[c]![walked[c]!++ % dialable[c]!.length], type: 'Dial' },
    ok: [201],
  }),
  { warmupSeconds: 0, repeat: 1 },
);
const base = median(baselines);
results['baseline hello'] = { ...base, ratio: 1 };

// Policy changes touching #all: time from the create request until an affected identity sees the service.
const adminToken = await login(mgmt, ADMIN.username, ADMIN.password);
async function visibleAfter(policy: Record<string, unknown>, serviceId: string, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await send(mgmt, agent, {
    method: 'POST',
    path: '/service-policies',
    headers: { 'zt-session': adminToken },
    body: policy,
  });
  if (res.status !== 201) throw new Error(`policy create: ${res.status} ${res.body}`);
  for (;;) {
    const list = await send(client, agent, {
      method: 'GET',
      path: `/services?filter=${encodeURIComponent(`id = "${serviceId}"`)}`,
      headers: { 'zt-session': token },
    });
    if (list.status === 200 && JSON.parse(list.body).data.length === 1) return performance.now() - t0;
    if (performance.now() - t0 > 10_000) return NaN;
  }
}
const asAdmin = { 'zt-session': adminToken };
async function adminCreate(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await send(mgmt, agent, { method: 'POST', path, headers: asAdmin, body });
  if (res.status !== 201) throw new Error(`create ${path}: ${res.status} ${res.body}`);
  return JSON.parse(res.body).data.id;
}
// A new service no policy grants yet, then a policy giving it to #all identities (seen by a load client).
const newService = await adminCreate('/services', { name: 'bench-new-service', encryptionRequired: true });
const policyAllIdentities = await visibleAfter(
  {
    name: 'bench-one-service-all-identities',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    serviceRoles: [`@${newService}`],
  },
  newService,
  tokens[0]!,
);
// A new identity with no attributes (it sees nothing), then a policy giving it #all services.
const newIdentity = await adminCreate('/identities', { name: 'bench-new-identity', type: 'User', isAdmin: false });
await adminCreate('/authenticators', {
  identityId: newIdentity,
  method: 'updb',
  username: 'bench-new-user',
  password: model.users[0]!.password,
});
const newToken = await login(client, 'bench-new-user', model.users[0]!.password);
const someService = model.serviceIds[Math.floor(model.serviceIds.length / 2)]!;
const policyAllServices = await visibleAfter(
  {
    name: 'bench-all-services-one-identity',
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${newIdentity}`],
    serviceRoles: ['#all'],
  },
  someService,
  newToken,
);

const rss = peakRssMiB(controller.pid!);
controller.kill('SIGTERM');
baseline.child.kill('SIGTERM');
await new Promise((r) => controller.on('exit', r));
const dataMiB = dirSize(dataDir) / 1024 / 1024;
for (const r of Object.values(results)) r.ratio = r.throughput / base.throughput;

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '—');
const order = [
  'baseline hello',
  'authenticate (password)',
  'client service list (default page)',
  'client service list (limit 500)',
  'session create (Dial)',
  'session create (Bind)',
  'session create (new sessions)',
];
console.log(
  `\nedgectl benchmark — size ${args.size}, ${concurrency} concurrent clients, ${seconds} s per run (after 1 s warm-up)\n`,
);
console.log(
  'operation'.padEnd(38) +
    'req/s'.padStart(10) +
    'ratio'.padStart(8) +
    'p50 ms'.padStart(9) +
    'p99 ms'.padStart(9) +
    'errors'.padStart(8),
);
for (const name of order) {
  const r = results[name]!;
  console.log(
    name.padEnd(38) +
      fmt(r.throughput).padStart(10) +
      fmt(r.ratio, 2).padStart(8) +
      fmt(r.p50, 2).padStart(9) +
      fmt(r.p99, 2).padStart(9) +
      String(r.errors).padStart(8),
  );
}
console.log(
  `(baseline: median of ${baselines.length} runs, one before each run of an operation; range ${fmt(baselines.reduce((a, b) => Math.min(a, b.throughput), Infinity))}–${fmt(baselines.reduce((a, b) => Math.max(a, b.throughput), 0))} req/s; operations: median of ${repeat} runs)`,
);
console.log(
  `\npolicy #all identities → visible in ${fmt(policyAllIdentities, 0)} ms; policy #all services → visible in ${fmt(policyAllServices, 0)} ms`,
);
console.log(`model build ${fmt(model.seconds)} s; data dir ${fmt(dataMiB)} MiB; controller peak RSS ${fmt(rss)} MiB`);

// The issue's targets (they are stated for the large model; shown for every size).
const targets: [string, boolean][] = [
  [
    'service list (default page) ≥ 40 % of baseline, p99 < 20 ms',
    results['client service list (default page)']!.ratio >= 0.4 &&
      results['client service list (default page)']!.p99 < 20,
  ],
  [
    'session create (Dial) ≥ 40 % of baseline, p99 < 20 ms',
    results['session create (Dial)']!.ratio >= 0.4 && results['session create (Dial)']!.p99 < 20,
  ],
  [
    'session create (Bind) ≥ 40 % of baseline, p99 < 20 ms',
    results['session create (Bind)']!.ratio >= 0.4 && results['session create (Bind)']!.p99 < 20,
  ],
  ['service list limit 500 p99 < 100 ms', results['client service list (limit 500)']!.p99 < 100],
  ['#all policies visible within 1 s', policyAllIdentities < 1000 && policyAllServices < 1000],
  ['data dir < 1 GB', dataMiB < 1024],
  ['model built in < 2 min', model.seconds < 120],
  ['controller peak RSS < 500 MB', rss < 500],
];
console.log('\ntargets:');
for (const [what, ok] of targets) console.log(`  ${ok ? 'met    ' : 'NOT MET'}  ${what}`);

const out = {
  size: args.size,
  model: size,
  concurrency,
  seconds,
  at: new Date().toISOString(),
  results,
  repeat,
  baselines,
  policyAllIdentitiesMs: policyAllIdentities,
  policyAllServicesMs: policyAllServices,
  buildSeconds: model.seconds,
  dataDirMiB: dataMiB,
  peakRssMiB: rss,
  targets: Object.fromEntries(targets),
};
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `${args.size}-${out.at.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
console.log(`figures written to ${file}`);
if (!args.keep) rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
