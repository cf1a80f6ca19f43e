/**
 * The quick bench of the regression guard: the small model, the two hot paths only (client service list, default
 * page; session create, Dial, repeat), the controller and the bare server sending the same bytes, with the
 * bench's own load generator and CPU accounting (bench/cannon.ts, bench/proc.ts). Each chunk ends when a
 * fixed number of requests is answered, not after a fixed time, so the CPU figure stays far above the 10 ms
 * clock tick of /proc however slow or busy the machine is; the two sides alternate chunk by chunk so that
 * other processes' load falls on both; of `tries` such sequences the one with the lower ratio is kept.
 *
 * The test suite runs it (test/bench/guard.test.ts) and fails when either CPU ratio exceeds GUARD_RATIO.
 * By hand: `node --import tsx bench/quick.ts [--chunk N] [--rounds N] [--tries N] [--warmup S]` after
 * `npm run build`. See docs/policy-engine.md, "Regression guard in the test suite".
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { measureRun, type Req } from './cannon.js';
import { cpuPerRequestUs, type Measured } from './report.js';
import { processCpuSeconds } from './proc.js';
import { CLIENT, startStack, type Stack } from './stack.js';

/** The regression guard's bound on controller CPU per request ÷ the bare server's, for each hot path. */
export const GUARD_RATIO = 3.5;

export interface QuickOptions {
  /** Answered requests per chunk (default 2,000). */
  chunk?: number;
  /** Chunks per side, alternating controller and bare server (default 2). */
  rounds?: number;
  /** Interleaved sequences per hot path; the one with the lowest ratio is kept (default 2). */
  tries?: number;
  warmupSeconds?: number;
  connections?: number;
  /**
   * A try whose ratio is at or under this ends a hot path's tries. For a verdict against this bound: the kept
   * ratio is the lowest of the tries, so once one try is under it, more tries cannot change the verdict.
   */
  enoughAt?: number;
}

export interface QuickFigure {
  key: string;
  name: string;
  bytes: number;
  edgectl: Measured;
  bare: Measured;
  /** edgectl CPU µs per request ÷ bare CPU µs per request, each the cheapest of its tries. */
  cpuRatio: number;
  /** Every run, in order, for the report. */
  runs: { edgectl: Measured; bare: Measured }[];
}

interface HotPath {
  key: string;
  name: string;
  ok: number[];
  requests: (s: Stack) => Req[];
}

export const HOT_PATHS: HotPath[] = [
  {
    key: 'service-list',
    name: 'client service list (default page)',
    ok: [200],
    requests: (s) => s.tokens.map((t) => ({ method: 'GET', path: `${CLIENT}/services`, headers: { 'zt-session': t } })),
  },
  {
    key: 'session-dial',
    name: 'session create (Dial, repeat)',
    ok: [201],
    requests: (s) =>
      s.tokens.map((t) => ({
        method: 'POST',
        path: `${CLIENT}/sessions`,
        headers: { 'zt-session': t },
        body: JSON.stringify({ serviceId: s.serviceIds[0]!, type: 'Dial' }),
      })),
  },
];

/** Both sides' figures over an interleaved sequence of chunks, CPU read once around the whole of it. */
async function interleaved(
  sides: { requests: Req[]; pid: number; origin: string }[],
  spec: { connections: number; chunk: number; rounds: number; ok: number[]; bytes: number },
): Promise<Measured[]> {
  const cpu0 = sides.map((s) => processCpuSeconds(s.pid));
  const chunks: Measured[][] = sides.map(() => []);
  for (let round = 0; round < spec.rounds; round++)
    for (const [i, side] of sides.entries())
      chunks[i]!.push(
        await measureRun({
          origin: side.origin,
          pid: side.pid,
          connections: spec.connections,
          seconds: 60,
          warmupSeconds: 0,
          amount: spec.chunk,
          requests: side.requests,
          ok: spec.ok,
          bytes: spec.bytes,
        }),
      );
  // While one side is measured the other is idle (no load, no timers worth a tick), so the CPU over the
  // whole span is the CPU of its own chunks, read with one clock-tick error instead of one per chunk.
  const cpu = sides.map((s, i) => processCpuSeconds(s.pid) - cpu0[i]!);
  return chunks.map((runs, i) => {
    const count = runs.reduce((n, r) => n + r.count, 0);
    const wall = runs.reduce((n, r) => n + r.count / r.throughput, 0);
    const worst = (k: 'p50' | 'p99') => Math.max(...runs.map((r) => r[k]));
    const failures: Record<string, number> = {};
    for (const r of runs) for (const [k, v] of Object.entries(r.failures ?? {})) failures[k] = (failures[k] ?? 0) + v;
    return {
      count,
      errors: runs.reduce((n, r) => n + r.errors, 0),
      throughput: count / wall,
      p50: worst('p50'),
      p99: worst('p99'),
      serverCpuUs: cpuPerRequestUs(cpu[i]!, count),
      loadCpuUs: runs.reduce((n, r) => n + r.loadCpuUs * r.count, 0) / count,
      serverCores: cpu[i]! / wall,
      loadCores: runs.reduce((n, r) => n + r.loadCores * (r.count / r.throughput), 0) / wall,
      bytes: spec.bytes,
      window: [runs[0]!.window[0], runs.at(-1)!.window[1]],
      ...(Object.keys(failures).length ? { failures } : {}),
    } as Measured;
  });
}

