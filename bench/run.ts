/**
 * `npm run bench [-- --size small|medium|large|xlarge] [--build store|api] [--build-connections N] [--model DIR] [--seconds N] [--connections N] [--repeat N] [--warmup N]
 *  [--only KEY,...] [--write-rate N] [--write-seconds N] [--fresh N] [--posture] [--compare FILE] [--cpu-prof DIR] [--keep]
 *  [--db postgres://USER@HOST:PORT/DB [--replicas N]]`
 *
 * Builds a model of the given size (in its own process) through the model services, or with `--build api` (the
 * xlarge size's default) through the built controller's Management API by `--build-connections` clients (16), the
 * figure reported being that provisioning's wall time (bench/model.ts, bench/provision.ts), or with `--model DIR`
 * reuses a data dir an earlier run kept (`--keep`; its bench-model.json, and whatever that run's writes left
 * in it; on PostgreSQL `--db` then names the database that run kept; the new-session scenario gets new fresh API
 * sessions made in the kept store first, bench/renew-sessions.ts); starts the built
 * controller and a bare Fastify server with the same TLS material and options (each in its own process), and
 * drives both with autocannon from this process over loopback. Every scenario: a warm-up, then the
 * controller's measured run, then right after it the bare server sending the controller's own response bytes
 * (bench/baseline-server.ts), `--repeat` times; the pair with the median CPU ratio (throughput ratio for authenticate) is
 * reported. Each run records req/s, p50/p99 and the CPU each server process spent per answered request
 * (/proc/<pid>/stat), and the load generator's own. See docs/policy-engine.md, "Benchmark", for the method.
 * A table is printed with the load targets checked (docs/policy-engine.md, "Targets"); the figures go to
 * bench/results/<size>-<time>.json and `--compare FILE` prints the changes against an earlier one.
 *
 * `--posture` then attaches an OS and an MFA posture check to a quarter of the service policies (bench/posture.ts)
 * and runs the session-create scenarios again, reported beside the figures without checks.
 *
 * `--db URL` runs everything on PostgreSQL instead of SQLite: the URL names the server and credentials (its own
 * database is only used to connect), the model is built into a new database created there for the run
 * (`edgectl_bench_<size>_<time>_<pid>`, dropped at exit unless `--keep`), and the controllers are started with
 * `--db`. The CPU PostgreSQL's backends spend for that database is read from /proc during each measured run
 * (bench/postgres.ts) and reported per request as a column of its own (`PG µs`; the server must be on this
 * machine), beside the controller's own, which is still what is set against the bare server. The provisioning
 * writes' WAL figures are then the database's own records in the server's log (pg_walinspect, PostgreSQL 15+), or
 * the server's WAL position (every database on it counted) where that extension is missing.
 *
 * `--replicas N` (with `--db`): N controllers on the one database, each with its own data dir and port, sharing
 * the PKI and token key the database holds (sealed under the bench's master key, bench/master-key.ts). Every load
 * scenario is measured against the first replica alone and right after against all N, the load generator
 * spreading its connections over them (CPU per request:
 * the replicas' CPU summed), then the bare server; the report sets the N-replica throughput against the
 * one-replica throughput (target: at least 95 %, on a 2-core machine where more replicas cannot gain). The
 * mixed run's writer and the policy/search writes go to the first replica, and what they change is read on the
 * last one (the policy visibility and search-after-write figures are then cross-replica). The provisioning writes
 * run against the first replica, then spread over all. Without `--db` the bench is the SQLite one, as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { attributesOf, ATTRS, DEFAULT_BUILD, SIZES } from './model.js';
import { send, type Target } from './load.js';
import { measureRun, type Req } from './cannon.js';
import { compareResults, medianPair, ratios, type Measured, type ScenarioResult } from './report.js';
import { summarise } from './stats.js';
import { attachPostureChecks, guardedPolicyNames, passPostureChecks, passPostureChecksOnReplica } from './posture.js';
import { ADMIN, spawnController } from './stack.js';
import { fromMetrics, measureWrites, walFileSize, walFromMetrics, writeKinds, type WriteResult } from './writes.js';
import { BackendCpu, createDatabase, databaseSizeMiB, databaseWal, dropDatabaseSync, walPosition } from './postgres.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    concurrency: { type: 'string' },
    warmup: { type: 'string', default: '1' },
    repeat: { type: 'string', default: '3' },
    only: { type: 'string' },
    'write-rate': { type: 'string', default: '10' },
    'write-seconds': { type: 'string', default: '3' },
    fresh: { type: 'string' },
    compare: { type: 'string' },
    'cpu-prof': { type: 'string' },
    keep: { type: 'boolean', default: false },
    posture: { type: 'boolean', default: false },
    db: { type: 'string' },
    replicas: { type: 'string', default: '1' },
    build: { type: 'string' },
    model: { type: 'string' },
    'build-connections': { type: 'string', default: '16' },
  },
});
const size = SIZES[args.size!];
if (!size) throw new Error(`unknown size ${args.size}; use ${Object.keys(SIZES).join(', ')}`);
const seconds = Number(args.seconds);
const connections = Number(args.concurrency ?? args.connections);
const warmupSeconds = Number(args.warmup);
const repeat = Number(args.repeat);
const writeRate = Number(args['write-rate']);
const writeSeconds = Number(args['write-seconds']);
const only = args.only ? new Set(args.only.split(',')) : undefined;
const store: 'sqlite' | 'postgres' = args.db ? 'postgres' : 'sqlite';
const replicas = Number(args.replicas);
/** How the model is built: in process through the model services, or through the Management API (bench/model.ts). */
const buildPath = args.build ?? DEFAULT_BUILD[args.size!] ?? 'store';
if (buildPath !== 'store' && buildPath !== 'api') throw new Error(`--build ${args.build}: store or api`);
const buildConnections = Number(args['build-connections']);
/**
 * The limits checked at each size: the xlarge model (ten times large) has its own (issue 25): built through the
 * Management API in ≤ 10 minutes, peak RSS < 1 GB, store < 2 GB.
 */
const limits =
  args.size === 'xlarge'
    ? { buildSeconds: 600, rssMiB: 1024, storeMiB: 2048 }
    : { buildSeconds: 120, rssMiB: 500, storeMiB: 1024 };
