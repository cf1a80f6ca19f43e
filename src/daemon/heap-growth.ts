/**
 * How far the controller's JS heap grows between full collections. V8 lets its old generation grow to a factor
 * of what the last full collection kept before it collects again, and picks that factor from how fast the
 * program allocates: up to 4 on a machine with much memory. Under the new-session load the controller allocates
 * fast and keeps little (the large bench: ~65 MiB live, of which the session cache is a third), so its heap grew
 * to ~260 MiB, garbage waiting for a collection, and that made most of its peak RSS (bench/RESULTS.md). The
 * controller fixes the factor at 1.5: full collections come sooner (each marks the same live heap), the heap
 * stays within about 1.5 times what is live. An operator's own `--heap-growing-percent` (in the node command
 * line or NODE_OPTIONS; 0 is V8's own choice) is left alone (docs/decisions.md, "Performance", "Heap growth").
 */
import { setFlagsFromString } from 'node:v8';

/** The growth between full collections the controller asks for: 50 %, a factor of 1.5. */
export const HEAP_GROWING_PERCENT = 50;

/** The V8 flag to set, unless the node command line or NODE_OPTIONS already give one. */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | undefined {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) =>
    /^--heap[-_]growing[-_]percent(=|$)/.test(a),
  );
  return given ? undefined : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/**
 * Sets the controller process's heap growth (`edgectl serve`, before the store opens). V8 reads this flag each
 * time it sets the next collection's limit, so setting it at run time takes effect from the next collection.
 */
export function applyHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv, process.env.NODE_OPTIONS);
  if (flag) setFlagsFromString(flag);
}
