/**
 * Builds a benchmark model in a data dir (or a PostgreSQL database), by one of two paths: in process through the
 * same model services the API uses (resource definitions, generic create with its hooks and policy matching), in
 * large transactions for speed (`store`, the small to large sizes' default); or through the Management API of the
 * built controller, by concurrent clients, as a user would provision a network (`api`, bench/provision.ts; the
 * xlarge size's default, whose build time is a target). Sizes and attribute spread follow the reference's
 * scenarios (docs/reference-notes.md §12); xlarge is large scaled ten times, with 2,500 policies of each kind.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import https from 'node:https';
import { openStore, withTx } from '../src/store/db.js';
import { loadOrCreateControllerPki, PKI_FILES, writeCaBundle, type ControllerPki } from '../src/pki/ca.js';
import { MasterKey } from '../src/pki/master-key.js';
import { loadOrCreateSharedSecrets } from '../src/model/controller-secrets.js';
import { BENCH_MASTER_KEY } from './master-key.js';
import { send } from './load.js';
import { provisionModel, type Provisioned } from './provision.js';
import { ADMIN, spawnController } from './stack.js';
import { pkiCapability } from '../src/daemon/pki-capability.js';
import { createEntity } from '../src/model/crud.js';
import { silentLogger, withDb, type Ctx } from '../src/model/ctx.js';
import { tokenMinter } from '../src/model/tokens.js';
import { createApiSession } from '../src/model/services/api-session/api-session.js';
import { RESOURCE_HOOKS } from '../src/model/services/hooks/index.js';
import { loadOrCreateTokenKey } from '../src/daemon/token-key.js';
import {
  authenticators,
  edgeRouterPolicies,
  edgeRouters,
  identities,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
} from '../src/model/resources/index.js';

export interface Size {
  services: number;
  identities: number;
  edgeRouters: number;
  servicePolicies: number;
  edgeRouterPolicies: number;
  serviceEdgeRouterPolicies: number;
}

export const SIZES: Record<string, Size> = {
  small: {
    services: 20,
    identities: 100,
    edgeRouters: 10,
    servicePolicies: 10,
    edgeRouterPolicies: 10,
    serviceEdgeRouterPolicies: 10,
  },
  medium: {
    services: 100,
    identities: 5000,
    edgeRouters: 100,
    servicePolicies: 50,
    edgeRouterPolicies: 50,
    serviceEdgeRouterPolicies: 25,
  },
  large: {
    services: 2000,
    identities: 100000,
    edgeRouters: 500,
    servicePolicies: 250,
    edgeRouterPolicies: 250,
    serviceEdgeRouterPolicies: 100,
  },
  xlarge: {
    services: 20000,
    identities: 1000000,
    edgeRouters: 5000,
    servicePolicies: 2500,
    edgeRouterPolicies: 2500,
    serviceEdgeRouterPolicies: 2500,
  },
};

/** The build path of each size unless the bench is told otherwise (`--build`). */
export const DEFAULT_BUILD: Record<string, BuildPath> = { xlarge: 'api' };

/** Eight attributes held by 1/2, 1/2, 1/3, 1/4, 1/5, 1/8, 1/10 and 1/10 of the entities. */
const SPREAD = [2, 2, 3, 4, 5, 8, 10, 10];
export const ATTRS = SPREAD.map((_, k) => `attr${k}`);

export function attributesOf(i: number): string[] {
  // Different offsets per attribute so the two "half" attributes select different halves.
  return SPREAD.flatMap((d, k) => ((((i + k * 7) * 2654435761) % 4294967296) % d === 0 ? [ATTRS[k]!] : []));
}