if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`--replicas ${args.replicas}: a whole number ≥ 1`);
if (replicas > 1 && !args.db) throw new Error('--replicas needs --db: replicas share one PostgreSQL database');
if (args.db && !/^postgres(ql)?:\/\//.test(args.db)) throw new Error('--db takes a postgres:// URL');
/** How the controller side is described in the report. */
const storeLabel = `${store}${args.db ? `, ${replicas} replica${replicas > 1 ? 's' : ''}` : ''}`;
// Enough fresh API sessions that no (API session, service) pair repeats at 3,000 new sessions a second
// (each API session yields one pair per service its identity may Dial, so this is generous).
// With --posture the new-session scenario runs twice, so the pool is twice as large; with replicas, each run is
// made against one replica and against all, so twice again.
const freshCount = Number(
  args.fresh ?? Math.ceil(3000 * (seconds + warmupSeconds) * repeat * (args.posture ? 2 : 1) * (replicas > 1 ? 2 : 1)),
);
/** The load users of the service list, search and login scenarios (cycled in turn). */
const LOGIN_USERS = 16;
/**
 * The identities of the session scenarios' realistic mix (each dialling the services it may use; at least 50,
 * docs/policy-engine.md, "Benchmark"): 100, so that the small model's (each may Dial ~5 of its 20 services)
 * make 400 pairs too. The first LOGIN_USERS of them are the other scenarios' load users.
 */
const MIX_USERS = Math.min(100, size.identities);
/** (identity, service) pairs of the mix, cycled: at least 400 distinct ones where the model allows. */
const MIX_PAIRS = 512;

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

/** Starts a process and resolves with the first stdout line matching `pick`. */
function startProcess(argv: string[], pick: (line: string) => string | undefined) {
  const child = spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise<{ child: ChildProcess; value: string }>((resolve, reject) => {
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

/**
 * `--model DIR`: a data dir an earlier run built and kept (`--keep`), measured again; never removed here. With
 * `--db URL` the URL names that run's kept database itself (printed at its end), likewise never dropped here.
 */
/** What this run creates is named apart from what an earlier run on the same kept model (`--model`) created. */
const runTag = args.model ? `-${Date.now().toString(36)}` : '';
const dataDir = args.model ? resolve(args.model) : mkdtempSync(join(tmpdir(), `edgectl-bench-${args.size}-`));
/** The data dirs of the replicas after the first (`--replicas`). */
const replicaDirs: string[] = [];
/** The run's own PostgreSQL database (`--db`). */
let database: { name: string; url: string } | undefined;
// A failed run (a throw anywhere below) must not leave servers, data dirs or a database behind.
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (!args.keep)
    for (const dir of [...(args.model ? [] : [dataDir]), ...replicaDirs]) rmSync(dir, { recursive: true, force: true });
  if (database && !args.keep && !args.model) dropDatabaseSync(args.db!, database.name);
});
// Nor an interrupted one (the exit handler above runs on process.exit, not on a signal's default action).
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));
if (args.db && args.model) {
  database = { name: decodeURIComponent(new URL(args.db).pathname.slice(1)), url: args.db };
} else if (args.db) {
  const at = new Date().toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
  const name = `edgectl_bench_${args.size}_${at}_${process.pid}`.toLowerCase();
  database = { name, url: await createDatabase(args.db, name) };
}
if (!args.model)
  console.log(
    `building the ${args.size} model in ${database ? `PostgreSQL database ${database.name} (PKI in ${dataDir})` : dataDir}` +
      (buildPath === 'api' ? ` through the Management API (${buildConnections} connections) …` : ' …'),
  );
// The build also leaves what it printed in the data dir (bench-model.json), which `--model` reads.
const model = JSON.parse(
  args.model
    ? readFileSync(join(dataDir, 'bench-model.json'), 'utf8')
    : await runScript([
        '--import',
        'tsx',
        'bench/build-model.ts',
        dataDir,
        args.size!,
        String(MIX_USERS),
        String(only && !only.has('new-sessions') ? 0 : freshCount),
        database ? database.url : '',
        buildPath,
        String(buildConnections),
      ]),
) as {
  users: { id: string; username: string; password: string }[];
  serviceIds: string[];
  fresh: { token: string; user: number }[];
  seconds: number;
  api?: {
    connections: number;
    seconds: number;
    kinds: { kind: string; creates: number; seconds: number }[];
    controllerPeakRssMiB: number;
  };
};
console.log(
  (args.model ? `the model kept in ${dataDir}, ` : '') +
    `model built in ${typeof model.seconds === 'number' ? model.seconds.toFixed(1) : '(unknown)'} s` +
    (model.api
      ? ` through the Management API, ${model.api.connections} connections: ` +
        model.api.kinds
          .map((k) => `${k.creates} ${k.kind} in ${k.seconds.toFixed(1)} s (${(k.creates / k.seconds).toFixed(0)}/s)`)
          .join(', ') +
        `; the controller's peak RSS ${model.api.controllerPeakRssMiB.toFixed(0)} MiB`
      : ''),
);

// A kept model's fresh API sessions were used by the run that kept it, or expired since (30 minutes unused):
// the new-session scenario gets new ones, made in the stopped controller's store. A model built here with
// `--only` leaving out new sessions holds none, and needs none.
if (args.model && (!only || only.has('new-sessions'))) {
  const made = await runScript([
    '--import',
    'tsx',
    'bench/renew-sessions.ts',
    dataDir,
    String(freshCount),
    database?.url ?? '',
  ]);
  model.fresh = (JSON.parse(readFileSync(join(dataDir, 'bench-model.json'), 'utf8')) as typeof model).fresh;
  console.log(`  ${made.trim()} new fresh API sessions made in the kept model`);
}

const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
const agent = new https.Agent({ keepAlive: true, ca });
const ports: number[] = [];
for (let i = 0; i < replicas; i++) ports.push(await freePort());
const profDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;

interface Controller {
  child: ChildProcess;
  pid: number;
  origin: string;
}

async function waitUp(child: ChildProcess, base: string, what: string): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const up = await send({ ca, base }, agent, { method: 'GET', path: '/version' }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return;
    if (waited > 60_000 || child.exitCode !== null) throw new Error(`${what} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts the controller, or with `--replicas` every replica: the first one on the model's data dir (on its first
 * start it creates the default admin), then the others, each on a data dir of its own; the PKI and token key are
 * the database's (docs/decisions.md, "Shared controller secrets").
 */
async function startControllers(opts: { profDir?: string; metrics?: boolean }, what: string): Promise<Controller[]> {
  const out: Controller[] = [];
  for (let i = 0; i < replicas; i++) {
    if (i > 0 && replicaDirs.length < i) {
      const dir = mkdtempSync(join(tmpdir(), `edgectl-bench-${args.size}-replica${i + 1}-`));
      replicaDirs.push(dir);
    }
    const child = spawnController(i === 0 ? dataDir : replicaDirs[i - 1]!, ports[i]!, opts.profDir, {
      ...(opts.metrics && { metrics: true }),
      ...(database && { db: database.url }),
    });
    children.push(child);
    const origin = `https://127.0.0.1:${ports[i]}`;
    await waitUp(child, origin, replicas > 1 ? `${what} (replica ${i + 1})` : what);
    out.push({ child, pid: child.pid!, origin });
  }
  return out;
}

