/**
 * One measured run of autocannon (keep-alive HTTPS, closed loop, one request in flight per connection)
 * against one server process, with the CPU both sides spent: the server's from `/proc/<pid>/stat`, the load
 * generator's from `process.cpuUsage()` (autocannon runs in this process's main thread). autocannon parses
 * responses with a small incremental parser and writes prebuilt request buffers, so it costs the machine much
 * less per request than either server; its CPU is reported so a run where it is the bottleneck shows as one.
 * Several servers of one cluster (replicas on one database) are measured together: the connections are spread
 * over them, one autocannon instance each, and their CPU is summed.
 */
import autocannon from 'autocannon';
import { processCpuSeconds } from './proc.js';
import { cpuPerRequestUs, type Measured } from './report.js';
import { summarise } from './stats.js';

export interface Req {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  /** A JSON text. */
  body?: string;
}

export interface RunSpec {
  /** Origin of the server, e.g. https://127.0.0.1:1280. */
  origin: string;
  /** The server process whose CPU is charged. */
  pid: number;
  /** Further servers sharing the load (replicas): the connections are spread over all, their CPU summed. */
  also?: { origin: string; pid: number }[];
  /**
   * The database server's CPU, when it is measured (PostgreSQL, bench/postgres.ts): starts counting and
   * answers a function that stops and gives the CPU seconds spent meanwhile.
   */
  database?: () => () => number;
  connections: number;
  seconds: number;
  /**
   * Measure until this many requests are answered instead of for `seconds` (the quick guard: a fixed count
   * keeps the figure well above the 10 ms clock tick of /proc however slow the machine is).
   */
  amount?: number;
  /** Unmeasured load of the same kind first (connections, TLS, JIT and caches warm on both sides). */
  warmupSeconds: number;
  /**
   * Either a fixed list each connection cycles through (encoded once: the cheapest for the load generator),
   * or a function making the n-th request of the run (n counts over all connections, warm-up included),
   * encoded per request, for requests that must differ every time.
   */
  requests: Req[] | ((n: number) => Req);
  /** Statuses that count as answered (default 200). */
  ok?: number[];
  /** Size of one response body, for the report. */
  bytes: number;
}

function asCannonRequest(r: Req): autocannon.Request {
  return {
    method: r.method,
    path: r.path,
    headers: {
      accept: 'application/json',
      ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...r.headers,
    },
    ...(r.body !== undefined ? { body: r.body } : {}),
  };
}

function cannon(
  spec: RunSpec,
  seconds: number,
  amount: number | undefined,
  onResponse?: (status: number, ms: number) => void,
  onError?: (e: Error) => void,
): Promise<void> {
  const servers = [spec.origin, ...(spec.also ?? []).map((s) => s.origin)];
  if (servers.length === 1)
    return cannonOne(spec, spec.origin, spec.connections, seconds, amount, { n: 0 }, onResponse, onError);
  // Connections (and a count) divided as evenly as they go; the n-th request counts over all servers.
  const counter = { n: 0 };
  const share = (total: number, i: number) => Math.floor(total / servers.length) + (i < total % servers.length ? 1 : 0);
  return Promise.all(
    servers.flatMap((origin, i) =>
      share(spec.connections, i) > 0
        ? [
            cannonOne(
              spec,
              origin,
              share(spec.connections, i),
              seconds,
              amount === undefined ? undefined : share(amount, i),
              counter,
              onResponse,
              onError,
            ),
          ]
        : [],
    ),
  ).then(() => {});
}

function cannonOne(
  spec: RunSpec,
  origin: string,
  connections: number,
  seconds: number,
  amount: number | undefined,
  counter: { n: number },
  onResponse?: (status: number, ms: number) => void,
  onError?: (e: Error) => void,
): Promise<void> {
  const opts: autocannon.Options = {
    url: origin,
    connections,
    duration: seconds,
    // With a count, autocannon stops at its next sample tick (1 s by default): sample often so the run ends
    // soon after its last answer.
    ...(amount ? { amount, sampleInt: 50 } : {}),
    timeout: 30,
    requests: Array.isArray(spec.requests)
      ? spec.requests.map(asCannonRequest)
      : [{ setupRequest: () => asCannonRequest((spec.requests as (n: number) => Req)(counter.n++)) }],
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(opts, (err) => (err ? reject(err) : resolve()));
    const events = instance as unknown as NodeJS.EventEmitter;
    // The instance re-emits each client's completed response as (client, status, bytes, ms), and each
    // failed request (connection error, timeout) as reqError.
    if (onResponse)
      events.on('response', (_c: unknown, status: number, _b: number, ms: number) => onResponse(status, ms));
    if (onError) events.on('reqError', onError);
  });
}

export async function measureRun(spec: RunSpec): Promise<Measured> {
  if (spec.warmupSeconds > 0) await cannon(spec, spec.warmupSeconds, undefined);
  const ok = spec.ok ?? [200];
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const fail = (kind: string) => (failures[kind] = (failures[kind] ?? 0) + 1);
  const pids = [spec.pid, ...(spec.also ?? []).map((s) => s.pid)];
  const serversCpu = () => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const server0 = serversCpu();
  const stopDatabase = spec.database?.();
  const load0 = process.cpuUsage();
  const t0 = performance.now();
  const from = Number(process.hrtime.bigint() / 1000n);
  await cannon(
    spec,
    spec.seconds,
    spec.amount,
    (status, ms) => (ok.includes(status) ? latencies.push(ms) : fail(String(status))),
    (e) => fail(e.message),
  );
  const wall = (performance.now() - t0) / 1000;
  const to = Number(process.hrtime.bigint() / 1000n);
  const load = process.cpuUsage(load0);
  const serverCpu = serversCpu() - server0;
  const databaseCpu = stopDatabase?.();
  const loadCpu = (load.user + load.system) / 1e6;
  const stats = summarise(
    latencies,
    Object.values(failures).reduce((a, b) => a + b, 0),
    wall,
  );
  return {
    ...stats,
    serverCpuUs: cpuPerRequestUs(serverCpu, stats.count),
    loadCpuUs: cpuPerRequestUs(loadCpu, stats.count),
    serverCores: serverCpu / wall,
    loadCores: loadCpu / wall,
    bytes: spec.bytes,
    ...(databaseCpu !== undefined && {
      databaseCpuUs: cpuPerRequestUs(databaseCpu, stats.count),
      databaseCores: databaseCpu / wall,
    }),
    window: [from, to],
    ...(stats.errors ? { failures } : {}),
  };
}
