/**
 * `node --import tsx bench/event-cost-ab.ts [--scenario new-sessions|identity-creates|authenticate] [--size small]
 *  [--pairs N] [--window SECONDS] [--connections N] [--warmup SECONDS] [--rate N] [--same]`
 *
 * What recording events costs a hot path, in controller CPU per request over HTTPS (issue #24: at most 5 %),
 * on a machine whose load moves. Two controllers run side by side on two copies of one model (SQLite): A is the
 * built `dist/` as it is, B the same build with recording switched off (a copy of `dist/` patched by this
 * script: the new session's event neither built nor inserted, `recordEvents` and `recordEntityChange` doing
 * nothing; production never runs it). After a warm-up in turns, they are loaded in `--pairs` pairs of windows,
 * each pair in a random order (A B or B A), `--window` seconds each (`--connections` keep-alive clients, closed
 * loop, the same request sequence for both), and each window's CPU is the controller's from the start of its
 * window to the start of its next (the tail it leaves, checkpoints included, counted), per answered request.
 * Each pair gives the ratio of A's to B's, which takes out load that moves slower than a pair; the report gives
 * the median of those ratios, its quartiles and a 95 % confidence interval of the median (order statistics),
 * and the Mann-Whitney z of A's windows against B's. After the run both stores are read: A must hold one
 * event per new row and B none, or the figures are void. `--same` makes B an unpatched copy: an A/A run, which
 * shows what the method makes of no difference at the machine's load of the moment (a fixed order B A B A …
 * had shown -9 % on one).
 *
 * Scenarios: `new-sessions` (`POST /sessions`, a new (API session, service) pair each time: the session's
 * `created` event, with the store's group commit); `identity-creates` (`POST /identities` by an admin: the
 * `entityChange` event); `authenticate` (password logins of the model's users in turn: the `authentication`
 * success and `apiSession` created events, beside an Argon2id verification).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import https from 'node:https';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { send } from './load.js';
import { processCpuSeconds } from './proc.js';
import { mannWhitneyZ } from './mann-whitney.js';
import { ADMIN, CLIENT, MGMT, ROOT, spawnController } from './stack.js';
import { attributesOf } from './model.js';

const { values: args } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'new-sessions' },
    size: { type: 'string', default: 'small' },
    pairs: { type: 'string', default: '30' },
    window: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '12' },
    rate: { type: 'string', default: '4000' },
    same: { type: 'boolean', default: false },
  },
});
const scenario = args.scenario!;
if (!['new-sessions', 'identity-creates', 'authenticate'].includes(scenario))
  throw new Error(`--scenario ${scenario}: new-sessions, identity-creates or authenticate`);
const pairs = Number(args.pairs);
const windowSeconds = Number(args.window);
const connections = Number(args.connections);
const warmupSeconds = Number(args.warmup);

/**
 * The build without recording: text replacements in a copy of dist/, each of which must match exactly once (a
 * change to the source that moves them stops the bench here rather than measuring a build that still records).
 */
const PATCHES: { file: string; from: string; to: string }[] = [
  {
    file: 'model/services/session/session.js',
    from: 'insertSessionIfAbsent(ctx.db, values, sessionCreatedEvent(ctx, values, at))',
    to: 'insertSessionIfAbsent(ctx.db, values, undefined)',
  },
  {
    file: 'store/sessions.js',
    from: 'then: { text: INSERT_SESSION_EVENT, params: [event.id, s.createdAt, event.actorId, s.id, event.body] },',
    to: 'then: undefined,',
  },
  {
    file: 'model/events/event.js',
    from: 'export async function recordEvents(ctx, events) {',
    to: 'export async function recordEvents(ctx, events) {\n    return;',
  },
  {
    file: 'model/events/entity-change.js',
    from: 'export function recordEntityChange(ctx, def, id, eventType, before, after) {',
    to: 'export function recordEntityChange(ctx, def, id, eventType, before, after) {\n    return Promise.resolve();',
  },
];

