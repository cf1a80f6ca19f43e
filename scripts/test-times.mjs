// Where a test run's time goes: `EDGECTL_TEST_TIMES=FILE node scripts/run-tests.mjs …` (run-tests.mjs). Loaded
// with `--import` into every Node process of the run (test processes and the programs they start, through
// NODE_OPTIONS), it appends one line per process to FILE when the process exits: its id, its parent's, what it
// ran, its wall time and its CPU time (all its threads). The shared test processes add one line per test file
// (its suite's wall and CPU time). Once the run ends, run-tests.mjs prints `report(FILE)`.
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.env.EDGECTL_TEST_TIMES;
if (file) {
  const start = Date.now();
  process.on('exit', () => {
    const u = process.resourceUsage();
    const line = {
      pid: process.pid,
      ppid: process.ppid,
      argv: process.argv.slice(1),
      wall: (Date.now() - start) / 1000,
      cpu: (u.userCPUTime + u.systemCPUTime) / 1e6,
      end: Date.now() / 1000,
    };
    try {
      appendFileSync(file, JSON.stringify(line) + '\n');
    } catch {
      // A process whose run has ended (the file removed) records nothing.
    }
  });
}

/** Records the wall and CPU time of a test file's suite in a shared process (run-tests.mjs's entries). */
export function fileTimer(name) {
  let cpu;
  let wall;
  return {
    start() {
      cpu = process.cpuUsage();
      wall = Date.now();
    },
    stop() {
      if (!file || cpu === undefined) return;
      const u = process.cpuUsage(cpu);
      appendFileSync(
        file,
        JSON.stringify({ file: name, wall: (Date.now() - wall) / 1000, cpu: (u.user + u.system) / 1e6 }) + '\n',
      );
    },
  };
}

/** The test processes by wall time (with their own CPU and their children's), then the shared files by CPU. */
export function report(path, top = 25) {
  const lines = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const procs = lines.filter((l) => l.pid !== undefined);
  const files = lines.filter((l) => l.file !== undefined);
  const children = new Map();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const below = (p) => (children.get(p.pid) ?? []).flatMap((c) => [c, ...below(c)]);
  const name = (p) => p.argv.find((a) => /\.test\.m?js$/.test(a))?.replace(/^.*?\/test\//, 'test/');
  const tests = procs
    .filter(name)
    .map((p) => ({
      name: name(p),
      wall: p.wall,
      end: p.end,
      cpu: p.cpu,
      children: below(p).reduce((s, c) => s + c.cpu, 0),
    }))
    .sort((a, b) => b.wall - a.wall);
  const sum = (xs, f) => xs.reduce((s, x) => s + f(x), 0).toFixed(1);
  // How many test processes ran at once, second by second from the first start to the last end: the seconds with
  // fewer than 3 (the runner's default) are where a core may have idled, typically a long process left alone.
  const spans = tests.filter((t) => t.end !== undefined).map((t) => [t.end - t.wall, t.end]);
  const first = Math.min(...spans.map((s) => s[0]));
  const running = Array.from({ length: Math.ceil(Math.max(...spans.map((s) => s[1])) - first) }, (_, i) => {
    const at = first + i + 0.5;
    return spans.filter(([a, b]) => a <= at && at < b).length;
  });
  const fewer = (n) => running.filter((r) => r < n).length;
  const row = (...cells) => cells.map((c, i) => (i < cells.length - 1 ? String(c).padStart(8) : ` ${c}`)).join('');
  return [
    `# test times: ${tests.length} test processes, ${sum(procs, (p) => p.cpu)} s of CPU in all Node processes`,
    `# ${running.length} s from the first test process's start to the last one's end; fewer than 3 running: ` +
      `${fewer(3)} s, fewer than 2: ${fewer(2)} s`,
    row('wall s', 'cpu s', 'child s', 'test process'),
    ...tests.slice(0, top).map((t) => row(t.wall.toFixed(1), t.cpu.toFixed(1), t.children.toFixed(1), t.name)),
    row('wall s', 'cpu s', '', 'file in a shared process'),
    ...files
      .sort((a, b) => b.cpu - a.cpu)
      .slice(0, top)
      .map((f) => row(f.wall.toFixed(1), f.cpu.toFixed(1), '', f.file)),
  ].join('\n');
}
