/**
 * Identity creates through a controller in this process (Fastify's `inject`), 16 at once, as the in-process
 * write benches drive them (bench/statement-time.ts, bench/pg-statements.ts): logs in as `admin`, then answers a
 * function that makes `n` identities of the bench model's attribute spread, named `<tag>-id-<serial>`.
 * {@link measuredCreates} times a run of them after a warm-up.
 */
import type { FastifyInstance } from 'fastify';
import { attributesOf } from './model.js';

const MGMT = '/edge/management/v1';

export async function injectedIdentityCreates(
  app: FastifyInstance,
  admin: { username: string; password: string },
  tag: string,
): Promise<(n: number) => Promise<void>> {
  const login = await app.inject({ method: 'POST', url: `${MGMT}/authenticate?method=password`, payload: admin });
  const token = (JSON.parse(login.body) as { data: { token: string } }).data.token;
  let serial = 0;
  const post = async () => {
    const n = serial++;
    const r = await app.inject({
      method: 'POST',
      url: `${MGMT}/identities`,
      headers: { 'zt-session': token, 'content-type': 'application/json' },
      payload: JSON.stringify({
        name: `${tag}-id-${n}`,
        type: 'Device',
        isAdmin: false,
        roleAttributes: attributesOf(n),
      }),
    });
    if (r.statusCode !== 201) throw new Error(r.body);
  };
  return async (n: number) => {
    let left = n;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (left-- > 0) await post();
      }),
    );
  };
}

/**
 * `warmup` creates, then `count` timed: wall and CPU (this process's) in µs per create. `measuring` is told when
 * the timed run starts and ends (the benches count statements only then).
 */
export async function measuredCreates(
  run: (n: number) => Promise<void>,
  warmup: number,
  count: number,
  measuring: (on: boolean) => void,
): Promise<{ perSecond: number; wallUs: number; cpuUs: number }> {
  await run(warmup);
  measuring(true);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(count);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  measuring(false);
  return {
    perSecond: (count / wall) * 1000,
    wallUs: (wall * 1000) / count,
    cpuUs: (cpu.user + cpu.system) / count,
  };
}
