/**
 * Builds a benchmark model in a data dir through the same model services the API uses (resource
 * definitions, generic create with its hooks and policy matching), in large transactions for speed.
 * Sizes and attribute spread follow the reference's scenarios (docs/reference-notes.md §12).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, withTx } from '../src/store/db.js';
import { loadOrCreateControllerPki } from '../src/pki/ca.js';
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
};

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

export interface BuiltModel {
  /** Identities with a password authenticator, for the load clients: [username, password]. */
  users: { id: string; username: string; password: string }[];
  serviceIds: string[];
  /**
   * API sessions made directly in the store for the new-session scenario, round-robin over the users:
   * their tokens, and the index of the user each belongs to.
   */
  fresh: { token: string; user: number }[];
  seconds: number;
}

const USER_PASSWORD = 'bench-Passw0rd!';

export async function buildModel(
  dataDir: string,
  size: Size,
  loginUsers: number,
  freshApiSessions = 0,
  /** A PostgreSQL store (postgres://…) to build into instead of the SQLite file in the data dir. */
  db?: string,
): Promise<BuiltModel> {
  const started = performance.now();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const pki = await loadOrCreateControllerPki(join(dataDir, 'pki'), { hosts: ['127.0.0.1'] });
  const store = await openStore(db ?? join(dataDir, 'edgectl.db'));
  const ctx: Ctx = {
    db: store.db,
    now: () => new Date(),
    settings: {
      sessionTimeoutMs: 30 * 60_000,
      identityEnrollmentDurationMs: 3 * 3600_000,
      routerEnrollmentDurationMs: 3 * 3600_000,
    },
    log: silentLogger,
    pki: pkiCapability(pki, () => 'https://127.0.0.1:1280'),
    // The daemon started on this data dir later reads the same key, so the tokens made here stay valid.
    tokens: tokenMinter(loadOrCreateTokenKey(dataDir).key),
    hooks: RESOURCE_HOOKS,
  } as Ctx;

  const inBatches = async (n: number, batch: number, make: (tctx: Ctx, i: number) => Promise<unknown>) => {
    for (let start = 0; start < n; start += batch) {
      await withTx(ctx.db, async (trx) => {
        const tctx = withDb(ctx, trx);
        for (let i = start; i < Math.min(n, start + batch); i++) await make(tctx, i);
      });
    }
  };

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
  // As many API sessions as a login would make, without an Argon2id verification each (the new-session
  // scenario needs a fresh (API session, service) pair per request; a login per pair would measure Argon2id).
  const fresh: BuiltModel['fresh'] = [];
  await inBatches(users.length ? freshApiSessions : 0, 5000, async (t, k) => {
    const user = k % users.length;
    const id = await createApiSession(t, {
      identityId: users[user]!.id,
      authenticatorId: authenticatorIds[user]!,
      ipAddress: '127.0.0.1',
      configTypes: [],
    });
    fresh.push({ token: t.tokens.token('api-session', id), user });
  });

  await inBatches(size.servicePolicies, 50, (t, j) => {
    const ids = rolesFor(j, 0);
    const svc = rolesFor(j, 3);
    return createEntity(t, servicePolicies, {
      name: `sp-${j}`,
      type: j % 2 === 0 ? 'Dial' : 'Bind',
      semantic: ids.semantic,
      identityRoles: ids.roles,
      serviceRoles: svc.roles,
    });
  });
  await inBatches(size.edgeRouterPolicies, 50, (t, j) => {
    const ids = rolesFor(j, 1);
    return createEntity(t, edgeRouterPolicies, {
      name: `erp-${j}`,
      semantic: ids.semantic,
      identityRoles: ids.roles,
      edgeRouterRoles: rolesFor(j, 5).roles,
    });
  });
  await inBatches(size.serviceEdgeRouterPolicies, 50, (t, j) => {
    const svc = rolesFor(j, 2);
    return createEntity(t, serviceEdgeRouterPolicies, {
      name: `serp-${j}`,
      semantic: svc.semantic,
      serviceRoles: svc.roles,
      edgeRouterRoles: rolesFor(j, 6).roles,
    });
  });
  // Every load client can Dial and Bind something and reach a router (the scenarios' "#all" policies).
  await withTx(ctx.db, async (trx) => {
    const t = withDb(ctx, trx);
    await createEntity(t, edgeRouterPolicies, {
      name: 'erp-all',
      semantic: 'AnyOf',
      identityRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });
    await createEntity(t, serviceEdgeRouterPolicies, {
      name: 'serp-all',
      semantic: 'AnyOf',
      serviceRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });
    const clients = users.map((u) => `@${u.id}`);
    await createEntity(t, servicePolicies, {
      name: 'sp-bench-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: clients,
      serviceRoles: [`@${serviceIds[0]}`],
    });
    await createEntity(t, servicePolicies, {
      name: 'sp-bench-bind',
      type: 'Bind',
      semantic: 'AnyOf',
      identityRoles: clients,
      serviceRoles: [`@${serviceIds[1] ?? serviceIds[0]}`],
    });
  });
  await store.close();
  return { users, serviceIds, fresh, seconds: (performance.now() - started) / 1000 };
}