const controllers = await startControllers({ profDir }, 'the controller');
const controllerOrigin = controllers[0]!.origin;
/** PostgreSQL's own CPU for the bench database, around each controller run. */
const backendCpu = database && new BackendCpu(database.name);
const bare = await startProcess(['--import', 'tsx', 'bench/baseline-server.ts', join(dataDir, 'pki')], (l) =>
  l.startsWith('https://') ? l.trim() : undefined,
);
children.push(bare.child);
const origin: Target = { ca, base: controllerOrigin };
/** Where a change made through `origin` is read back: the last replica (the same controller without replicas). */
const readBack: Target = { ca, base: controllers.at(-1)!.origin };
const bareTarget: Target = { ca, base: bare.value };
const CLIENT = '/edge/client/v1';
const MGMT = '/edge/management/v1';

/** One request through the https agent (setup, capture and the mixed run's writes, not the measured load). */
async function call(target: Target, r: Req): Promise<{ status: number; body: string }> {
  return send(target, agent, {
    method: r.method,
    path: r.path,
    headers: r.headers,
    body: r.body === undefined ? undefined : JSON.parse(r.body),
  });
}

async function login(username: string, password: string, api = CLIENT): Promise<string> {
  const res = await call(origin, {
    method: 'POST',
    path: `${api}/authenticate?method=password`,
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${res.body}`);
  return JSON.parse(res.body).data.token;
}

type Scenario = {
  key: string;
  name: string;
  ok?: number[];
  /** The bare server's route: the same bytes, or one Argon2id verification and the same bytes. */
  bare?: 'same' | 'argon2';
  /** Work running alongside the controller's runs (the mixed run's writer); resolves to its figures. */
  alongside?: () => () => Promise<Record<string, number>>;
} & (
  | {
      /**
       * A fixed list cycled through by every connection, or a new request each time (bench/cannon.ts); the
       * bare server sends the answer to the first request every time.
       */
      requests: Req[] | ((n: number) => Req);
      each?: undefined;
    }
  | {
      /**
       * Distinct requests (a mix) the load cycles through, the n-th request of the run being `each[n % length]`
       * (so the connections do not move in step); the bare server answers each with the controller's own answer
       * to it, so both send the same bytes request for request.
       */
      each: Req[];
      requests?: undefined;
    }
);

type Run = { edgectl: Measured; bare: Measured; oneReplica?: Measured };
const results: Record<string, ScenarioResult & { runs: Run[] }> = {};

/** The controller side of a measured run: every replica (the connections spread), PostgreSQL's CPU alongside. */
const cluster = (cs: Controller[]) => ({
  origin: cs[0]!.origin,
  pid: cs[0]!.pid,
  also: cs.slice(1).map((c) => ({ origin: c.origin, pid: c.pid })),
  ...(backendCpu && { database: () => backendCpu.start() }),
});

async function measure(s: Scenario): Promise<void> {
  // A scenario's run with posture checks is selected by the same key.
  if (only && !only.has(s.key.replace(/-posture$/, ''))) return;
  // The controller's own answers, for the bare server to send (their size is what the comparison is about):
  // to the first request, or to each of a mix, primed under keys of their own.
  const samples = s.each ?? [Array.isArray(s.requests) ? s.requests[0]! : s.requests(-1)];
  const bareRequests: Req[] = [];
  let totalBytes = 0;
  for (const [i, sample] of samples.entries()) {
    const res = await call(origin, sample);
    if (!(s.ok ?? [200]).includes(res.status)) throw new Error(`${s.name}: ${res.status} ${res.body}`);
    const key = s.each ? `${s.key}.${i}` : s.key;
    const primed = await call(bareTarget, {
      method: 'POST',
      path: '/__prime',
      body: JSON.stringify({ key, status: res.status, body: res.body }),
    });
    if (primed.status !== 200) throw new Error(`priming the bare server: ${primed.status}`);
    totalBytes += Buffer.byteLength(res.body);
    bareRequests.push({ ...sample, path: `/${s.bare ?? 'same'}/${key}` });
  }
  // With replicas, every other one answers each sample once too, before anything is measured: the one-replica
  // run warms only the first, so the others would otherwise fill their caches (the access engine's identities and
  // policy sets, the sessions made through the first) inside the measured all-replica run, a cost a replica
  // pays once in its life (on the large model most of a run's time on the second replica, the first time).
  for (const c of controllers.slice(1))
    for (const sample of samples) {
      const res = await call({ ca, base: c.origin }, sample);
      if (!(s.ok ?? [200]).includes(res.status)) throw new Error(`${s.name} on ${c.origin}: ${res.status} ${res.body}`);
    }
  // A mix's figure is its answers' mean size.
  const bytes = Math.round(totalBytes / samples.length);
  const each = s.each;
  const requests = each ? (n: number) => each[n % each.length]! : s.requests!;
  const bareLoad = each ? (n: number) => bareRequests[n % bareRequests.length]! : bareRequests;
  const runs: ScenarioResult['extra'][] = [];
  const pairs: Run[] = [];
  for (let i = 0; i < repeat; i++) {
    // With replicas: the first one alone, then all of them, under the same conditions.
    let oneReplica: Measured | undefined;
    if (replicas > 1) {
      const stopOne = s.alongside?.();
      oneReplica = await measureRun({
        ...cluster(controllers.slice(0, 1)),
        connections,
        seconds,
        warmupSeconds,
        requests,
        ok: s.ok,
        bytes,
      });
      await stopOne?.();
    }
    const stop = s.alongside?.();
    const edgectl = await measureRun({
      ...cluster(controllers),
      connections,
      seconds,
      warmupSeconds,
      requests,
      ok: s.ok,
      bytes,
    });
    runs.push(await stop?.());
    const b = await measureRun({
      origin: bare.value,
      pid: bare.child.pid!,
      connections,
      seconds,
      warmupSeconds,
      requests: bareLoad,
      ok: s.ok,
      bytes,
    });
    pairs.push({ edgectl, bare: b, ...(oneReplica && { oneReplica }) });
    process.stdout.write(
      `  ${s.name} #${i + 1}: ${edgectl.throughput.toFixed(0)} req/s` +
        (oneReplica ? ` (1 replica ${oneReplica.throughput.toFixed(0)} req/s)` : '') +
        ` vs bare ${b.throughput.toFixed(0)} req/s\n`,
    );
  }
  const by = s.bare === 'argon2' ? 'throughput' : 'cpu';
  const pick = medianPair(pairs, by);
  const extra = runs[pairs.indexOf(pick)];
  // The one-replica figure: its own median pair with the same bare runs.
  const one =
    replicas > 1
      ? medianPair(
          pairs.map((p) => ({ edgectl: p.oneReplica!, bare: p.bare })),
          by,
        ).edgectl
      : undefined;
  results[s.name] = {
    ...pick,
    ...ratios(pick.edgectl, pick.bare),
    ...(extra ? { extra } : {}),
    ...(one && { oneReplica: one, replicaThroughputRatio: pick.edgectl.throughput / one.throughput }),
    runs: pairs,
  };
}

