/**
 * A benchmark stack for the quick guard (bench/quick.ts) and the independent bench (bench/independent/):
 * a model built in its own process (bench/build-model.ts), the built controller (`bin/edgectl serve`, dist/ as
 * it is: nothing is rebuilt) and the bare same-bytes server (bench/baseline-server.ts), each in its own
 * process, with the load users and the admin logged in. The same setup as bench/run.ts (login rate limits
 * lifted because all load comes from one address, `--log-level warn`), in a reusable form.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import { send } from './load.js';
import type { Req } from './cannon.js';
import { BENCH_MASTER_KEY } from './master-key.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLIENT = '/edge/client/v1';
export const MGMT = '/edge/management/v1';
export const ADMIN = { username: 'bench-admin', password: 'bench-Admin-Passw0rd!' };

/**
 * Starts the built controller on a model's data dir (`bin/edgectl serve`, `--log-level warn`), with the login rate
 * limits lifted: all load comes from one address and a few accounts, so the flood guards (README "Security") would
 * otherwise measure the limiter, not authentication. `profDir`: a V8 CPU profile of the controller goes there;
 * `metrics`: `/metrics` on the main listener; `db`: the PostgreSQL store (`--db`) instead of the data dir's SQLite;
 * `root`: another build's tree (its `bin/` and `dist/`) instead of this one's.
 */
