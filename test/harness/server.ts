/**
 * Test servers: a real controller (the same `startDaemon` as `edgectl serve`) listening on 127.0.0.1 with an
 * ephemeral port and a temporary data dir, plus API clients bound to it. The clients hand their requests to the
 * controller's app in-process by default (no TLS handshake per request); a test whose subject is the connection
 * (TLS, client certificates, connection limits) asks for `transport: 'tls'`, and a request that presents a
 * client certificate always goes over TLS. Fixture helpers return values and never assert.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sql } from 'kysely';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type DaemonConfig } from '../../src/daemon/config.js';
import { DB_FILE, startDaemon, type RunningDaemon } from '../../src/daemon/daemon.js';
import { BodyValidators } from '../../src/daemon/http/validators.js';
import type { PasswordCost } from '../../src/model/password.js';
import type { ScryptParams } from '../../src/pki/index.js';
import { makeTemplateStore } from './store-template.js';
import { injectTransport, tlsTransport, type HttpResponse, type RequestOptions, type Transport } from './http.js';
import { freshDatabase, testStoreKind } from './pg.js';
import { schemaGuard } from './schemas.js';

export const ADMIN = { username: 'admin', password: 'admin-Passw0rd!' };

/** The master key test servers on PostgreSQL seal their PKI and token key under (docs/decisions.md, "Shared controller secrets"). */
import { TEST_MASTER_KEY } from './master-key.js';

export { TEST_MASTER_KEY };

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
  /** The PostgreSQL database the server uses (undefined: the SQLite file in its data dir). */
  dbUrl?: string;
  ca: string;
  daemon: RunningDaemon;
  clock: TestClock;
  /** How this server's clients reach it (see StartOptions.transport). */
  transport: Transport;
  /** One request to a path below the root URL (`/version`, `/edge/client/v1/...`) through `transport`. */
  request(method: string, path: string, opts?: RequestOptions): Promise<HttpResponse>;
  /**
   * Runs the background sweeper once (expired API sessions and session certificates), now: whether it ran (false:
   * another controller sharing the store runs the periodic work).
   */
  sweep(): Promise<boolean>;
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
  /**
   * How the clients' requests reach the controller: `inject` (default) in-process through the app, `tls` over
   * HTTPS to the listener, for tests whose subject is the connection. The listener runs either way.
   */
  transport?: 'inject' | 'tls';
  /**
   * Serve this PostgreSQL database (a replica of a network another test server already serves, or one the test
   * made): the test owns it and drops it. Default: a store of the server's own.
   */
  db?: string;
  /** The store's engine when the test needs one: the run's (`EDGECTL_TEST_STORE`, SQLite by default) otherwise. */
  store?: 'sqlite' | 'postgres';
  /** Whether the background sweeper runs (default: unless the clock is frozen). */
  backgroundSweep?: boolean;
  /** Where a `stdout` event sink writes (default the process's stdout). */
  eventStdout?: NodeJS.WritableStream;
  /**
   * The master key of a server on PostgreSQL (default {@link TEST_MASTER_KEY}): servers on one database share the
   * PKI and token key the first one stored, sealed under it.
   */
  masterKey?: string;
  /**
   * Argon2id's cost for the passwords the server hashes: `test` (default) a cheap one, so the suite's thousands of
   * logins and new passwords cost no core; `production` the controller's own (PASSWORD_COST), as every server
   * started without one has (test/api/password-hashing-outside-transactions.test.ts checks it).
   */
  passwordCost?: 'test' | 'production';
  /**
   * scrypt's cost for the secrets a server on PostgreSQL seals under its master key: `test` (default) the least
   * a sealed value may name, so a start does not spend ~0.1 s of CPU deriving the key; `production` the
   * controller's own, as every server given its master key otherwise has (test/api/shared-secrets.test.ts checks it).
   */
  sealCost?: 'test' | 'production';
}

/** The test servers' Argon2id cost: the least Argon2 accepts (about 0.1 ms a hash instead of 6-7 ms). */
export const TEST_PASSWORD_COST: PasswordCost = Object.freeze({ memoryCost: 64, timeCost: 1 });

/** The test servers' scrypt cost for sealed secrets: the least a sealed value may name (1 MiB, about 3 ms). */
export const TEST_SEAL_COST: ScryptParams = Object.freeze({ log2N: 10, r: 8, p: 1 });

let template: Promise<string> | undefined;

/**
 * The body validators every test server of the process compiles into and takes from: the schemas and options are
 * the same constants for all of them (src/daemon/http/validators.ts).
 */
const bodyValidators = new BodyValidators();

/**
 * A store file with every migration applied and nothing else (store-template.ts): the test runner's, made once
 * for the whole run, or else one made once per test process. Each new data dir starts from a copy, so a start
 * checks it as it checks any existing store (quick_check, schema) instead of running every migration on an empty
 * file again. Nothing else is shared: each server makes its own PKI, token key and default admin.
 */
function migratedStore(): Promise<string> {
  const given = process.env.EDGECTL_TEST_STORE_TEMPLATE;
  if (given) return Promise.resolve(given);
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgectl-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, DB_FILE);
    await makeTemplateStore(file);
    return file;
  })();
  return template;
}