/** Every mix identity's token; the first LOGIN_USERS are the other scenarios' load users (`tokens`). */
const mixTokens = await Promise.all(model.users.map((u) => login(u.username, u.password)));
const tokens = mixTokens.slice(0, LOGIN_USERS);
const adminToken = await login(ADMIN.username, ADMIN.password, MGMT);
/** The same request as each load user in turn (each identity has its own access view). */
const asEachUser = (make: (headers: Record<string, string>) => Req) => tokens.map((t) => make({ 'zt-session': t }));
const asAdmin = { 'zt-session': adminToken };

await measure({
  key: 'authenticate',
  name: 'authenticate (password)',
  bare: 'argon2',
  requests: model.users.slice(0, LOGIN_USERS).map((u) => ({
    method: 'POST',
    path: `${CLIENT}/authenticate?method=password`,
    body: JSON.stringify({ username: u.username, password: u.password }),
  })),
});
await measure({
  key: 'service-list',
  name: 'client service list (default page)',
  requests: asEachUser((headers) => ({ method: 'GET', path: `${CLIENT}/services`, headers })),
});
await measure({
  key: 'service-list-500',
  name: 'client service list (limit 500)',
  requests: asEachUser((headers) => ({ method: 'GET', path: `${CLIENT}/services?limit=500`, headers })),
});
// The services each mix identity may Dial and Bind (its client service list, every page).
const SESSION_KEYS = ['session-dial', 'session-bind', 'session-dial-mix', 'session-bind-mix', 'new-sessions'];
const usable: Record<'Dial' | 'Bind', string[][]> = { Dial: [], Bind: [] };
if (!only || SESSION_KEYS.some((k) => only.has(k))) {
  for (const token of mixTokens) {
    const may = { Dial: [] as string[], Bind: [] as string[] };
    for (let offset = 0; ; offset += 500) {
      const page = JSON.parse(
        (
          await call(origin, {
            method: 'GET',
            path: `${CLIENT}/services?limit=500&offset=${offset}`,
            headers: { 'zt-session': token },
          })
        ).body,
      );
      for (const svc of page.data)
        for (const type of ['Dial', 'Bind'] as const) if (svc.permissions.includes(type)) may[type].push(svc.id);
      if (offset + 500 >= page.meta.pagination.totalCount) break;
    }
    usable.Dial.push(may.Dial);
    usable.Bind.push(may.Bind);
  }
}
const dialable = usable.Dial;

/**
 * The realistic mix of a session type: every mix identity creating sessions for the services it may use, up to
 * MIX_PAIRS distinct (identity, service) pairs, taken in turn from each identity (consecutive requests come from
 * different identities) and spread over each one's services. Cycled by the load: after the first round every
 * answer is the identity's existing session for that service, as for the one-service repeat.
 */
function mixOf(type: 'Dial' | 'Bind'): { pairs: { token: string; serviceId: string }[]; identities: number } {
  // Each identity's services in a spread order (a low-discrepancy sequence over its list), so a quota of a few
  // pairs per identity samples its whole list, not its first page.
  const spread = usable[type].map((list) =>
    list
      .map((id, j) => ({ id, at: (j * 0.6180339887) % 1 }))
      .sort((x, y) => x.at - y.at)
      .map((x) => x.id),
  );
  const pairs: { token: string; serviceId: string }[] = [];
  for (let k = 0; pairs.length < MIX_PAIRS; k++) {
    let took = false;
    for (let u = 0; u < spread.length && pairs.length < MIX_PAIRS; u++) {
      const serviceId = spread[u]![k];
      if (serviceId === undefined) continue;
      pairs.push({ token: mixTokens[u]!, serviceId });
      took = true;
    }
    if (!took) break;
  }
  return { pairs, identities: spread.filter((l) => l.length > 0).length };
}

async function sessionScenarios(posture: string): Promise<void> {
  for (const type of ['Dial', 'Bind'] as const) {
    // The headline: the realistic mix (issue: at least 50 identities and 400 distinct pairs).
    const mix = mixOf(type);
    if (mix.pairs.length === 0) continue;
    if (mix.identities < 50 || mix.pairs.length < 400)
      console.log(
        `  ! session create (${type}, mix): only ${mix.identities} identities and ${mix.pairs.length} pairs on this model`,
      );
    await measure({
      key: `session-${type.toLowerCase()}-mix${posture ? '-posture' : ''}`,
      name: `session create (${type}, mix)${posture}`,
      ok: [201],
      each: mix.pairs.map((p) => ({
        method: 'POST',
        path: `${CLIENT}/sessions`,
        headers: { 'zt-session': p.token },
        body: JSON.stringify({ serviceId: p.serviceId, type }),
      })),
      alongside: () => async () => ({ identities: mix.identities, pairs: mix.pairs.length }),
    });
  }
  // The friendliest case for the answer cache, kept as an extra line: every load user, one service.
  for (const [type, serviceId] of [
    ['Dial', model.serviceIds[0]!],
    ['Bind', model.serviceIds[1] ?? model.serviceIds[0]!],
  ] as const) {
    await measure({
      key: `session-${type.toLowerCase()}${posture ? '-posture' : ''}`,
      name: `session create (${type}, repeat)${posture}`,
      ok: [201],
      requests: asEachUser((headers) => ({
        method: 'POST',
        path: `${CLIENT}/sessions`,
        headers,
        body: JSON.stringify({ serviceId, type }),
      })),
    });
  }
}
await sessionScenarios('');

// New sessions: a session is keyed by (API session, service, type), so each request takes the next pair of
// a fresh API session (made by the model build for every mix identity in turn, no login) and a service its
// identity may Dial, walking every service of one API session before the next. A pair is never used twice
// unless the pool runs out (reported as `pairsReused`).
let freshAt = 0;
let serviceAt = 0;
let pairsReused = 0;
function nextPair(): { token: string; serviceId: string } {
  const f = model.fresh[freshAt]!;
  const list = dialable[f.user]!;
  const pair = { token: f.token, serviceId: list[serviceAt]! };
  if (++serviceAt >= list.length) {
    serviceAt = 0;
    if (++freshAt >= model.fresh.length) freshAt = 0;
  }
  if (freshAt === 0 && serviceAt === 0) pairsReused++;
  return pair;
}
await measure({
  key: 'new-sessions',
  name: 'session create (new session each request)',
  ok: [201],
  requests: () => {
    const p = nextPair();
    return {
      method: 'POST',
      path: `${CLIENT}/sessions`,
      headers: { 'zt-session': p.token },
      body: JSON.stringify({ serviceId: p.serviceId, type: 'Dial' }),
    };
  },
  alongside: () => async () => ({ pairsReused }),
});

