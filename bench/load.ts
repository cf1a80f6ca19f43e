/**
 * A closed-loop load generator: N concurrent clients, each sending its next request when the previous one
 * answered, over keep-alive HTTPS connections, for a fixed time (bounded in count too). Loopback only.
 */
import https from 'node:https';
import { summarise, type Stats } from './stats.js';

export interface Target {
  ca: string;
  base: string;
}

export interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Statuses that count as success (default 200). */
  ok?: number[];
}

export function send(target: Target, agent: https.Agent, call: Call): Promise<{ status: number; body: string }> {
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      target.base + call.path,
      {
        method: call.method,
        agent,
        ca: target.ca,
        headers: { accept: 'application/json', ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}), ...call.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    if (payload) req.write(payload);
    req.end();
  });
}

/** Runs `makeCall(clientIndex, iteration)` from `concurrency` clients for `seconds` (at most `maxRequests`). */
export async function runLoad(
  target: Target,
  opts: { concurrency: number; seconds: number; maxRequests?: number; warmup?: number },
  makeCall: (client: number, i: number) => Call,
): Promise<Stats> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: opts.concurrency, ca: target.ca });
  // Warm up connections and JIT outside the measured window.
  for (let c = 0; c < opts.concurrency; c++) for (let i = 0; i < (opts.warmup ?? 3); i++) await send(target, agent, makeCall(c, -1 - i)).catch(() => undefined);
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const max = opts.maxRequests ?? Number.MAX_SAFE_INTEGER;
  const start = performance.now();
  const deadline = start + opts.seconds * 1000;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async (_, c) => {
      for (let i = 0; performance.now() < deadline && issued < max; i++) {
        issued++;
        const call = makeCall(c, i);
        const t0 = performance.now();
        try {
          const res = await send(target, agent, call);
          if ((call.ok ?? [200]).includes(res.status)) latencies.push(performance.now() - t0);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  return summarise(latencies, errors, seconds);
}
