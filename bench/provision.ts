/**
 * Provisions a benchmark model through the Management API, as a user provisioning a network would (the CLI has no
 * bulk import, so a provisioning script is N concurrent HTTPS clients, each creating one entity per request): the
 * same entities, names, attribute spread and policies as the in-process build (bench/model.ts), created by
 * `connections` keep-alive connections in turn per kind (services, edge routers, identities, the load users'
 * password authenticators, then the policies). Every request must answer 201; anything else stops the build.
 */
import https from 'node:https';
import { send, type Target } from './load.js';
import { attributesOf, policyBodies, type Size } from './model.js';

const MGMT = '/edge/management/v1';

export interface Provisioned {
  serviceIds: string[];
  /** The first `loginUsers` identities, with the password authenticator each got. */
  users: { id: string; username: string; password: string; authenticatorId: string }[];
  /** Creates per kind, and the wall time each kind took. */
  kinds: { kind: string; creates: number; seconds: number }[];
}

/**
 * Runs `make(i)` for i in [0, n) on `connections` workers, each taking the next index when its previous request was
 * answered. Progress goes to stderr every 15 s (an xlarge build runs for minutes).
 */
async function pool(
  what: string,
  n: number,
  connections: number,
  make: (i: number) => Promise<void>,
): Promise<{ kind: string; creates: number; seconds: number }> {
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  const progress = setInterval(() => {
    const s = (performance.now() - t0) / 1000;
    process.stderr.write(`  … ${what}: ${done} of ${n} in ${s.toFixed(0)} s (${(done / s).toFixed(0)}/s)\n`);
  }, 15_000);
  try {
    await Promise.all(
      Array.from({ length: Math.min(connections, n) }, async () => {
        for (let i = next++; i < n; i = next++) {
          await make(i);
          done++;
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
  return { kind: what, creates: n, seconds: (performance.now() - t0) / 1000 };
}

export async function provisionModel(opts: {
  target: Target;
  adminToken: string;
  size: Size;
  loginUsers: number;
  password: string;
  connections: number;
}): Promise<Provisioned> {
  const { size, connections } = opts;
  const agent = new https.Agent({ keepAlive: true, maxSockets: connections, ca: opts.target.ca });
  const headers = { 'zt-session': opts.adminToken };
  const create = async (path: string, body: Record<string, unknown>): Promise<string> => {
    // A create may wait behind every other connection's for the one writer, and behind a checkpoint of a large
    // store: a provisioning script waits as long as it takes (minutes), it does not give up at 30 s.
    const res = await send(opts.target, agent, {
      method: 'POST',
      path: MGMT + path,
      headers,
      body,
      timeoutMs: 600_000,
    });
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(body)}: ${res.status} ${res.body}`);
    return (JSON.parse(res.body) as { data: { id: string } }).data.id;
  };
  const kinds: Provisioned['kinds'] = [];
  try {
    const serviceIds: string[] = new Array<string>(size.services);
    kinds.push(
      await pool('services', size.services, connections, async (i) => {
        serviceIds[i] = await create('/services', {
          name: `svc-${i}`,
          encryptionRequired: true,
          roleAttributes: attributesOf(i),
        });
      }),
    );
    kinds.push(
      await pool('edge routers', size.edgeRouters, connections, async (i) => {
        await create('/edge-routers', { name: `er-${i}`, roleAttributes: attributesOf(i), isTunnelerEnabled: false });
      }),
    );
    const idWidth = String(Math.max(0, size.identities - 1)).length;
    const userIds: string[] = new Array<string>(Math.min(opts.loginUsers, size.identities));
    kinds.push(
      await pool('identities', size.identities, connections, async (i) => {
        const id = await create('/identities', {
          name: `id-${String(i).padStart(idWidth, '0')}`,
          type: 'User',
          isAdmin: false,
          roleAttributes: attributesOf(i),
        });
        if (i < userIds.length) userIds[i] = id;
      }),
    );
    const users: Provisioned['users'] = new Array<Provisioned['users'][number]>(userIds.length);
    kinds.push(
      await pool('password authenticators', userIds.length, connections, async (i) => {
        const username = `user-${i}`;
        const authenticatorId = await create('/authenticators', {
          identityId: userIds[i],
          method: 'updb',
          username,
          password: opts.password,
        });
        users[i] = { id: userIds[i]!, username, password: opts.password, authenticatorId };
      }),
    );
    const policies = policyBodies(
      size,
      users.map((u) => u.id),
      serviceIds,
    );
    kinds.push(
      await pool('policies', policies.length, connections, async (i) => {
        await create(policies[i]!.path, policies[i]!.body);
      }),
    );
    return { serviceIds, users, kinds };
  } finally {
    agent.destroy();
  }
}