/** Role lists for policy j: one or two attributes, AllOf for a third of the policies, AnyOf for the rest. */
function rolesFor(j: number, salt: number): { roles: string[]; semantic: 'AllOf' | 'AnyOf' } {
  const a = ATTRS[(j + salt) % 8]!;
  const b = ATTRS[(j * 3 + salt + 1) % 8]!;
  const semantic = j % 3 === 0 ? 'AllOf' : 'AnyOf';
  return { roles: a === b || j % 2 === 0 ? [`#${a}`] : [`#${a}`, `#${b}`], semantic };
}

export interface PolicyBody {
  path: '/service-policies' | '/edge-router-policies' | '/service-edge-router-policies';
  body: Record<string, unknown>;
}

/**
 * The model's policies, as Management API bodies: the size's service, edge router and service edge router
 * policies, then the scenarios' own: every load client can Dial and Bind something (`clients`: their identity
 * ids) and reach a router through `#all` policies.
 */
export function policyBodies(size: Size, clients: string[], serviceIds: string[]): PolicyBody[] {
  const out: PolicyBody[] = [];
  for (let j = 0; j < size.servicePolicies; j++) {
    const ids = rolesFor(j, 0);
    const svc = rolesFor(j, 3);
    out.push({
      path: '/service-policies',
      body: {
        name: `sp-${j}`,
        type: j % 2 === 0 ? 'Dial' : 'Bind',
        semantic: ids.semantic,
        identityRoles: ids.roles,
        serviceRoles: svc.roles,
      },
    });
  }
  for (let j = 0; j < size.edgeRouterPolicies; j++) {
    const ids = rolesFor(j, 1);
    out.push({
      path: '/edge-router-policies',
      body: {
        name: `erp-${j}`,
        semantic: ids.semantic,
        identityRoles: ids.roles,
        edgeRouterRoles: rolesFor(j, 5).roles,
      },
    });
  }
  for (let j = 0; j < size.serviceEdgeRouterPolicies; j++) {
    const svc = rolesFor(j, 2);
    out.push({
      path: '/service-edge-router-policies',
      body: {
        name: `serp-${j}`,
        semantic: svc.semantic,
        serviceRoles: svc.roles,
        edgeRouterRoles: rolesFor(j, 6).roles,
      },
    });
  }
  const dialBind = (type: 'Dial' | 'Bind', service: string): PolicyBody => ({
    path: '/service-policies',
    body: {
      name: `sp-bench-${type.toLowerCase()}`,
      type,
      semantic: 'AnyOf',
      identityRoles: clients.map((id) => `@${id}`),
      serviceRoles: [`@${service}`],
    },
  });
  out.push(
    {
      path: '/edge-router-policies',
      body: { name: 'erp-all', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] },
    },
    {
      path: '/service-edge-router-policies',
      body: { name: 'serp-all', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] },
    },
    dialBind('Dial', serviceIds[0]!),
    dialBind('Bind', serviceIds[1] ?? serviceIds[0]!),
  );
  return out;
}

export interface BuiltModel {
  /** Identities with a password authenticator, for the load clients: [username, password]. */
  users: { id: string; username: string; password: string }[];
  serviceIds: string[];
  /**
   * API sessions made directly in the store for the new-session scenario, round-robin over the users:
   * their tokens, and the index of the user each belongs to.
   */
  fresh: { token: string; user: number }[];
  /** The build's wall time: through the API, the provisioning's alone (the fresh API sessions are bench setup). */
  seconds: number;
  /** Built through the Management API: its connections, wall time, and each kind's creates and time. */
  api?: { connections: number; seconds: number; kinds: Provisioned['kinds']; controllerPeakRssMiB: number };
}

const USER_PASSWORD = 'bench-Passw0rd!';

/**
 * The PKI and token key of a model built into PostgreSQL: those the database holds (made now on a new one). The
 * bare baseline server reads the server's certificate and key from the data dir, so they are written there too,
 * with the public CA bundle the load clients trust.
 */