const identitySearch: Req = {
  method: 'GET',
  path: `${MGMT}/identities?filter=${encodeURIComponent('name contains "id-0" sort by name desc limit 100')}`,
  headers: asAdmin,
};
await measure({ key: 'identity-search', name: 'management identity search', requests: [identitySearch] });

// A repeated listing is answered from its kept page until the next write (docs/policy-engine.md, "Kept list
// pages"); the render itself is measured here: the same search right after a write (a tag on a service), one
// request at a time, so each answer is rendered anew and its latency is the render's alone. With replicas the
// write goes to the first and the search to the last, which learns of the write from the database first.
let searchAfterWrite: { count: number; p50: number; p99: number } | undefined;
if (!only || only.has('identity-search')) {
  const latencies: number[] = [];
  for (let i = 0; i < 60; i++) {
    const w = await call(origin, {
      method: 'PATCH',
      path: `${MGMT}/services/${model.serviceIds[0]}`,
      headers: asAdmin,
      body: JSON.stringify({ tags: { benchWrite: String(i) } }),
    });
    if (w.status !== 200) throw new Error(`service patch: ${w.status} ${w.body}`);
    const t0 = performance.now();
    const res = await call(readBack, identitySearch);
    if (res.status !== 200) throw new Error(`identity search: ${res.status}`);
    if (i >= 10) latencies.push(performance.now() - t0);
  }
  const st = summarise(latencies, 0, 1);
  searchAfterWrite = { count: st.count, p50: st.p50, p99: st.p99 };
}

// Mixed: the service list read by every load connection while one more connection writes at a fixed rate,
// alternating a new service and a new Dial policy granting it to an attribute's identities (each write
// changes what some readers may see). Read latency is the measured figure; the writes' own are reported.
let written = 0;
async function write(): Promise<boolean> {
  const i = written++;
  const attr = ATTRS[i % ATTRS.length]!;
  const r =
    i % 2 === 0
      ? await call(origin, {
          method: 'POST',
          path: `${MGMT}/services`,
          headers: asAdmin,
          body: JSON.stringify({
            name: `bench-mixed-svc${runTag}-${i}`,
            encryptionRequired: true,
            roleAttributes: attributesOf(i),
          }),
        })
      : await call(origin, {
          method: 'POST',
          path: `${MGMT}/service-policies`,
          headers: asAdmin,
          body: JSON.stringify({
            name: `bench-mixed-sp${runTag}-${i}`,
            type: 'Dial',
            semantic: 'AnyOf',
            identityRoles: [`#${attr}`],
            serviceRoles: [`#${ATTRS[(i + 3) % ATTRS.length]}`],
          }),
        });
  return r.status === 201;
}
await measure({
  key: 'mixed',
  name: `mixed: service list while writing ${writeRate}/s`,
  requests: asEachUser((headers) => ({ method: 'GET', path: `${CLIENT}/services`, headers })),
  alongside: () => {
    const latencies: number[] = [];
    let failed = 0;
    let running = true;
    const loop = (async () => {
      const interval = 1000 / writeRate;
      for (let next = performance.now(); running;) {
        const t0 = performance.now();
        if ((await write().catch(() => false)) === false) failed++;
        latencies.push(performance.now() - t0);
        // A fixed rate: a slow write delays the next one, it does not queue more behind it.
        next = Math.max(next + interval, performance.now());
        await new Promise((r) => setTimeout(r, next - performance.now()));
      }
    })();
    return async () => {
      running = false;
      await loop;
      const s = summarise(latencies, failed, 1);
      return { writes: s.count, writeErrors: failed, writeP50: s.p50, writeP99: s.p99 };
    };
  },
});