/** Measures both hot paths on a running stack. */
export async function measureHotPaths(stack: Stack, opts: QuickOptions = {}): Promise<QuickFigure[]> {
  const rounds = opts.rounds ?? 2;
  const chunk = opts.chunk ?? 2000;
  const tries = opts.tries ?? 2;
  const connections = opts.connections ?? 16;
  const warmupSeconds = opts.warmupSeconds ?? 1;
  const figures: QuickFigure[] = [];
  for (const hot of HOT_PATHS) {
    const requests = hot.requests(stack);
    const { bareRequest, bytes } = await stack.prime(hot.key, requests[0]!, hot.ok);
    const sides = [
      { requests, ...stack.controller },
      { requests: [bareRequest], ...stack.bare },
    ];
    // Warm-up: connections, JIT and caches on both sides, unmeasured.
    for (const side of sides)
      await measureRun({ ...side, connections, seconds: warmupSeconds, warmupSeconds: 0, ok: hot.ok, bytes });
    const runs: QuickFigure['runs'] = [];
    for (let i = 0; i < tries; i++) {
      const [edgectl, bare] = await interleaved(sides, { connections, chunk, rounds, ok: hot.ok, bytes });
      runs.push({ edgectl: edgectl!, bare: bare! });
      if (opts.enoughAt !== undefined && ratio(runs.at(-1)!) <= opts.enoughAt) break;
    }
    // The try with the lower ratio: a disturbance moves one try's ratio either way, a regression raises both.
    const best = runs.reduce((a, b) => (ratio(b) < ratio(a) ? b : a));
    figures.push({ key: hot.key, name: hot.name, bytes, ...best, cpuRatio: ratio(best), runs });
  }
  return figures;
}

const ratio = (r: { edgectl: Measured; bare: Measured }) => r.edgectl.serverCpuUs / r.bare.serverCpuUs;

/** Builds the small model, starts both servers, measures, stops. */
export async function quickBench(opts: QuickOptions = {}): Promise<QuickFigure[]> {
  const stack = await startStack({ size: 'small' });
  try {
    return await measureHotPaths(stack, opts);
  } finally {
    await stack.stop();
  }
}

/** One line per run and the verdict, for the test log and the command line. */
export function formatFigures(figures: QuickFigure[]): string {
  const lines: string[] = [];
  const f = (m: Measured) =>
    `${m.count} answered, ${m.errors} errors, ${m.throughput.toFixed(0)} req/s, ${m.serverCpuUs.toFixed(0)} µs CPU/req (${m.serverCores.toFixed(2)} cores; load ${m.loadCores.toFixed(2)} cores)`;
  for (const x of figures) {
    lines.push(`${x.name} (${x.bytes} bytes)`);
    x.runs.forEach((r, i) => lines.push(`  #${i + 1} edgectl: ${f(r.edgectl)}`, `  #${i + 1} bare:    ${f(r.bare)}`));
    lines.push(
      `  → CPU per request ${x.cpuRatio.toFixed(2)}× bare (${x.edgectl.serverCpuUs.toFixed(0)} / ${x.bare.serverCpuUs.toFixed(0)} µs; guard ≤ ${GUARD_RATIO})`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      chunk: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '2' },
      tries: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '1' },
    },
  });
  const figures = await quickBench({
    chunk: Number(values.chunk),
    rounds: Number(values.rounds),
    tries: Number(values.tries),
    warmupSeconds: Number(values.warmup),
  });
  console.log(formatFigures(figures));
  process.exit(figures.every((x) => x.cpuRatio <= GUARD_RATIO && x.edgectl.errors === 0) ? 0 : 1);
}