async function sharedSecrets(
  store: Awaited<ReturnType<typeof openStore>>,
  dataDir: string,
): Promise<{ pki: ControllerPki; tokenKey: Buffer }> {
  const shared = await loadOrCreateSharedSecrets(store.db, new MasterKey(BENCH_MASTER_KEY), {
    hosts: ['127.0.0.1'],
    where: store.location,
  });
  const pkiDir = join(dataDir, 'pki');
  writeCaBundle(pkiDir, shared.pki.caBundlePem);
  writeFileSync(join(pkiDir, PKI_FILES.serverCert), shared.pki.serverCertPem);
  writeFileSync(join(pkiDir, PKI_FILES.intermediateCert), shared.pki.intermediateCertPem);
  writeFileSync(join(pkiDir, PKI_FILES.serverKey), shared.pki.serverKeyPem, { mode: 0o600 });
  chmodSync(join(pkiDir, PKI_FILES.serverKey), 0o600);
  return { pki: shared.pki, tokenKey: shared.tokenKey };
}

/**
 * The PKI and token key the controller started on this data dir (or database) reads too, so the tokens made
 * with them stay valid: the data dir's files on SQLite, the database's sealed secrets on PostgreSQL.
 */
async function modelSecrets(
  store: Awaited<ReturnType<typeof openStore>>,
  dataDir: string,
  db: string | undefined,
): Promise<{ pki: ControllerPki; tokenKey: Buffer }> {
  return db
    ? sharedSecrets(store, dataDir)
    : {
        pki: await loadOrCreateControllerPki(join(dataDir, 'pki'), { hosts: ['127.0.0.1'] }),
        tokenKey: loadOrCreateTokenKey(dataDir).key,
      };
}

/** The model services' context over an open store (the settings are the controller's defaults). */
function modelCtx(store: Awaited<ReturnType<typeof openStore>>, s: { pki: ControllerPki; tokenKey: Buffer }): Ctx {
  return {
    db: store.db,
    now: () => new Date(),
    settings: {
      sessionTimeoutMs: 30 * 60_000,
      identityEnrollmentDurationMs: 3 * 3600_000,
      routerEnrollmentDurationMs: 3 * 3600_000,
    },
    log: silentLogger,
    pki: pkiCapability(s.pki, () => 'https://127.0.0.1:1280'),
    tokens: tokenMinter(s.tokenKey),
    hooks: RESOURCE_HOOKS,
  } as Ctx;
}

/**
 * New fresh API sessions for a model kept by an earlier run (`--keep`): its own ran out of use or expired (the
 * session timeout ends them 30 minutes after their last use). Made in the stopped controller's store for the
 * model's users (their password authenticators read back), and written into the kept bench-model.json.
 */
export async function renewFreshApiSessions(dataDir: string, count: number, db?: string): Promise<BuiltModel['fresh']> {
  const file = join(dataDir, 'bench-model.json');
  const model = JSON.parse(readFileSync(file, 'utf8')) as BuiltModel;
  const store = await openStore(db ?? join(dataDir, 'edgectl.db'));
  try {
    const ctx = modelCtx(store, await modelSecrets(store, dataDir, db));
    const rows = await store.db
      .selectFrom('authenticators')
      .select(['id', 'identityId'])
      .where('method', '=', 'updb')
      .where(
        'identityId',
        'in',
        model.users.map((u) => u.id),
      )
      .execute();
    const byIdentity = new Map(rows.map((r) => [r.identityId, r.id]));
    const authenticatorIds = model.users.map((u) => {
      const id = byIdentity.get(u.id);
      if (!id) throw new Error(`the kept model's user ${u.username} has no password authenticator`);
      return id;
    });
    model.fresh = await makeFreshApiSessions(ctx, model.users, authenticatorIds, count);
  } finally {
    await store.close();
  }
  writeFileSync(file, JSON.stringify(model) + '\n', { mode: 0o600 });
  return model.fresh;
}

/** How a model is built: in process through the model services (`store`), or through the Management API (`api`). */
export type BuildPath = 'store' | 'api';