// Policy changes touching #all: time from the create request until an affected identity sees the service (with
// replicas: created through the first, seen on the last).
async function visibleAfter(policy: Record<string, unknown>, serviceId: string, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await call(origin, {
    method: 'POST',
    path: `${MGMT}/service-policies`,
    headers: asAdmin,
    body: JSON.stringify(policy),
  });
  if (res.status !== 201) throw new Error(`policy create: ${res.status} ${res.body}`);
  for (;;) {
    const list = await call(readBack, {
      method: 'GET',
      path: `${CLIENT}/services?filter=${encodeURIComponent(`id = "${serviceId}"`)}`,
      headers: { 'zt-session': token },
    });
    if (list.status === 200 && JSON.parse(list.body).data.length === 1) return performance.now() - t0;
    if (performance.now() - t0 > 10_000) return NaN;
  }
}
async function adminCreate(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(origin, { method: 'POST', path: MGMT + path, headers: asAdmin, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`create ${path}: ${res.status} ${res.body}`);
  return JSON.parse(res.body).data.id;
}
// A new service no policy grants yet, then a policy giving it to #all identities (seen by a load client).
const newService = await adminCreate('/services', { name: `bench-new-service${runTag}`, encryptionRequired: true });
const policyAllIdentities = await visibleAfter(
  {
    name: `bench-one-service-all-identities${runTag}`,
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    serviceRoles: [`@${newService}`],
  },
  newService,
  tokens[0]!,
);
// A new identity with no attributes (it sees nothing), then a policy giving it #all services.
const newIdentity = await adminCreate('/identities', {
  name: `bench-new-identity${runTag}`,
  type: 'User',
  isAdmin: false,
});
await adminCreate('/authenticators', {
  identityId: newIdentity,
  method: 'updb',
  username: `bench-new-user${runTag}`,
  password: model.users[0]!.password,
});
const newToken = await login(`bench-new-user${runTag}`, model.users[0]!.password);
const someService = model.serviceIds[Math.floor(model.serviceIds.length / 2)]!;
const policyAllServices = await visibleAfter(
  {
    name: `bench-all-services-one-identity${runTag}`,
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${newIdentity}`],
    serviceRoles: ['#all'],
  },
  someService,
  newToken,
);

// With replicas: how soon a change written through the first replica is answered by the last one. A service
// one load client can see is renamed 100 times through the first replica; after each answer the client asks the
// last replica for that service until it shows the new name. The first ask already should (each request reads
// the database's change counters first: docs/design.md, "Several controllers"); `stale` counts the asks that
// did not. Target: p99 ≤ 100 ms, max ≤ 1 s, from the write's request to the answer showing it.
let convergence: { count: number; p50: number; p99: number; max: number; stale: number } | undefined;
if (replicas > 1) {
  const seen = await call(readBack, {
    method: 'GET',
    path: `${CLIENT}/services?limit=1`,
    headers: { 'zt-session': tokens[0]! },
  });
  const serviceId = (JSON.parse(seen.body).data as { id: string }[])[0]?.id;
  if (serviceId) {
    const latencies: number[] = [];
    let stale = 0;
    for (let i = 0; i < 100; i++) {
      const name = `bench-converge-${i}-${process.pid}`;
      const t0 = performance.now();
      const w = await call(origin, {
        method: 'PATCH',
        path: `${MGMT}/services/${serviceId}`,
        headers: asAdmin,
        body: JSON.stringify({ name }),
      });
      if (w.status !== 200) throw new Error(`service rename: ${w.status} ${w.body}`);
      for (let ask = 0; ; ask++) {
        const list = await call(readBack, {
          method: 'GET',
          path: `${CLIENT}/services?filter=${encodeURIComponent(`id = "${serviceId}"`)}`,
          headers: { 'zt-session': tokens[0]! },
        });
        if (list.status === 200 && (JSON.parse(list.body).data as { name: string }[])[0]?.name === name) break;
        if (ask === 0) stale++;
        if (performance.now() - t0 > 10_000) break;
      }
      latencies.push(performance.now() - t0);
    }
    const st = summarise(latencies, 0, 1);
    convergence = { count: st.count, p50: st.p50, p99: st.p99, max: Math.max(...latencies), stale };
  }
}

// --posture: the session-create scenarios again with an OS and an MFA check on a quarter of the policies
// (bench/posture.ts). The load clients pass both; the model's fresh API sessions report the OS through their
// identity but never passed MFA, so their checked policies fail and only services another policy grants
// them are created (found by one probe per user; the refused ones make a scenario of their own).
const WITH_POSTURE = ' with posture checks';
/** [with checks, without] scenario names, for the side-by-side report. */
const beside: [string, string][] = [];
let posturePolicies = 0;
if (args.posture) {
  const adminCall = (r: Req) => call(origin, r);
  const attached = await attachPostureChecks(adminCall, MGMT, asAdmin, guardedPolicyNames(size.servicePolicies));
  posturePolicies = attached.policies;
  for (const t of mixTokens) {
    let mfa = await passPostureChecks(adminCall, CLIENT, t, attached.osCheckId);
    for (const c of controllers.slice(1))
      mfa = await passPostureChecksOnReplica(
        (r) => call({ ca, base: c.origin }, r),
        CLIENT,
        t,
        attached.osCheckId,
        mfa,
      );
  }
  await sessionScenarios(WITH_POSTURE);
  beside.push(
    [`session create (Dial, mix)${WITH_POSTURE}`, 'session create (Dial, mix)'],
    [`session create (Bind, mix)${WITH_POSTURE}`, 'session create (Bind, mix)'],
    [`session create (Dial, repeat)${WITH_POSTURE}`, 'session create (Dial, repeat)'],
    [`session create (Bind, repeat)${WITH_POSTURE}`, 'session create (Bind, repeat)'],
  );
  if (dialable.length > 0) {
    const probeAt = new Set<number>();
    const probes = await Promise.all(
      mixTokens.map(async (_t, u) => {
        let k = model.fresh.length - 1;
        while (k >= 0 && model.fresh[k]!.user !== u) k--;
        const passable: string[] = [];
        const refused: string[] = [];
        if (k < 0) return { token: '', passable, refused };
        probeAt.add(k);
        const token = model.fresh[k]!.token;
        for (const serviceId of dialable[u]!) {
          const r = await call(origin, {
            method: 'POST',
            path: `${CLIENT}/sessions`,
            headers: { 'zt-session': token },
            body: JSON.stringify({ serviceId, type: 'Dial' }),
          });
          if (r.status === 201) passable.push(serviceId);
          else if (r.status === 409) refused.push(serviceId);
          else throw new Error(`probe session create: ${r.status} ${r.body}`);
        }
        return { token, passable, refused };
      }),
    );
    // Fresh API sessions after those the first run used, skipping the probes'.
    let at = freshAt + 1;
    let svcAt = 0;
    let reused = 0;
    const nextPassable = () => {
      for (let tries = 0; ; tries++) {
        if (tries > 2 * model.fresh.length) throw new Error('no fresh API session may create a session');
        if (at >= model.fresh.length) {
          at = 0;
          reused++;
        }
        const f = model.fresh[at]!;
        const list = probes[f.user]!.passable;
        if (probeAt.has(at) || svcAt >= list.length) {
          at++;
          svcAt = 0;
          continue;
        }
        return { token: f.token, serviceId: list[svcAt++]! };
      }
    };
    const name = `session create (new session each request)${WITH_POSTURE}, MFA not passed`;
    await measure({
      key: 'new-sessions-posture',
      name,
      ok: [201],
      requests: () => {
        const p = nextPassable();
        return {
          method: 'POST',
          path: `${CLIENT}/sessions`,
          headers: { 'zt-session': p.token },
          body: JSON.stringify({ serviceId: p.serviceId, type: 'Dial' }),
        };
      },
      alongside: () => async () => ({ pairsReused: reused }),
    });
    beside.push([name, 'session create (new session each request)']);
    const refusals = probes.flatMap((p) =>
      p.refused.length > 0 ? [{ token: p.token, serviceId: p.refused[0]! }] : [],
    );
    if (refusals.length > 0)
      await measure({
        key: 'session-refused-posture',
        name: 'session create refused by posture (409, repeat)',
        ok: [409],
        requests: refusals.map((p) => ({
          method: 'POST',
          path: `${CLIENT}/sessions`,
          headers: { 'zt-session': p.token },
          body: JSON.stringify({ serviceId: p.serviceId, type: 'Dial' }),
        })),
      });
  }
}

const replicaRss = controllers.map((c) => peakRssMiB(c.pid));
const rss = Math.max(...replicaRss);
const exited = (c: ChildProcess) => new Promise((r) => (c.exitCode !== null ? r(c.exitCode) : c.on('exit', r)));
for (const c of controllers) c.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
await Promise.all(controllers.map((c) => exited(c.child)));
const dataMiB = database ? await databaseSizeMiB(database.url) : dirSize(dataDir) / 1024 / 1024;

// Provisioning writes (bench/writes.ts), on the same model, by a controller started again with /metrics on
// (with replicas: against the first alone, then spread over all).
const writes: WriteResult[] = [];
let pgWalUsed = false;
if (!only || only.has('writes')) {
  const writers = await startControllers({ metrics: true }, 'the controller (again)');
  const admin = { 'zt-session': await login(ADMIN.username, ADMIN.password, MGMT) };
  const pgWal = database && (await databaseWal(database.url).catch(() => undefined));
  pgWalUsed = pgWal !== undefined;
  const metricsOf = async () => (await call(origin, { method: 'GET', path: '/metrics' })).body;
  for (const c of [connections, 1]) {
    for (const over of replicas > 1 ? [writers.slice(0, 1), writers] : [writers]) {
      let next = 0;
      const many = over.length > 1;
      writes.push(
        ...(
          await measureWrites({
            kinds: writeKinds(attributesOf, `bench-writes${runTag}-${c}${replicas > 1 && !many ? '-1r' : ''}`),
            connections: c,
            seconds: writeSeconds,
            warmup: warmupSeconds,
            post: async (path, body) =>
              (
                await call(
                  { ca, base: over[next++ % over.length]!.origin },
                  { method: 'POST', path: MGMT + path, headers: admin, body: JSON.stringify(body) },
                )
              ).status,
            // PostgreSQL's log is the server's, with no file of its own to watch here: the database's own records
            // in it (pg_walinspect), or else the server's position (every database on it counted).
            ...(database
              ? { walWritten: pgWal ? () => pgWal.written() : () => walPosition(database!.url) }
              : {
                  walWritten: walFromMetrics(metricsOf),
                  commits: fromMetrics(metricsOf, 'edgectl_store_commits_total'),
                  walSize: walFileSize(join(dataDir, 'edgectl.db-wal')),
                }),
          })
        ).map((w) => (replicas > 1 ? { ...w, replicas: over.length } : w)),
      );
    }
  }
  await pgWal?.close();
  for (const w of writers) w.child.kill('SIGTERM');
  await Promise.all(writers.map((w) => exited(w.child)));
}

const r0 = (name: string) => results[name];
const fmt = (n: number | undefined, d = 1) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '—');
console.log(
  `\nedgectl benchmark — size ${args.size}, store ${storeLabel}, ${connections} connections (autocannon), ${seconds} s per run after ${warmupSeconds} s warm-up, median of ${repeat}\n`,
);
// PostgreSQL's own CPU per request gets a column (the controller's CPU column is its processes' alone).
const pgColumn = store === 'postgres';
console.log(
  'scenario / server'.padEnd(46) +
    'req/s'.padStart(9) +
    'p50 ms'.padStart(8) +
    'p99 ms'.padStart(8) +
    'CPU µs'.padStart(9) +
    'cores'.padStart(7) +
    (pgColumn ? 'PG µs'.padStart(8) : '') +
    'load µs'.padStart(9) +
    'errors'.padStart(8),
);
const row = (label: string, m: Measured) =>
  console.log(
    label.padEnd(46) +
      fmt(m.throughput, 0).padStart(9) +
      fmt(m.p50, 2).padStart(8) +
      fmt(m.p99, 2).padStart(8) +
      fmt(m.serverCpuUs, 0).padStart(9) +
      fmt(m.serverCores, 2).padStart(7) +
      (pgColumn ? fmt(m.databaseCpuUs, 0).padStart(8) : '') +
      fmt(m.loadCpuUs, 0).padStart(9) +
      String(m.errors).padStart(8),
  );
const replicasWord = (n: number) => `${n} replica${n > 1 ? 's' : ''}`;
for (const [name, r] of Object.entries(results)) {
  console.log(`${name} (${r.edgectl.bytes} bytes)`);
  if (r.oneReplica) row(`  edgectl, ${replicasWord(1)}`, r.oneReplica);
  row(`  edgectl${store === 'postgres' ? `, ${replicasWord(replicas)}` : ''}`, r.edgectl);
  row(`  bare server, same bytes${name.startsWith('authenticate') ? ' + Argon2id' : ''}`, r.bare);
  console.log(
    `  → throughput ${fmt(r.throughputRatio * 100, 0)} % of bare; CPU per request ${fmt(r.cpuRatio, 2)}× bare` +
      (r.oneReplica
        ? `; ${replicasWord(replicas)}: ${fmt(r.replicaThroughputRatio! * 100, 0)} % of one's throughput, ` +
          `CPU per request ${fmt(r.edgectl.serverCpuUs / r.oneReplica.serverCpuUs, 2)}× one's`
        : '') +
      (r.extra
        ? `; ${Object.entries(r.extra)
            .map(([k, v]) => `${k} ${fmt(v, 1)}`)
            .join(', ')}`
        : ''),
  );
  for (const [who, m] of [
    ['edgectl', r.edgectl],
    ...(r.oneReplica ? [['edgectl, one replica', r.oneReplica] as const] : []),
    ['bare', r.bare],
  ] as const)
    if (m.failures) console.log(`  ! ${who} failures: ${JSON.stringify(m.failures)}`);
  if (r.edgectl.loadCores > r.edgectl.serverCores)
    console.log('  ! the load generator used more CPU than the controller: it may be the bottleneck');
}
if (args.posture) {
  console.log(`\nsession create with posture checks (OS + MFA on ${posturePolicies} service policies) beside without:`);
  for (const [withName, withoutName] of beside) {
    const w = r0(withName)?.edgectl;
    const wo = r0(withoutName)?.edgectl;
    if (!w || !wo) continue;
    console.log(
      `  ${withName}: ${fmt(w.throughput, 0)} req/s (${fmt((w.throughput / wo.throughput) * 100, 0)} % of ${fmt(wo.throughput, 0)}), ` +
        `p50 ${fmt(w.p50, 2)} / ${fmt(wo.p50, 2)} ms, p99 ${fmt(w.p99, 2)} / ${fmt(wo.p99, 2)} ms, CPU ${fmt(w.serverCpuUs, 0)} / ${fmt(wo.serverCpuUs, 0)} µs`,
    );
  }
}
if (replicas > 1) {
  console.log(
    `\n${replicasWord(replicas)} against one (target: ≥ 95 % of one's throughput; on 2 cores more replicas cannot gain, they must not cost):`,
  );
  for (const [name, r] of Object.entries(results))
    console.log(
      `  ${name.padEnd(60)} ${fmt(r.edgectl.throughput, 0).padStart(7)} / ${fmt(r.oneReplica!.throughput, 0).padStart(7)} req/s = ${fmt(r.replicaThroughputRatio! * 100, 0).padStart(3)} %`,
    );
}
console.log(
  `\npolicy #all identities → visible in ${fmt(policyAllIdentities, 0)} ms; policy #all services → visible in ${fmt(policyAllServices, 0)} ms`,
);
if (convergence)
  console.log(
    `a change through the first replica, answered by the last (${convergence.count} renames): p50 ${fmt(convergence.p50, 1)} ms, ` +
      `p99 ${fmt(convergence.p99, 1)} ms, max ${fmt(convergence.max, 1)} ms; first asks answered stale: ${convergence.stale}`,
  );