export function spawnController(
  dataDir: string,
  port: number,
  profDir?: string,
  opts: { metrics?: boolean; db?: string; root?: string } = {},
): ChildProcess {
  const configFile = join(dataDir, 'bench-config.yaml');
  const unlimited = '{ burst: 1000000000, perMinute: 1000000000 }';
  writeFileSync(
    configFile,
    'edge:\n  api:\n    rateLimit:\n      auth:\n' +
      ['perSource', 'failuresPerSource', 'failuresPerAccount'].map((k) => `        ${k}: ${unlimited}\n`).join('') +
      // Off for the measured scenarios (it adds a hook to every request); the provisioning writes read it.
      (opts.metrics ? 'metrics:\n  enabled: true\n' : ''),
  );
  return spawn(
    process.execPath,
    [
      ...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []),
      'bin/edgectl',
      'serve',
      '--data-dir',
      dataDir,
      '--listen',
      `127.0.0.1:${port}`,
      '--log-level',
      'warn',
      '--config',
      configFile,
      ...(opts.db ? ['--db', opts.db] : []),
    ],
    {
      cwd: opts.root ?? ROOT,
      env: controllerEnv(opts.db !== undefined),
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

/**
 * The bench's environment for a controller: the admin to create, no store but the one `--db` names, and on
 * PostgreSQL the master key the model's build sealed the PKI and token key under.
 */
function controllerEnv(postgres: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    EDGECTL_ADMIN_USERNAME: ADMIN.username,
    EDGECTL_ADMIN_PASSWORD: ADMIN.password,
  };
  delete env.EDGECTL_DB_URL;
  delete env.EDGECTL_MASTER_KEY;
  if (postgres) env.EDGECTL_MASTER_KEY = BENCH_MASTER_KEY;
  return env;
}

export interface Server {
  pid: number;
  origin: string;
}

export interface Stack {
  dataDir: string;
  ca: string;
  controller: Server;
  bare: Server;
  /** One API session token per load user (each identity has its own access view). */
  tokens: string[];
  /** The load users' credentials, in the order of `tokens`. */
  users: { username: string; password: string }[];
  /** API sessions made by the model build without a login (`fresh` option), each of load user `user`. */
  fresh: { token: string; user: number }[];
  adminToken: string;
  serviceIds: string[];
  /** One request to the controller (or the bare server) outside the measured load. */
  call(server: Server, r: Req): Promise<{ status: number; body: string }>;
  /** Asks the controller once and primes the bare server with that answer; returns the bare server's request. */
  prime(key: string, sample: Req, ok?: number[]): Promise<{ bareRequest: Req; bytes: number; status: number }>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function onExit(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', () => r()));
}

export async function startStack(
  opts: {
    size?: string;
    loginUsers?: number;
    fresh?: number;
    /** A data dir kept by `bench/run.ts --keep`, used instead of building one (and kept at the end). */
    model?: string;
  } = {},
): Promise<Stack> {
  const size = opts.size ?? 'small';
  const dataDir = opts.model ?? mkdtempSync(join(tmpdir(), `edgectl-bench-${size}-`));
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(children.map(onExit));
    if (!opts.model) rmSync(dataDir, { recursive: true, force: true });
  };
  const script = async (args: string[], what: string) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    if (code !== 0) throw new Error(`${what} exited ${code}`);
    return out;
  };
  try {
    // A kept model gets new fresh API sessions (its own were used or expired), then is read as it was kept.
    if (opts.model && opts.fresh)
      await script(['bench/renew-sessions.ts', dataDir, String(opts.fresh)], 'renewing the fresh API sessions');
    const out = opts.model
      ? readFileSync(join(dataDir, 'bench-model.json'), 'utf8')
      : await script(
          ['bench/build-model.ts', dataDir, size, String(opts.loginUsers ?? 16), String(opts.fresh ?? 0)],
          `building the ${size} model`,
        );
    const model = JSON.parse(out.trim().split('\n').pop()!) as {
      users: { username: string; password: string }[];
      serviceIds: string[];
      fresh: { token: string; user: number }[];
    };

    const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
    const agent = new https.Agent({ keepAlive: true, ca });
    const call = (server: Server, r: Req) =>
      send({ ca, base: server.origin }, agent, {
        method: r.method,
        path: r.path,
        headers: r.headers,
        body: r.body === undefined ? undefined : JSON.parse(r.body),
      });

    const port = await freePort();
    const ctl = spawnController(dataDir, port);
    children.push(ctl);
    const controller: Server = { pid: ctl.pid!, origin: `https://127.0.0.1:${port}` };
    for (let waited = 0; ; waited += 100) {
      const up = await call(controller, { method: 'GET', path: '/version' }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      if (waited > 60_000 || ctl.exitCode !== null) throw new Error('the controller did not start');
      await new Promise((r) => setTimeout(r, 100));
    }

    const bareChild = spawn(process.execPath, ['--import', 'tsx', 'bench/baseline-server.ts', join(dataDir, 'pki')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(bareChild);
    const bareOrigin = await new Promise<string>((resolve, reject) => {
      let buf = '';
      bareChild.stdout.on('data', (c) => {
        buf += c;
        const line = buf.split('\n').find((l) => l.startsWith('https://'));
        if (line) resolve(line.trim());
      });
      bareChild.on('exit', (c) => reject(new Error(`the bare server exited ${c} before it was ready`)));
    });
    const bare: Server = { pid: bareChild.pid!, origin: bareOrigin };

    const login = async (username: string, password: string, api: string) => {
      const res = await call(controller, {
        method: 'POST',
        path: `${api}/authenticate?method=password`,
        body: JSON.stringify({ username, password }),
      });
      if (res.status !== 200) throw new Error(`login ${username}: ${res.status}`);
      return (JSON.parse(res.body) as { data: { token: string } }).data.token;
    };
    const tokens = await Promise.all(model.users.map((u) => login(u.username, u.password, CLIENT)));
    const adminToken = await login(ADMIN.username, ADMIN.password, MGMT);

    const prime = async (key: string, sample: Req, ok = [200]) => {
      const res = await call(controller, sample);
      if (!ok.includes(res.status)) throw new Error(`${key}: ${res.status} ${res.body}`);
      const primed = await call(bare, {
        method: 'POST',
        path: '/__prime',
        body: JSON.stringify({ key, status: res.status, body: res.body }),
      });
      if (primed.status !== 200) throw new Error(`priming the bare server: ${primed.status}`);
      return {
        bareRequest: { ...sample, path: `/same/${key}` },
        bytes: Buffer.byteLength(res.body),
        status: res.status,
      };
    };

    return {
      dataDir,
      ca,
      controller,
      bare,
      tokens,
      users: model.users.map(({ username, password }) => ({ username, password })),
      fresh: model.fresh,
      adminToken,
      serviceIds: model.serviceIds,
      call,
      prime,
      stop: async () => {
        agent.destroy();
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