export async function buildModel(
  dataDir: string,
  size: Size,
  loginUsers: number,
  freshApiSessions = 0,
  /** A PostgreSQL store (postgres://…) to build into instead of the SQLite file in the data dir. */
  db?: string,
  /** `api`: a controller is started on the data dir (or database) and `connections` clients provision it. */
  via: BuildPath = 'store',
  connections = 16,
): Promise<BuiltModel> {
  const started = performance.now();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let store = await openStore(db ?? join(dataDir, 'edgectl.db'));
  const secrets = await modelSecrets(store, dataDir, db);
  let ctx = modelCtx(store, secrets);

  const inBatches = async (n: number, batch: number, make: (tctx: Ctx, i: number) => Promise<unknown>) => {
    for (let start = 0; start < n; start += batch) {
      await withTx(ctx.db, async (trx) => {
        const tctx = withDb(ctx, trx);
        for (let i = start; i < Math.min(n, start + batch); i++) await make(tctx, i);
      });
    }
  };

  let users: BuiltModel['users'];
  let serviceIds: string[];
  let authenticatorIds: string[];
  let api: BuiltModel['api'];
  if (via === 'api') {
    // The store is the controller's while it runs; the fresh API sessions below are made after it stopped.
    await store.close();
    const built = await buildThroughApi(dataDir, size, loginUsers, connections, db);
    users = built.users.map(({ id, username, password }) => ({ id, username, password }));
    authenticatorIds = built.users.map((u) => u.authenticatorId);
    serviceIds = built.serviceIds;
    api = {
      connections,
      seconds: built.seconds,
      kinds: built.kinds,
      controllerPeakRssMiB: built.controllerPeakRssMiB,
    };
    store = await openStore(db ?? join(dataDir, 'edgectl.db'));
    ctx = modelCtx(store, secrets);
  } else {
    ({ users, serviceIds, authenticatorIds } = await buildInProcess(ctx, size, loginUsers, inBatches));
  }

  const fresh = await makeFreshApiSessions(ctx, users, authenticatorIds, freshApiSessions);
  await store.close();
  const seconds = (performance.now() - started) / 1000;
  return { users, serviceIds, fresh, seconds: api?.seconds ?? seconds, ...(api && { api }) };
}

/**
 * API sessions made directly in the store, round-robin over the users, as many as a login would make but
 * without an Argon2id verification each (the new-session scenario needs a fresh (API session, service) pair per
 * request; a login per pair would measure Argon2id). `authenticatorIds[i]` is user i's password authenticator.
 */
export async function makeFreshApiSessions(
  ctx: Ctx,
  users: readonly { id: string }[],
  authenticatorIds: readonly string[],
  count: number,
): Promise<BuiltModel['fresh']> {
  const fresh: BuiltModel['fresh'] = [];
  const n = users.length ? count : 0;
  for (let start = 0; start < n; start += 5000) {
    await withTx(ctx.db, async (trx) => {
      const t = withDb(ctx, trx);
      for (let k = start; k < Math.min(n, start + 5000); k++) {
        const user = k % users.length;
        const id = await createApiSession(t, {
          identityId: users[user]!.id,
          authenticatorId: authenticatorIds[user]!,
          ipAddress: '127.0.0.1',
          configTypes: [],
        });
        fresh.push({ token: t.tokens.token('api-session', id), user });
      }
    });
  }
  return fresh;
}

