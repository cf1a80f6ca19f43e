/**
 * The benchmark's arithmetic, kept free of I/O so it can be unit-tested: CPU per answered request, the two
 * ratios to the same-bytes bare server, the choice of the representative run, and deltas between two
 * result files (`--compare`).
 */
import type { Stats } from './stats.js';

/** One measured run against one server. */
export interface Measured extends Stats {
  /** Server CPU (user + system, every thread) per answered request, µs. */
  serverCpuUs: number;
  /** The load generator's own CPU per answered request, µs. */
  loadCpuUs: number;
  /** Cores the server kept busy on average (CPU seconds / wall seconds). */
  serverCores: number;
  /** Cores the load generator kept busy on average. */
  loadCores: number;
  /** Size of one response body, bytes. */
  bytes: number;
  /** The database server's own CPU per answered request, µs (PostgreSQL's backends for the bench database). */
  databaseCpuUs?: number;
  /** Cores the database server kept busy on average. */
  databaseCores?: number;
  /** The measured run's start and end on the system's monotonic clock, µs (a CPU profile's time base). */
  window: [number, number];
  /** Unexpected statuses and request errors, by status or message (when there were any). */
  failures?: Record<string, number>;
}

/** A scenario: the controller's run and the bare server's run right after it. */
export interface ScenarioResult {
  edgectl: Measured;
  bare: Measured;
  /** edgectl req/s ÷ bare req/s (1 = as fast as sending the bytes; the hot paths' target is ≥ 0.4). */
  throughputRatio: number;
  /** edgectl CPU per request ÷ bare CPU per request (1 = no overhead; the hot paths' target is ≤ 2.5). */
  cpuRatio: number;
  /** Anything else the scenario reports (e.g. the writes of the mixed run). */
  extra?: Record<string, number>;
  /**
   * With several replicas (`--replicas N`): the same scenario against the first replica alone, measured in
   * the same repetitions (the other replicas idle), and `edgectl`'s throughput ÷ that one's.
   */
  oneReplica?: Measured;
  replicaThroughputRatio?: number;
}

/** CPU per answered request in µs from a CPU-seconds difference; NaN when nothing was answered. */
export function cpuPerRequestUs(cpuSeconds: number, answered: number): number {
  return answered > 0 ? (cpuSeconds * 1e6) / answered : NaN;
}

export function ratios(edgectl: Measured, bare: Measured): { throughputRatio: number; cpuRatio: number } {
  return {
    throughputRatio: bare.throughput > 0 ? edgectl.throughput / bare.throughput : NaN,
    cpuRatio: bare.serverCpuUs > 0 ? edgectl.serverCpuUs / bare.serverCpuUs : NaN,
  };
}

/**
 * Of several (edgectl, bare) pairs, the pair with the median ratio (the lower median for an even count): by
 * default the CPU ratio, or the throughput ratio where that is the target (authenticate). Each bare run was
 * measured right after its controller run, under the same machine conditions, so the ratio within a pair is
 * what the pairing makes steady; picking by the controller's throughput alone let a disturbed bare run decide.
 */
export function medianPair<T extends { edgectl: Measured; bare: Measured }>(
  pairs: T[],
  by: 'cpu' | 'throughput' = 'cpu',
): T {
  if (pairs.length === 0) throw new Error('no runs');
  const key = (p: T) => {
    const r = ratios(p.edgectl, p.bare);
    // Higher is better for throughput, lower for CPU: sorted so that the middle is the median either way.
    return by === 'cpu' ? r.cpuRatio : -r.throughputRatio;
  };
  const sorted = [...pairs].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Relative change from `before` to `after` (0.1 = +10 %); NaN when either is missing or before is 0. */
export function relativeChange(before: number | undefined, after: number | undefined): number {
  if (before === undefined || after === undefined || !Number.isFinite(before) || !Number.isFinite(after)) return NaN;
  return before === 0 ? NaN : (after - before) / before;
}

export interface CompareRow {
  scenario: string;
  metric: string;
  before: number;
  after: number;
  change: number;
}

const COMPARED: [string, (r: ScenarioResult) => number][] = [
  ['req/s', (r) => r.edgectl.throughput],
  ['p99 ms', (r) => r.edgectl.p99],
  ['CPU µs/req', (r) => r.edgectl.serverCpuUs],
  ['throughput ratio', (r) => r.throughputRatio],
  ['CPU ratio', (r) => r.cpuRatio],
];

/** The deltas of every scenario present in both result sets. */
export function compareResults(
  before: Record<string, ScenarioResult>,
  after: Record<string, ScenarioResult>,
): CompareRow[] {
  const rows: CompareRow[] = [];
  for (const [scenario, a] of Object.entries(after)) {
    const b = before[scenario];
    if (!b) continue;
    for (const [metric, pick] of COMPARED) {
      rows.push({ scenario, metric, before: pick(b), after: pick(a), change: relativeChange(pick(b), pick(a)) });
    }
  }
  return rows;
}
