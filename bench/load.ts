/**
 * Single requests over a keep-alive HTTPS agent, for the benchmark's setup, checks and the mixed run's
 * writer (the measured load is autocannon's: bench/cannon.ts). Loopback only.
 */
import https from 'node:https';

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
  /** How long the answer may take (default 30 s). */
  timeoutMs?: number;
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
    req.setTimeout(call.timeoutMs ?? 30_000, () => req.destroy(new Error(`timeout: ${call.method} ${call.path}`)));
    if (payload) req.write(payload);
    req.end();
  });
}