/** The in-process build: the model services in large transactions. */
async function buildInProcess(
  ctx: Ctx,
  size: Size,
  loginUsers: number,
  inBatches: (n: number, batch: number, make: (tctx: Ctx, i: number) => Promise<unknown>) => Promise<void>,
): Promise<{ users: BuiltModel['users']; serviceIds: string[]; authenticatorIds: string[] }> {
  const serviceIds: string[] = [];
  await inBatches(size.services, 500, async (t, i) => {
    serviceIds.push(
      await createEntity(t, services, { name: `svc-${i}`, encryptionRequired: true, roleAttributes: attributesOf(i) }),
    );
  });
  await inBatches(size.edgeRouters, 500, (t, i) =>
    createEntity(t, edgeRouters, { name: `er-${i}`, roleAttributes: attributesOf(i), isTunnelerEnabled: false }),
  );
  const users: BuiltModel['users'] = [];
  // Zero-padded (id-00000 … id-99999 at the large size), so a prefix such as "id-0" matches a tenth of the
  // identities: the management search scenario answers 100 of 10,000 matches at the large size.
  const idWidth = String(Math.max(0, size.identities - 1)).length;
  await inBatches(size.identities, 2000, async (t, i) => {
    const id = await createEntity(t, identities, {
      name: `id-${String(i).padStart(idWidth, '0')}`,
      type: 'User',
      isAdmin: false,
      roleAttributes: attributesOf(i),
    });
    if (i < loginUsers) {
      users.push({ id, username: `user-${i}`, password: USER_PASSWORD });
    }
  });
  // Password hashing is deliberately slow; only the load clients get authenticators.
  const authenticatorIds: string[] = [];
  // One by one outside any transaction: Argon2id never runs inside one (docs/decisions.md).
  for (const u of users) {
    authenticatorIds.push(
      await createEntity(ctx, authenticators, {
        identityId: u.id,
        method: 'updb',
        username: u.username,
        password: USER_PASSWORD,
      }),
    );
  }
  const byPath = {
    '/service-policies': servicePolicies,
    '/edge-router-policies': edgeRouterPolicies,
    '/service-edge-router-policies': serviceEdgeRouterPolicies,
  } as const;
  const policies = policyBodies(
    size,
    users.map((u) => u.id),
    serviceIds,
  );
  await inBatches(policies.length, 50, (t, j) => createEntity(t, byPath[policies[j]!.path], policies[j]!.body));
  return { users, serviceIds, authenticatorIds };
}

/**
 * The build through the Management API: the built controller started on the data dir (or database) as the bench
 * starts it, the bench's admin logged in, `provisionModel` run, the controller stopped. Its wall time is the
 * controller's start to the last create's answer.
 */
async function buildThroughApi(
  dataDir: string,
  size: Size,
  loginUsers: number,
  connections: number,
  db: string | undefined,
): Promise<Provisioned & { seconds: number; controllerPeakRssMiB: number }> {
  const started = performance.now();
  const port = await freePort();
  const child = spawnController(dataDir, port, undefined, db ? { db } : {});
  const stopped = new Promise((r) => child.once('exit', r));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  try {
    const target = {
      ca: readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8'),
      base: `https://127.0.0.1:${port}`,
    };
    const agent = new https.Agent({ keepAlive: true, ca: target.ca });
    let adminToken: string | undefined;
    for (let waited = 0; adminToken === undefined; waited += 100) {
      const res = await send(target, agent, {
        method: 'POST',
        path: '/edge/management/v1/authenticate?method=password',
        body: ADMIN,
      }).catch(() => undefined);
      if (res?.status === 200) adminToken = (JSON.parse(res.body) as { data: { token: string } }).data.token;
      else if (waited > 60_000 || child.exitCode !== null) throw new Error('the controller did not start');
      else await new Promise((r) => setTimeout(r, 100));
    }
    agent.destroy();
    const built = await provisionModel({
      target,
      adminToken,
      size,
      loginUsers,
      password: USER_PASSWORD,
      connections,
    });
    const seconds = (performance.now() - started) / 1000;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    child.kill('SIGTERM');
    await stopped;
    return { ...built, seconds, controllerPeakRssMiB: hwm ? Number(hwm[1]) / 1024 : NaN };
  } finally {
    process.off('exit', kill);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await stopped;
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
