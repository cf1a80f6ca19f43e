/** The benchmark's pure parts: /proc/<pid>/stat parsing and the ratio arithmetic (bench/proc.ts, bench/report.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProcStat, processCpuSeconds } from '../../../bench/proc.js';
import {
  compareResults,
  cpuPerRequestUs,
  medianPair,
  ratios,
  relativeChange,
  type Measured,
  type ScenarioResult,
} from '../../../bench/report.js';

test('utime and stime are fields 14 and 15, counted after the last ) of the command name', () => {
  const tail = 'S 1 2 3 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 11 0 999 1000 200 18446744073709551615';
  assert.deepEqual(parseProcStat(`4242 (node) ${tail}`), { utime: 1234, stime: 56 });
  // A command name with spaces and parentheses does not shift the fields.
  assert.deepEqual(parseProcStat(`4242 (my (odd) name) ${tail}\n`), { utime: 1234, stime: 56 });
  assert.throws(() => parseProcStat('no parentheses here'), /stat/);
  assert.throws(() => parseProcStat('1 (x) S 1 2'), /malformed/);
});

test("this process's own CPU time reads as a non-negative number that grows with work", () => {
  const before = processCpuSeconds(process.pid);
  let x = 0;
  for (let i = 0; i < 5e7; i++) x += i % 7;
  assert.ok(x > 0);
  const after = processCpuSeconds(process.pid);
  assert.ok(before >= 0 && after > before);
});

const run = (throughput: number, serverCpuUs: number): Measured => ({
  count: throughput,
  errors: 0,
  seconds: 1,
  throughput,
  p50: 1,
  p99: 2,
  max: 3,
  serverCpuUs,
  loadCpuUs: 10,
  serverCores: 1,
  loadCores: 0.5,
  bytes: 100,
  window: [0, 1],
});

test('CPU per request and the two ratios to the bare server', () => {
  assert.equal(cpuPerRequestUs(0.5, 5000), 100);
  assert.ok(Number.isNaN(cpuPerRequestUs(0.5, 0)));
  const r = ratios(run(4000, 50), run(10000, 20));
  assert.equal(r.throughputRatio, 0.4);
  assert.equal(r.cpuRatio, 2.5);
  assert.ok(Number.isNaN(ratios(run(1, 1), run(0, 0)).throughputRatio));
  assert.ok(Number.isNaN(ratios(run(1, 1), run(0, 0)).cpuRatio));
});

test('the representative pair is the one with the median ratio, the bare run measured after its controller run', () => {
  // CPU ratios 3, 1, 2 (the controller's own throughput would pick another pair).
  const pairs = [
    { edgectl: run(100, 30), bare: run(200, 10) },
    { edgectl: run(300, 10), bare: run(400, 10) },
    { edgectl: run(200, 20), bare: run(300, 10) },
  ];
  assert.equal(medianPair(pairs), pairs[2]);
  // Throughput ratios 0.5, 0.75, 0.67: the median is the third pair again.
  assert.equal(medianPair(pairs, 'throughput'), pairs[2]);
  assert.equal(medianPair(pairs.slice(0, 2)), pairs[1], 'the lower median (the cheaper) for an even count');
  assert.throws(() => medianPair([]));
});

test('comparing two result sets gives relative changes for the scenarios both have', () => {
  assert.equal(relativeChange(100, 110), 0.1);
  assert.ok(Number.isNaN(relativeChange(0, 1)));
  assert.ok(Number.isNaN(relativeChange(undefined, 1)));
  const result = (t: number, cpu: number): ScenarioResult => ({
    edgectl: run(t, cpu),
    bare: run(1000, 10),
    ...ratios(run(t, cpu), run(1000, 10)),
  });
  const rows = compareResults({ a: result(500, 40), gone: result(1, 1) }, { a: result(600, 30), new: result(1, 1) });
  assert.deepEqual(
    rows.map((r) => r.scenario),
    ['a', 'a', 'a', 'a', 'a'],
  );
  const byMetric = Object.fromEntries(rows.map((r) => [r.metric, r.change]));
  assert.ok(Math.abs(byMetric['req/s']! - 0.2) < 1e-9);
  assert.ok(Math.abs(byMetric['CPU µs/req']! + 0.25) < 1e-9);
  assert.ok(Math.abs(byMetric['CPU ratio']! + 0.25) < 1e-9);
});
