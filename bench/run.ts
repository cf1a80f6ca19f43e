/**
 * `npm run bench [-- --size small|medium|large] [--seconds N] [--concurrency N]`
 *
 * Builds a model of the given size through the model services, starts the built controller and a bare
 * Fastify baseline (each in its own process, same TLS), then measures from this process over loopback:
 * authenticate, client service list (default page and limit 500), session create (Dial and Bind), and how
 * quickly policy changes touching `#all` become visible. Figures are reported as ratios to the baseline
 * measured in the same run; a table is printed and the figures are written as JSON under bench/results/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { buildModel, SIZES } from './model.js';
import { runLoad, send, type Target } from './load.js';
import type { Stats } from './stats.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    keep: { type: 'boolean', default: false },
  },
});
const size = SIZES[args.size!];
if (!size) throw new Error(`unknown size ${args.size}; use ${Object.keys(SIZES).join(', ')}`);
const seconds = Number(args.seconds);
const concurrency = Number(args.concurrency);
const ADMIN = { username: 'bench-admin', password: 'bench-Admin-Passw0rd!' };

function dirSize(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? dirSize(join(dir, e.name)) : statSync(join(dir, e.name)).size), 0);
}

/** Starts a process and resolves with the first stdout line matching `pick` (fixture). */
function startProcess(args: string[], env: NodeJS.ProcessEnv, pick: (line: string) => string | undefined): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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

/** Peak resident memory (VmHWM) of a process, in MiB. */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), `edgectl-bench-${args.size}-`));
console.log(`building the ${args.size} model in ${dataDir} …`);
const model = await buildModel(dataDir, size, concurrency);
console.log(`model built in ${model.seconds.toFixed(1)} s`);

const controller = await startProcess(
  ['bin/edgectl', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--log-level', 'info'],
  { EDGECTL_ADMIN_USERNAME: ADMIN.username, EDGECTL_ADMIN_PASSWORD: ADMIN.password },
  (line) => (line.includes('edgectl controller listening') ? JSON.parse(line).url : undefined),
);
const baseline = await startProcess(['--import', 'tsx', 'bench/baseline-server.ts', join(dataDir, 'pki')], {}, (l) => (l.startsWith('https://') ? l.trim() : undefined));
const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
const client: Target = { ca, base: `${controller.value}/edge/client/v1` };
const mgmt: Target = { ca, base: `${controller.value}/edge/management/v1` };
const agent = new https.Agent({ keepAlive: true, ca });

async function login(target: Target, username: string, password: string): Promise<string> {
  const res = await send(target, agent, { method: 'POST', path: '/authenticate?method=password', body: { username, password } });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${res.body}`);
  return JSON.parse(res.body).data.token;
}

const results: Record<string, Stats & { ratio: number }> = {};
const load = { concurrency, seconds };
const record = (name: string, s: Stats) => (results[name] = { ...s, ratio: NaN });

record('baseline hello', await runLoad({ ca, base: baseline.value }, load, () => ({ method: 'GET', path: '/hello' })));
const tokens = await Promise.all(model.users.map((u) => login(client, u.username, u.password)));
const auth = (c: number) => ({ 'zt-session': tokens[c % tokens.length]! });
record('authenticate (password)', await runLoad(client, { ...load, warmup: 0 }, (c) => ({ method: 'POST', path: '/authenticate?method=password', body: { username: model.users[c % model.users.length]!.username, password: model.users[0]!.password } })));
record('client service list (default page)', await runLoad(client, load, (c) => ({ method: 'GET', path: '/services', headers: auth(c) })));
record('client service list (limit 500)', await runLoad(client, load, (c) => ({ method: 'GET', path: '/services?limit=500', headers: auth(c) })));
record('session create (Dial)', await runLoad(client, load, (c) => ({ method: 'POST', path: '/sessions', headers: auth(c), body: { serviceId: model.serviceIds[0], type: 'Dial' }, ok: [200, 201] })));
record('session create (Bind)', await runLoad(client, load, (c) => ({ method: 'POST', path: '/sessions', headers: auth(c), body: { serviceId: model.serviceIds[1] ?? model.serviceIds[0], type: 'Bind' }, ok: [200, 201] })));

// Policy changes touching #all: time from the create request until an affected identity sees the service.
const adminToken = await login(mgmt, ADMIN.username, ADMIN.password);
async function visibleAfter(policy: Record<string, unknown>, serviceId: string, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await send(mgmt, agent, { method: 'POST', path: '/service-policies', headers: { 'zt-session': adminToken }, body: policy });
  if (res.status !== 201) throw new Error(`policy create: ${res.status} ${res.body}`);
  for (;;) {
    const list = await send(client, agent, { method: 'GET', path: `/services?filter=${encodeURIComponent(`id = "${serviceId}"`)}`, headers: { 'zt-session': token } });
    if (list.status === 200 && JSON.parse(list.body).data.length === 1) return performance.now() - t0;
    if (performance.now() - t0 > 10_000) return NaN;
  }
}
const lastService = model.serviceIds[model.serviceIds.length - 1]!;
const policyAllIdentities = await visibleAfter({ name: 'bench-one-service-all-identities', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#all'], serviceRoles: [`@${lastService}`] }, lastService, tokens[0]!);
const policyAllServices = await visibleAfter({ name: 'bench-all-services-one-identity', type: 'Bind', semantic: 'AnyOf', identityRoles: [`@${model.users[1]?.id ?? model.users[0]!.id}`], serviceRoles: ['#all'] }, model.serviceIds[Math.floor(model.serviceIds.length / 2)]!, tokens[1 % tokens.length]!);

const rss = peakRssMiB(controller.child.pid!);
controller.child.kill('SIGTERM');
baseline.child.kill('SIGTERM');
await new Promise((r) => controller.child.on('exit', r));
const dataMiB = dirSize(dataDir) / 1024 / 1024;
const base = results['baseline hello']!.throughput;
for (const r of Object.values(results)) r.ratio = r.throughput / base;

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '—');
console.log(`\nedgectl benchmark — size ${args.size}, ${concurrency} concurrent clients, ${seconds} s per measurement\n`);
console.log('operation'.padEnd(38) + 'req/s'.padStart(10) + 'ratio'.padStart(8) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'errors'.padStart(8));
for (const [name, r] of Object.entries(results)) {
  console.log(name.padEnd(38) + fmt(r.throughput).padStart(10) + fmt(r.ratio, 2).padStart(8) + fmt(r.p50, 2).padStart(9) + fmt(r.p99, 2).padStart(9) + String(r.errors).padStart(8));
}
console.log(`\npolicy #all identities → visible in ${fmt(policyAllIdentities, 0)} ms; policy #all services → visible in ${fmt(policyAllServices, 0)} ms`);
console.log(`model build ${fmt(model.seconds)} s; data dir ${fmt(dataMiB)} MiB; controller peak RSS ${fmt(rss)} MiB`);

const out = { size: args.size, model: size, concurrency, seconds, at: new Date().toISOString(), results, policyAllIdentitiesMs: policyAllIdentities, policyAllServicesMs: policyAllServices, buildSeconds: model.seconds, dataDirMiB: dataMiB, peakRssMiB: rss };
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `${args.size}-${out.at.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
console.log(`figures written to ${file}`);
if (!args.keep) rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
