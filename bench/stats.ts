/** Latency statistics for the benchmark. */
export interface Stats {
  count: number;
  errors: number;
  seconds: number;
  throughput: number;
  p50: number;
  p99: number;
  max: number;
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export function summarise(latenciesMs: number[], errors: number, seconds: number): Stats {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    count: sorted.length,
    errors,
    seconds,
    throughput: sorted.length / seconds,
    p50: pct(sorted, 50),
    p99: pct(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
  };
}
