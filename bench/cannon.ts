/**
 * One measured run of autocannon (keep-alive HTTPS, closed loop, one request in flight per connection)
 * against one server process, with the CPU both sides spent: the server's from `/proc/<pid>/stat`, the load
 * generator's from `process.cpuUsage()` (autocannon runs in this process's main thread). autocannon parses
 * responses with a small incremental parser and writes prebuilt request buffers, so it costs the machine much
 * less per request than either server; its CPU is reported so a run where it is the bottleneck shows as one.
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
  let n = 0;
  const opts: autocannon.Options = {
    url: spec.origin,
    connections: spec.connections,
    duration: seconds,
    // With a count, autocannon stops at its next sample tick (1 s by default): sample often so the run ends
    // soon after its last answer.
    ...(amount ? { amount, sampleInt: 50 } : {}),
    timeout: 30,
    requests: Array.isArray(spec.requests)
      ? spec.requests.map(asCannonRequest)
      : [{ setupRequest: () => asCannonRequest((spec.requests as (n: number) => Req)(n++)) }],
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
  const server0 = processCpuSeconds(spec.pid);
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
  const serverCpu = processCpuSeconds(spec.pid) - server0;
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
    window: [from, to],
    ...(stats.errors ? { failures } : {}),
  };
}
