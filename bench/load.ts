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
        headers: {
          accept: 'application/json',
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
            : {}),
          ...call.headers,
        },
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

/**
 * Runs `makeCall(clientIndex, iteration)` from `concurrency` clients for `seconds` (at most `maxRequests`),
 * after `warmupSeconds` of the same load that is not recorded: connections, TLS sessions, the JIT of both
 * sides and the server's caches are warm when measuring starts, for the baseline as for the controller.
 */
export async function runLoad(
  target: Target,
  opts: { concurrency: number; seconds: number; maxRequests?: number; warmupSeconds?: number },
  makeCall: (client: number, i: number) => Call,
): Promise<Stats> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: opts.concurrency, ca: target.ca });
  const loop = async (seconds: number, max: number, record?: (ms: number, ok: boolean) => void) => {
    let issued = 0;
    const deadline = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: opts.concurrency }, async (_, c) => {
        for (let i = 0; performance.now() < deadline && issued < max; i++) {
          issued++;
          const call = makeCall(c, record ? i : -1 - i);
          const t0 = performance.now();
          try {
            const res = await send(target, agent, call);
            record?.(performance.now() - t0, (call.ok ?? [200]).includes(res.status));
          } catch {
            record?.(0, false);
          }
        }
      }),
    );
  };
  await loop(opts.warmupSeconds ?? 1, Number.MAX_SAFE_INTEGER);
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  await loop(opts.seconds, opts.maxRequests ?? Number.MAX_SAFE_INTEGER, (ms, ok) =>
    ok ? latencies.push(ms) : errors++,
  );
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  return summarise(latencies, errors, seconds);
}
