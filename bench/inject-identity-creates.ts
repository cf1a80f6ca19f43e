/**
 * Identity creates through a controller in this process (Fastify's `inject`), 16 at once, as the in-process
 * write benches drive them (bench/statement-time.ts, bench/pg-statements.ts): logs in as `admin`, then answers a
 * function that makes `n` identities of the bench model's attribute spread, named `<tag>-id-<serial>`.
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
