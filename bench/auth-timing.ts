/**
 * `npm run bench:auth-timing [-- --samples N] [--max-z Z] [--real-argon2]`
 *
 * Checks that a password login for an unknown username cannot be told from a wrong password for a known one by
 * its answer time (decisions.md, "Authentication": constant-time failure path). Starts a controller
 * in-process (temporary data dir, rate limits off so the bench measures the work, not the limiter), then sends
 * the two kinds of failed logins interleaved, one at a time, and compares the two latency samples with a
 * Mann-Whitney U test. Exits 1 when |z| exceeds `--max-z` (default 3.3, two-sided p ≈ 0.001).
 *
 * Both paths run one Argon2id check by design; its jitter (milliseconds on a busy machine) hides a sub-millisecond
 * difference in the rest of the work from a few hundred samples. So by default the check is replaced by a fixed
 * 2 ms wait (the `argon2` seam of src/model/password.ts) and what is compared is everything else: the database
 * work and the HTTP path, where an extra transaction on one path shows as z far beyond the limit.
 * `--real-argon2` measures the real thing end to end.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/daemon/config.js';
import { startDaemon } from '../src/daemon/daemon.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { argon2 } from '../src/model/password.js';
import { mannWhitneyZ } from './mann-whitney.js';

const { values: args } = parseArgs({
  options: {
    samples: { type: 'string', default: '200' },
    'max-z': { type: 'string', default: '3.3' },
    warmup: { type: 'string', default: '20' },
    'real-argon2': { type: 'boolean', default: false },
  },
});
if (!args['real-argon2']) {
  // Same cost whatever the hash and password: the verification takes 2 ms and fails unless the password matches.
  const realHash = argon2.hash;
  argon2.hash = async (password, options) => `fake:${(await realHash(password, options)).length}:${password}`;
  argon2.verify = async (stored, password) => {
    await sleep(2);
    return String(stored).endsWith(`:${password}`);
  };
}
const samples = Number(args.samples);
const maxZ = Number(args['max-z']);
const warmup = Number(args.warmup);
const ADMIN = { username: 'timing-admin', password: 'timing-Admin-Passw0rd!' };

const dir = mkdtempSync(join(tmpdir(), 'edgectl-timing-'));
const configFile = join(dir, 'config.yml');
writeFileSync(
  configFile,
  ['edge:', '  api:', '    rateLimit:', '      auth:', '        enabled: false', ''].join('\n'),
);
const cfg = loadConfig({
  flags: { dataDir: join(dir, 'data'), listen: '127.0.0.1:0', config: configFile, logLevel: 'silent' },
  env: {},
});
const daemon = await startDaemon(cfg, { adminCredentials: async () => ADMIN });
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: daemon.pki.caBundlePem });

function post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any; ms: number }> {
  const payload = JSON.stringify(body);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${daemon.url}/edge/management/v1${path}`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
          ...(token ? { 'zt-session': token } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), ms });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

try {
  const login = await post('/authenticate?method=password', ADMIN);
  const token = login.body.data.token as string;
  const identity = await post('/identities', { name: 'timing-user', type: 'User', isAdmin: false }, token);
  const known = 'timing-user';
  const created = await post(
    '/authenticators',
    { identityId: identity.body.data.id, method: 'updb', username: known, password: 'timing-Passw0rd!' },
    token,
  );
  if (created.status !== 201) throw new Error(`authenticator create failed: ${created.status}`);

  const unknownMs: number[] = [];
  const wrongMs: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    // Interleaved, and the order alternates, so drift on the machine hits both kinds alike.
    const kinds = i % 2 === 0 ? (['unknown', 'wrong'] as const) : (['wrong', 'unknown'] as const);
    for (const kind of kinds) {
      const res = await post('/authenticate?method=password', {
        username: kind === 'unknown' ? `nobody-${i}` : known,
        password: `wrong-${i}-password`,
      });
      if (res.status !== 401) throw new Error(`expected 401 for ${kind}, got ${res.status}`);
      if (i >= warmup) (kind === 'unknown' ? unknownMs : wrongMs).push(res.ms);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const z = mannWhitneyZ(unknownMs, wrongMs);
  console.log(`Argon2id: ${args['real-argon2'] ? 'real' : 'fixed 2 ms stand-in'}`);
  console.log(
    `samples ${samples} each; median unknown username ${median(unknownMs).toFixed(2)} ms, wrong password ${median(wrongMs).toFixed(2)} ms`,
  );
  console.log(`Mann-Whitney z = ${z.toFixed(2)} (limit |z| <= ${maxZ})`);
  if (Math.abs(z) > maxZ) {
    console.error('FAIL: the answer time tells unknown usernames from wrong passwords');
    process.exitCode = 1;
  } else {
    console.log('ok: no distinguishable difference');
  }
} finally {
  agent.destroy();
  await daemon.close();
  rmSync(dir, { recursive: true, force: true });
}