if (searchAfterWrite)
  console.log(
    `identity search right after a write (rendered anew, one at a time): p50 ${fmt(searchAfterWrite.p50, 2)} ms, p99 ${fmt(searchAfterWrite.p99, 2)} ms`,
  );
if (writes.length > 0) {
  console.log(
    `\nprovisioning writes (${writeSeconds} s per kind and connection count)` +
      (store === 'postgres'
        ? `; WAL: ${pgWalUsed ? "the database's own records in the server's log (pg_walinspect)" : "the PostgreSQL server's, every database on it counted"}:`
        : ':'),
  );
  console.log(
    'kind'.padEnd(16) +
      (replicas > 1 ? 'replicas'.padStart(9) : '') +
      'conns'.padStart(6) +
      'creates/s'.padStart(11) +
      'WAL KB/create'.padStart(15) +
      'WAL peak MiB'.padStart(14) +
      (store === 'sqlite' ? 'per commit'.padStart(12) : '') +
      'errors'.padStart(8),
  );
  for (const w of writes)
    console.log(
      w.kind.padEnd(16) +
        (replicas > 1 ? String(w.replicas).padStart(9) : '') +
        String(w.connections).padStart(6) +
        fmt(w.perSecond, 0).padStart(11) +
        fmt(w.walBytesPerCreate / 1024, 1).padStart(15) +
        fmt(w.walPeakMiB, 1).padStart(14) +
        (store === 'sqlite' ? fmt(w.perCommit, 1).padStart(12) : '') +
        String(w.errors).padStart(8),
    );
}
console.log(
  `model build ${fmt(model.seconds ?? undefined)} s; ${database ? 'database' : 'data dir'} ${fmt(dataMiB)} MiB; ` +
    `controller peak RSS ${replicaRss.map((m) => fmt(m)).join(' / ')} MiB`,
);

