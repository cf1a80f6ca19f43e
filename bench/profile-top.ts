/**
 * Summarises a V8 CPU profile (`npm run bench -- --cpu-prof DIR` writes the controller's): the functions with
 * the most self time, and the source files (or node: internals) with the most self time.
 * With `--results FILE` (the bench's JSON of the same run), only the samples taken during the controller's
 * measured runs count (both use the system's monotonic clock), so start-up, model checks and idle time between
 * runs are left out.
 * `--window FROM,TO`: only the samples in that span (the `window` bench/identity-creates.ts prints).
 * Usage: node --import tsx bench/profile-top.ts FILE.cpuprofile [--results RESULTS.json | --window FROM,TO] [--top N]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Measured } from './report.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { results: { type: 'string' }, window: { type: 'string' }, top: { type: 'string', default: '25' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile-top.ts FILE.cpuprofile [--results RESULTS.json] [--top N]');
const top = Number(opts.top);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const windows: [number, number][] = opts.results
  ? Object.values(
      (
        JSON.parse(readFileSync(opts.results, 'utf8')) as {
          scenarios: Record<string, { runs: { edgectl: Measured }[] }>;
        }
      ).scenarios,
    ).flatMap((s) => s.runs.map((r) => r.edgectl.window))
  : opts.window
    ? [opts.window.split(',').map(Number) as [number, number]]
    : [[-Infinity, Infinity]];
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  at += dt;
  if (windows.some(([from, to]) => at >= from && at <= to)) selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/') || '(native)';
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const fns = new Map<string, number>();
const files = new Map<string, number>();
for (const [id, us] of selfUs) {
  const f = byId.get(id)!.callFrame;
  add(fns, `${f.functionName || '(anonymous)'}  ${shortUrl(f.url)}:${f.lineNumber + 1}`, us);
  add(files, shortUrl(f.url).replace(/^(node_modules\/(@[^/]+\/)?[^/]+)\/.*/, '$1'), us);
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * us) / total).toFixed(1).padStart(6)} %  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
print('self time by function', fns);
print('self time by file or package', files);