export async function startTestServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgectl-test-'));
  mkdirSync(join(dataDir, 'data'), { mode: 0o700 });
  const database = opts.db
    ? undefined
    : (opts.store ?? testStoreKind()) === 'postgres'
      ? await freshDatabase()
      : undefined;
  const dbUrl = opts.db ?? database?.url;
  if (!dbUrl) copyFileSync(await migratedStore(), join(dataDir, 'data', DB_FILE));
  let configFile: string | undefined;
  if (opts.yaml) {
    configFile = join(dataDir, 'config.yml');
    writeFileSync(configFile, opts.yaml);
  }
  const clock = new TestClock(opts.clock ?? 'running');
  let cfg: DaemonConfig;
  let daemon: RunningDaemon;
  try {
    cfg = loadConfig({
      flags: {
        dataDir: join(dataDir, 'data'),
        listen: '127.0.0.1:0',
        config: configFile,
        logLevel: process.env.EDGECTL_TEST_LOG ?? 'silent',
        ...(dbUrl && { db: dbUrl }),
      },
      env: dbUrl ? { EDGECTL_MASTER_KEY: opts.masterKey ?? TEST_MASTER_KEY } : {},
    });
    if (cfg.masterKey && opts.sealCost !== 'production')
      cfg = { ...cfg, masterKey: cfg.masterKey.sealingAt(TEST_SEAL_COST) };
    // With a frozen clock nothing falls due on its own: the test sweeps when it has moved the clock.
    daemon = await startDaemon(cfg, {
      adminCredentials: async () => ADMIN,
      now: clock.now,
      backgroundSweep: opts.backgroundSweep ?? opts.clock !== 'frozen',
      onSend: schemaGuard,
      bodyValidators,
      ...(opts.passwordCost !== 'production' && { passwordCost: TEST_PASSWORD_COST }),
      ...(opts.eventStdout && { eventStdout: opts.eventStdout }),
    });
  } catch (e) {
    // A start the test expects to be refused leaves nothing behind.
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const ca = daemon.pki.caBundlePem;
  const transport = opts.transport === 'tls' ? tlsTransport(ca) : injectTransport(daemon.app, ca);
  const server: TestServer = {
    url: daemon.url,
    dataDir: cfg.dataDir,
    ...(dbUrl && { dbUrl }),
    ca,
    daemon,
    clock,
    transport,
    request: (method, path, reqOpts) => transport(method, daemon.url + path, reqOpts),
    sweep: () => daemon.sweepNow(),
    client: (api = 'management') => new ApiClient(ca, `${daemon.url}/edge/${api}/v1`, transport),
    async admin() {
      const c = server.client('management');
      await c.login(ADMIN.username, ADMIN.password);
      return c;
    },
    async close() {
      await daemon.close();
      // Dropped in the background: a drop waits 0.1-0.4 s for the server's checkpoint, and nothing needs it done
      // (the name is this server's alone). The pending drop keeps the process alive until it ends; one that fails
      // or is cut short leaves a database the next run's orphan sweep drops (pg.ts).
      database?.drop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/**
 * A client of one API; `token` is sent as `zt-session` (or `svc-session` when `header` says so). Over HTTPS
 * unless given another transport (a test server's clients share the server's).
 */
export class ApiClient {
  token?: string;
  header: 'zt-session' | 'svc-session' = 'zt-session';
  constructor(
    readonly ca: string,
    readonly base: string,
    readonly transport: Transport = tlsTransport(ca),
  ) {}

  withToken(token: string | undefined): ApiClient {
    const c = new ApiClient(this.ca, this.base, this.transport);
    c.token = token;
    c.header = this.header;
    return c;
  }

  other(api: 'management' | 'client'): ApiClient {
    const c = new ApiClient(
      this.ca,
      this.base.replace(/\/edge\/(client|management)\/v1$/, `/edge/${api}/v1`),
      this.transport,
    );
    c.token = this.token;
    return c;
  }

  req(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
    const headers = { ...(this.token ? { [this.header]: this.token } : {}), ...opts.headers };
    return this.transport(method, this.base + path, { ...opts, headers });
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

/**
 * A new service the identity may Dial through one new edge router: a Dial policy (carrying `postureChecks`),
 * an edge router policy and a service edge router policy, all naming them by id. Returns the service's id.
 */
export async function dialableService(
  admin: ApiClient,
  identityId: string,
  postureChecks: readonly string[] = [],
): Promise<string> {
  const suffix = () => Math.random().toString(36).slice(2, 10);
  const service = await createRecord(admin, '/services', { name: `svc-${suffix()}`, encryptionRequired: true });
  const router = await createRecord(admin, '/edge-routers', { name: `er-${suffix()}` });
  await createRecord(admin, '/service-policies', {
    name: `sp-${suffix()}`,
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${identityId}`],
    serviceRoles: [`@${service}`],
    postureCheckRoles: postureChecks.map((c) => `@${c}`),
  });
  await createRecord(admin, '/edge-router-policies', {
    name: `erp-${suffix()}`,
    semantic: 'AnyOf',
    identityRoles: [`@${identityId}`],
    edgeRouterRoles: [`@${router}`],
  });
  await createRecord(admin, '/service-edge-router-policies', {
    name: `serp-${suffix()}`,
    semantic: 'AnyOf',
    serviceRoles: [`@${service}`],
    edgeRouterRoles: [`@${router}`],
  });
  return service;
}

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

/**
 * Everything the server's store holds, as bytes to search: the SQLite file and its write-ahead log as they are
 * on disk, or on PostgreSQL every row of every table in its text form (what a dump would carry).
 */
export async function storedBytes(server: TestServer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (server.daemon.store.kind === 'sqlite') {
    for (const name of [DB_FILE, `${DB_FILE}-wal`]) {
      const file = join(server.dataDir, name);
      if (existsSync(file)) out.set(name, readFileSync(file));
    }
    return out;
  }
  const db = server.daemon.store.db;
  const tables = await sql<{ name: string }>`select tablename as name from pg_tables
    where schemaname = current_schema()`.execute(db);
  for (const { name } of tables.rows) {
    const rows = await sql<{ line: string }>`select t::text as line from ${sql.table(name)} t`.execute(db);
    out.set(name, Buffer.from(rows.rows.map((r) => r.line).join('\n')));
  }
  return out;
}