const work = mkdtempSync(join(tmpdir(), 'edgectl-event-ab-'));
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

function buildWithoutEvents(): string {
  const root = join(work, 'no-events');
  mkdirSync(root);
  cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  for (const p of args.same ? [] : PATCHES) {
    const file = join(root, 'dist', p.file);
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf(p.from);
    if (at < 0 || text.indexOf(p.from, at + 1) >= 0) throw new Error(`${p.file}: the patch's text is not there once`);
    writeFileSync(file, text.replace(p.from, p.to));
  }
  return root;
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

// The model: one build, copied, so both controllers start from the same store. New sessions need a fresh pair
// per request: ~5 Dial services per identity on the small model, so a fresh API session per 4 requests at
// `--rate` requests a second for every window and warm-up, with room to spare.
const totalSeconds = 2 * pairs * windowSeconds + 2 * (warmupSeconds + windowSeconds);
const fresh = scenario === 'new-sessions' ? Math.ceil((Number(args.rate) * totalSeconds) / 4) : 0;
const dirA = join(work, 'a');
const dirB = join(work, 'b');
console.log(`building the ${args.size} model (${fresh} fresh API sessions) …`);
const built = spawn(
  process.execPath,
  ['--import', 'tsx', 'bench/build-model.ts', dirA, args.size!, '100', String(fresh)],
  { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
);
let out = '';
built.stdout!.on('data', (c) => (out += c));
if ((await new Promise<number | null>((r) => built.on('exit', r))) !== 0) throw new Error('the model build failed');
const model = JSON.parse(out.trim().split('\n').pop()!) as {
  users: { username: string; password: string }[];
  fresh: { token: string; user: number }[];
};
// What a store recorded: its events of the scenario's kind and the rows they are about (counted before and after).
const [ns, table] = {
  'new-sessions': ['session', 'sessions'],
  'identity-creates': ['entityChange', 'identities'],
  authenticate: ['apiSession', 'api-sessions'],
}[scenario]!;
function recorded(dir: string): { events: number; rows: number } {
  const db = new Database(join(dir, 'edgectl.db'), { readonly: true });
  try {
    const events = db
      .prepare(`select count(*) as n from events where namespace = ? and "eventType" = 'created' and "entityType" = ?`)
      .get(ns, table) as { n: number };
    const rows = db
      .prepare(
        {
          'new-sessions': `select count(*) as n from sessions`,
          'identity-creates': `select count(*) as n from identities`,
          authenticate: `select count(*) as n from api_sessions`,
        }[scenario]!,
      )
      .get() as { n: number };
    return { events: events.n, rows: rows.n };
  } finally {
    db.close();
  }
}
cpSync(dirA, dirB, { recursive: true });
const before = recorded(dirA);
const rootB = buildWithoutEvents();

const ca = readFileSync(join(dirA, 'pki', 'ca-bundle.pem'), 'utf8');
interface Side {
  name: 'A' | 'B';
  dir: string;
  child: ChildProcess;
  origin: string;
  agent: https.Agent;
  adminToken?: string;
  next: number;
}
async function start(name: 'A' | 'B', dir: string, root?: string): Promise<Side> {
  const port = await freePort();
  const child = spawnController(dir, port, undefined, root ? { root } : {});
  children.push(child);
  const origin = `https://127.0.0.1:${port}`;
  const agent = new https.Agent({ keepAlive: true, ca, maxSockets: connections });
  for (let waited = 0; ; waited += 100) {
    const up = await send({ ca, base: origin }, agent, { method: 'GET', path: '/version' }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) break;
    if (waited > 60_000 || child.exitCode !== null) throw new Error(`controller ${name} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { name, dir, child, origin, agent, next: 0 };
}
const a = await start('A', dirA);
const b = await start('B', dirB, rootB);
const call = (s: Side, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  send({ ca, base: s.origin }, s.agent, { method, path, headers, body });

// The request sequence, the same for both: the n-th request of a side is `request(n)`.
let request: (s: Side, n: number) => Promise<number>;
if (scenario === 'new-sessions') {
  // Each fresh API session's identity's Dial services (asked of A once; B holds the same model).
  const dialable = new Map<number, string[]>();
  for (const f of model.fresh) {
    if (dialable.has(f.user)) continue;
    const page = JSON.parse((await call(a, 'GET', `${CLIENT}/services?limit=500`, { 'zt-session': f.token })).body) as {
      data: { id: string; permissions: string[] }[];
    };
    dialable.set(
      f.user,
      page.data.filter((s) => s.permissions.includes('Dial')).map((s) => s.id),
    );
  }
  const sequence: { token: string; serviceId: string }[] = [];
  for (const f of model.fresh)
    for (const serviceId of dialable.get(f.user)!) sequence.push({ token: f.token, serviceId });
  console.log(`${sequence.length} distinct (API session, service) pairs`);
  request = async (s, n) => {
    const p = sequence[n];
    if (!p) throw new Error('the fresh pairs ran out: raise --rate');
    const r = await call(
      s,
      'POST',
      `${CLIENT}/sessions`,
      { 'zt-session': p.token },
      { serviceId: p.serviceId, type: 'Dial' },
    );
    return r.status;
  };
} else if (scenario === 'authenticate') {
  request = async (s, n) => {
    const u = model.users[n % model.users.length]!;
    const r = await call(
      s,
      'POST',
      `${CLIENT}/authenticate?method=password`,
      {},
      {
        username: u.username,
        password: u.password,
      },
    );
    return r.status;
  };
} else {
  for (const s of [a, b]) {
    const r = await call(s, 'POST', `${MGMT}/authenticate?method=password`, {}, ADMIN);
    if (r.status !== 200) throw new Error(`admin login on ${s.name}: ${r.status}`);
    s.adminToken = (JSON.parse(r.body) as { data: { token: string } }).data.token;
  }
  request = async (s, n) => {
    const r = await call(
      s,
      'POST',
      `${MGMT}/identities`,
      { 'zt-session': s.adminToken! },
      { name: `ab-id-${n}`, type: 'Device', isAdmin: false, roleAttributes: attributesOf(n) },
    );
    return r.status;
  };
}

/** The answer that counts: a login's 200, a create's 201. */
const okStatus = scenario === 'authenticate' ? 200 : 201;

/** Load on one side for `seconds`: closed loop, `connections` in flight; answers the counted and the others. */
async function load(s: Side, seconds: number): Promise<{ ok: number; failed: number }> {
  let ok = 0;
  let failed = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const status = await request(s, s.next++).catch(() => 0);
        if (status === okStatus) ok++;
        else failed++;
      }
    }),
  );
  return { ok, failed };
}

// Warm-up in turns as measured, so both reach the measured regime (JIT, caches, the store's pages) together.
for (let t = 0; t < warmupSeconds; t += windowSeconds) {
  await load(a, windowSeconds);
  await load(b, windowSeconds);
}

interface Window {
  side: 'A' | 'B';
  pair: number;
  cpuStart: number;
  cpu?: number;
  ok: number;
  failed: number;
  seconds: number;
}
const windows: Window[] = [];
const last: Record<'A' | 'B', Window | undefined> = { A: undefined, B: undefined };
const load0 = loadavg()[0]!;
// Each pair in a random order (A B or B A): a disturbance that recurs with the windows' period would otherwise
// fall on one side only.
for (let p = 0; p < pairs; p++) {
  for (const s of randomInt(2) === 0 ? [a, b] : [b, a]) {
    const cpuStart = processCpuSeconds(s.child.pid!);
    const prev = last[s.name];
    if (prev) prev.cpu = cpuStart - prev.cpuStart;
    const t0 = performance.now();
    const r = await load(s, windowSeconds);
    const w: Window = { side: s.name, pair: p, cpuStart, ...r, seconds: (performance.now() - t0) / 1000 };
    windows.push(w);
    last[s.name] = w;
  }
}
// The last windows' tails: as long again idle, then their CPU is read.
await new Promise((r) => setTimeout(r, windowSeconds * 1000));
for (const s of [a, b]) last[s.name]!.cpu = processCpuSeconds(s.child.pid!) - last[s.name]!.cpuStart;
const load1 = loadavg()[0]!;

const answered = { A: a.next, B: b.next };
for (const s of [a, b]) s.child.kill('SIGTERM');
await Promise.all([a, b].map((s) => new Promise((r) => (s.child.exitCode !== null ? r(0) : s.child.once('exit', r)))));

// A must hold one new event per new row, B none.
const since = (r: { events: number; rows: number }) => ({
  events: r.events - before.events,
  rows: r.rows - before.rows,
});
const inA = since(recorded(dirA));
const inB = since(recorded(dirB));

const perRequest = (w: Window) => (w.cpu! / w.ok) * 1e6;
const aw = windows.filter((w) => w.side === 'A');
const bw = windows.filter((w) => w.side === 'B');
const ratios = aw.map((w, i) => perRequest(w) / perRequest(bw[i]!));
const sorted = [...ratios].sort((x, y) => x - y);
const q = (at: number) => sorted[Math.min(sorted.length - 1, Math.floor(at * sorted.length))]!;
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
// A distribution-free 95 % interval of the median: the order statistics k and n-1-k with k the largest for
// which the binomial(n, 1/2) tail below k is at most 2.5 %.
function medianInterval(xs: number[]): [number, number] {
  const n = xs.length;
  let k = -1;
  let tail = 0;
  let term = Math.pow(0.5, n);
  for (let j = 0; j < n; j++) {
    tail += term;
    if (tail > 0.025) break;
    k = j;
    term = (term * (n - j)) / (j + 1);
  }
  if (k < 0) return [NaN, NaN];
  return [sorted[k]!, sorted[n - 1 - k]!];
}
const [lo, hi] = medianInterval(sorted);
const pct = (r: number) => `${((r - 1) * 100).toFixed(1)} %`;
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');

console.log(
  `\n${scenario}${args.same ? ' (A/A: B unpatched)' : ''}, ${args.size} model, ${pairs} pairs of windows of ${windowSeconds} s, ` +
    `${connections} connections; load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`,
);
console.log(`A (recording) µs/request per window: ${fmt(aw.map(perRequest))}`);
console.log(`B (not)       µs/request per window: ${fmt(bw.map(perRequest))}`);
console.log(
  `A req/s median ${median(aw.map((w) => w.ok / w.seconds)).toFixed(0)}, B ${median(bw.map((w) => w.ok / w.seconds)).toFixed(0)}`,
);
console.log(
  `A µs/request median ${median(aw.map(perRequest)).toFixed(1)}, B ${median(bw.map(perRequest)).toFixed(1)}; ` +
    `Mann-Whitney z (A above B > 0) ${mannWhitneyZ(aw.map(perRequest), bw.map(perRequest)).toFixed(2)}`,
);
console.log(
  `A / B per pair: median ${pct(median(ratios))}, quartiles ${pct(q(0.25))} … ${pct(q(0.75))}, ` +
    `95 % interval of the median ${pct(lo)} … ${pct(hi)}`,
);
const failed = windows.reduce((n, w) => n + w.failed, 0);
console.log(
  `recorded: A ${inA.events} events for ${inA.rows} ${table}, B ${inB.events} for ${inB.rows} (requests made: A ${answered.A}, B ${answered.B}; failed ${failed})`,
);
const valid =
  (args.same ? inB.events === inB.rows : inB.events === 0) && inA.events === inA.rows && inA.rows > 0 && failed === 0;
const verdict = !valid
  ? 'VOID: the stores do not hold what the builds should record (or requests failed)'
  : hi <= 1.05
    ? 'within 5 %: the interval of the median lies below +5 %'
    : lo > 1.05
      ? 'over 5 %: the interval of the median lies above +5 %'
      : 'not resolved: the interval of the median spans +5 %';
console.log(verdict);
if (!valid) process.exitCode = 1;