// The load targets (stated for the large model; checked for every size, for the scenarios that ran).
const r = (name: string) => results[name];
const hot = (name: string) => {
  const x = r(name);
  return x ? x.throughputRatio >= 0.4 && x.cpuRatio <= 2.5 && x.edgectl.p99 < 20 : undefined;
};
const maybe = (name: string, ok: (x: ScenarioResult) => boolean) => (r(name) ? ok(r(name)!) : undefined);
const targets: [string, boolean | undefined][] = [
  [
    'service list (default page): ≥ 40 % of bare throughput, ≤ 2.5× its CPU, p99 < 20 ms',
    hot('client service list (default page)'),
  ],
  [
    'session create (Dial, mix): ≥ 40 % of bare throughput, ≤ 2.5× its CPU, p99 < 20 ms',
    hot('session create (Dial, mix)'),
  ],
  ['new sessions ≥ 2,000/s', maybe('session create (new session each request)', (x) => x.edgectl.throughput >= 2000)],
  ['identity search p99 < 50 ms', maybe('management identity search', (x) => x.edgectl.p99 < 50)],
  ['authenticate ≥ 90 % of bare Argon2id', maybe('authenticate (password)', (x) => x.throughputRatio >= 0.9)],
  ['service list limit 500 p99 < 100 ms', maybe('client service list (limit 500)', (x) => x.edgectl.p99 < 100)],
  ['#all policies visible within 1 s', policyAllIdentities < 1000 && policyAllServices < 1000],
  ...(convergence
    ? ([
        [
          'a change on one replica answered by another: p99 ≤ 100 ms, max ≤ 1 s, no stale answer',
          convergence.p99 <= 100 && convergence.max <= 1000 && convergence.stale === 0,
        ],
      ] as [string, boolean | undefined][])
    : []),
  [`${database ? 'database' : 'data dir'} < ${limits.storeMiB / 1024} GB`, dataMiB < limits.storeMiB],
  [
    `model built in < ${limits.buildSeconds / 60} min${buildPath === 'api' ? ' through the Management API' : ''}`,
    // A kept model (`--model`) may not know its build time (null).
    typeof model.seconds === 'number' ? model.seconds < limits.buildSeconds : undefined,
  ],
  [`controller peak RSS < ${limits.rssMiB} MB`, rss < limits.rssMiB],
  // SQLite's own write-ahead log (PostgreSQL's is the server's, shared with every database on it).
  ...(store === 'sqlite'
    ? ([
        [
          `identity create ≤ 16 KB of WAL at ${connections} connections`,
          writes.length > 0
            ? writes.some(
                (w) => w.kind === 'identity' && w.connections === connections && w.walBytesPerCreate <= 16 * 1024,
              )
            : undefined,
        ],
        ['WAL ≤ 256 MiB while provisioning', writes.length > 0 ? writes.every((w) => w.walPeakMiB <= 256) : undefined],
      ] as [string, boolean | undefined][])
    : []),
  ...(replicas > 1
    ? ([
        [
          `${replicasWord(replicas)} ≥ 95 % of one replica's throughput (every scenario)`,
          Object.keys(results).length > 0
            ? Object.values(results).every((x) => x.replicaThroughputRatio! >= 0.95)
            : undefined,
        ],
      ] as [string, boolean | undefined][])
    : []),
];
console.log('\ntargets:');
for (const [what, ok] of targets)
  console.log(`  ${ok === undefined ? 'not run' : ok ? 'met    ' : 'NOT MET'}  ${what}`);

const out = {
  size: args.size,
  store,
  replicas,
  ...(database && { database: database.name }),
  model: size,
  connections,
  seconds,
  warmupSeconds,
  repeat,
  writeRate,
  at: new Date().toISOString(),
  scenarios: results,
  policyAllIdentitiesMs: policyAllIdentities,
  policyAllServicesMs: policyAllServices,
  ...(searchAfterWrite && { searchAfterWrite }),
  ...(convergence && { convergence }),
  buildSeconds: model.seconds,
  build: buildPath,
  ...(model.api && { buildApi: model.api }),
  ...(database ? { databaseMiB: dataMiB } : { dataDirMiB: dataMiB }),
  peakRssMiB: rss,
  ...(replicas > 1 && { replicaPeakRssMiB: replicaRss }),
  writes,
  targets: Object.fromEntries(targets.map(([k, v]) => [k, v ?? null])),
  ...(args.posture && { posture: { policies: posturePolicies, beside } }),
};
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(
  root,
  'bench',
  'results',
  `${args.size}-${store === 'postgres' ? `postgres-${replicas}r-` : ''}${out.at.replace(/[:.]/g, '-')}.json`,
);
writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
console.log(`figures written to ${file}`);

if (args.compare) {
  const before = JSON.parse(readFileSync(args.compare, 'utf8')) as {
    at: string;
    size: string;
    store?: string;
    replicas?: number;
    scenarios?: typeof results;
  };
  // Files from before PostgreSQL say neither: they are SQLite runs.
  const beforeStore = `${before.store ?? 'sqlite'}${before.store === 'postgres' ? `, ${replicasWord(before.replicas ?? 1)}` : ''}`;
  console.log(
    `\ncompared with ${args.compare} (size ${before.size}, store ${beforeStore}, ${before.at}); now: size ${args.size}, store ${storeLabel}:`,
  );
  for (const c of compareResults(before.scenarios ?? {}, results))
    console.log(
      `  ${c.scenario.padEnd(44)} ${c.metric.padEnd(17)} ${fmt(c.before, 2).padStart(10)} → ${fmt(c.after, 2).padStart(10)}  ${Number.isFinite(c.change) ? `${c.change >= 0 ? '+' : ''}${(c.change * 100).toFixed(1)} %` : '—'}`,
    );
}
if (profDir) console.log(`controller CPU profile written to ${profDir} (on exit)`);
if (database && args.keep) console.log(`PostgreSQL database ${database.name} kept`);
process.exit(0);
