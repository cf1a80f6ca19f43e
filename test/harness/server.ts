/**
 * Test servers: a real controller (the same `startDaemon` as `edgectl serve`) on 127.0.0.1 with an
 * ephemeral port and a temporary data dir, plus API clients bound to it. Fixture helpers return values
 * and never assert.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/daemon/config.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/daemon.js';
import { request, type HttpResponse, type RequestOptions } from './http.js';

export const ADMIN = { username: 'admin', password: 'admin-Passw0rd!' };

/**
 * The controller's clock in tests. `running` follows real time plus every `advance` (an advance is like time
 * passing); `frozen` moves only by `advance`, so expiries, idle timeouts and lockouts happen exactly when a
 * test says and never because the machine is slow.
 */
export class TestClock {
  private offsetMs = 0;
  private readonly frozenAt: number | undefined;
  constructor(mode: 'running' | 'frozen') {
    this.frozenAt = mode === 'frozen' ? Date.now() : undefined;
  }
  now = (): Date => new Date((this.frozenAt ?? Date.now()) + this.offsetMs);
  advance(ms: number): void {
    if (ms < 0) throw new Error('the clock only moves forward');
    this.offsetMs += ms;
  }
  /** An ISO timestamp `ms` after the controller's now. */
  in(ms: number): string {
    return new Date(this.now().getTime() + ms).toISOString();
  }
}

export interface TestServer {
  url: string;
  dataDir: string;
  ca: string;
  daemon: RunningDaemon;
  clock: TestClock;
  /** Runs the background sweeper once (expired API sessions and session certificates), now. */
  sweep(): Promise<void>;
  client(api?: 'management' | 'client'): ApiClient;
  /** A management client logged in as the default admin. */
  admin(): Promise<ApiClient>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Extra YAML for the config file (e.g. `edge:\n  api:\n    sessionTimeout: 2s`). */
  yaml?: string;
  /** The controller's clock (default `running`); see TestClock. */
  clock?: 'running' | 'frozen';
}

export async function startTestServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgectl-test-'));
  let configFile: string | undefined;
  if (opts.yaml) {
    configFile = join(dataDir, 'config.yml');
    writeFileSync(configFile, opts.yaml);
  }
  const cfg = loadConfig({
    flags: {
      dataDir: join(dataDir, 'data'),
      listen: '127.0.0.1:0',
      config: configFile,
      logLevel: process.env.EDGECTL_TEST_LOG ?? 'silent',
    },
    env: {},
  });
  const clock = new TestClock(opts.clock ?? 'running');
  // With a frozen clock nothing falls due on its own: the test sweeps when it has moved the clock.
  const daemon = await startDaemon(cfg, {
    adminCredentials: async () => ADMIN,
    now: clock.now,
    backgroundSweep: opts.clock !== 'frozen',
  });
  const ca = daemon.pki.caBundlePem;
  const server: TestServer = {
    url: daemon.url,
    dataDir: cfg.dataDir,
    ca,
    daemon,
    clock,
    sweep: () => daemon.sweepNow(),
    client: (api = 'management') => new ApiClient(ca, `${daemon.url}/edge/${api}/v1`),
    async admin() {
      const c = server.client('management');
      await c.login(ADMIN.username, ADMIN.password);
      return c;
    },
    async close() {
      await daemon.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A client of one API; `token` is sent as `zt-session` (or `svc-session` when `header` says so). */
export class ApiClient {
  token?: string;
  header: 'zt-session' | 'svc-session' = 'zt-session';
  constructor(
    readonly ca: string,
    readonly base: string,
  ) {}

  withToken(token: string | undefined): ApiClient {
    const c = new ApiClient(this.ca, this.base);
    c.token = token;
    c.header = this.header;
    return c;
  }

  other(api: 'management' | 'client'): ApiClient {
    const c = new ApiClient(this.ca, this.base.replace(/\/edge\/(client|management)\/v1$/, `/edge/${api}/v1`));
    c.token = this.token;
    return c;
  }

  req(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
    const headers = { ...(this.token ? { [this.header]: this.token } : {}), ...opts.headers };
    return request(this.ca, method, this.base + path, { ...opts, headers });
  }
  get = (path: string, opts?: RequestOptions) => this.req('GET', path, opts);
  post = (path: string, body?: unknown, opts?: RequestOptions) => this.req('POST', path, { ...opts, body });
  put = (path: string, body?: unknown, opts?: RequestOptions) => this.req('PUT', path, { ...opts, body });
  patch = (path: string, body?: unknown, opts?: RequestOptions) => this.req('PATCH', path, { ...opts, body });
  delete = (path: string, opts?: RequestOptions) => this.req('DELETE', path, opts);

  /** Authenticates with a password; returns the response (the token is kept on success). */
  async login(username: string, password: string, extra: Record<string, unknown> = {}): Promise<HttpResponse> {
    const res = await this.post('/authenticate?method=password', { username, password, ...extra });
    if (res.status === 200) this.token = res.body.data.token;
    return res;
  }
}

/** Creates any record through the API and returns its id (fixture: no assertions, throws on refusal). */
export async function createRecord(client: ApiClient, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await client.post(path, body);
  if (res.status !== 201) throw new Error(`create ${path} failed: ${res.status} ${res.text}`);
  return res.body.data.id;
}

/** Creates a posture check of the type with a unique name and returns its id. */
export const createPostureCheck = (admin: ApiClient, typeId: string, body: Record<string, unknown>): Promise<string> =>
  createRecord(admin, '/posture-checks', {
    name: `pc-${typeId}-${Math.random().toString(36).slice(2, 10)}`,
    typeId,
    ...body,
  });

/** Creates an identity and returns its id (fixture: no assertions). */
export async function createIdentity(admin: ApiClient, body: Record<string, unknown> = {}): Promise<string> {
  const res = await admin.post('/identities', {
    name: `id-${Math.random().toString(36).slice(2, 10)}`,
    type: 'User',
    isAdmin: false,
    ...body,
  });
  if (res.status !== 201) throw new Error(`identity create failed: ${res.status} ${res.text}`);
  return res.body.data.id;
}

/** Creates an identity with a password authenticator and returns a client logged in as it. */
export async function createUser(
  server: TestServer,
  admin: ApiClient,
  opts: {
    username?: string;
    password?: string;
    identity?: Record<string, unknown>;
    api?: 'management' | 'client';
  } = {},
): Promise<{ id: string; username: string; password: string; client: ApiClient }> {
  const username = opts.username ?? `user-${Math.random().toString(36).slice(2, 10)}`;
  const password = opts.password ?? 'user-Passw0rd!';
  const id = await createIdentity(admin, { name: username, ...opts.identity });
  const res = await admin.post('/authenticators', { identityId: id, method: 'updb', username, password });
  if (res.status !== 201) throw new Error(`authenticator create failed: ${res.status} ${res.text}`);
  const client = server.client(opts.api ?? 'client');
  await client.login(username, password);
  return { id, username, password, client };
}
