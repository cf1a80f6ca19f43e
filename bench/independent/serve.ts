/**
 * The servers for the independent bench (bench/independent/run.sh): builds a model, starts the built
 * controller and the bare same-bytes server (bench/stack.ts, as the project's bench does), primes the bare
 * server with the controller's answer for each scenario, and writes what the script needs to DIR/env (pids,
 * origins, paths, the admin token, a service id), the load users' tokens to DIR/tokens and their credentials
 * to DIR/logins (one a line), to DIR/mix the session mix's (token, Dialable service) pairs (100 identities, up to
 * 512 pairs, the bare server primed with the controller's answer to each), and to DIR/pairs the (fresh API
 * session token, Dialable service) pairs of the new-session scenario, each to be used once. It measures nothing: the load (wrk) and the CPU accounting
 * (/proc/<pid>/stat) are the script's own.
 * Runs until SIGTERM or SIGINT. Usage: [MODEL=KEPT_DATA_DIR] node --import tsx bench/independent/serve.ts SIZE DIR
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT, MGMT, startStack } from '../stack.js';

const [size, dir, seconds = '5'] = process.argv.slice(2);
if (!size || !dir) throw new Error('usage: serve.ts small|medium|large DIR [SECONDS]');
// Enough fresh API sessions for the controller and the bare server each taking 3,000 new sessions a second
// over a warm-up and a run; each gives one pair per service its identity may Dial (at least 10 in the models).
// 100 identities: the first 16 are the load users of the service list and the one-service repeat, all 100 make
// the session mix (as in the project's bench, bench/run.ts).
const LOAD_USERS = 16;
const MIX_PAIRS = 512;
// MODEL (environment): a data dir kept by `bench/run.ts --keep` of this size, measured instead of a new build
// (the xlarge model takes minutes to build).
const stack = await startStack({
  size,
  loginUsers: 100,
  fresh: Math.ceil((2 * 3000 * (Number(seconds) + 1)) / 10),
  ...(process.env.MODEL && { model: process.env.MODEL }),
});
// Should anything below fail, the servers started above end with this process, not hold the data dir.
process.once('exit', () => {
  for (const pid of [stack.controller.pid, stack.bare.pid]) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});
const serviceId = stack.serviceIds[0]!;
const search = `${MGMT}/identities?filter=${encodeURIComponent('name contains "id-0" sort by name desc limit 100')}`;
const first = { 'zt-session': stack.tokens[0]! };
await stack.prime('service-list', { method: 'GET', path: `${CLIENT}/services`, headers: first });
await stack.prime(
  'session-dial',
  { method: 'POST', path: `${CLIENT}/sessions`, headers: first, body: JSON.stringify({ serviceId, type: 'Dial' }) },
  [201],
);
await stack.prime('identity-search', {
  method: 'GET',
  path: search,
  headers: { 'zt-session': stack.adminToken },
});
await stack.prime('service-list-500', { method: 'GET', path: `${CLIENT}/services?limit=500`, headers: first });
const login = stack.users[0]!;
await stack.prime('authenticate', {
  method: 'POST',
  path: `${CLIENT}/authenticate?method=password`,
  body: JSON.stringify({ username: login.username, password: login.password }),
});

// New sessions: every pair of a fresh API session and a service its identity may Dial, walking each API
// session's services before the next one (as the project's bench does); the first pair primes the bare server.
const dialable: string[][] = [];
for (const token of stack.tokens) {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 500) {
    const res = await stack.call(stack.controller, {
      method: 'GET',
      path: `${CLIENT}/services?limit=500&offset=${offset}`,
      headers: { 'zt-session': token },
    });
    const page = JSON.parse(res.body) as {
      data: { id: string; permissions: string[] }[];
      meta: { pagination: { totalCount: number } };
    };
    for (const svc of page.data) if (svc.permissions.includes('Dial')) ids.push(svc.id);
    if (offset + 500 >= page.meta.pagination.totalCount) break;
  }
  dialable.push(ids);
}
// The session mix: each identity in turn, with the next of its Dialable services in a spread order, up to
// MIX_PAIRS distinct pairs; the bare server is primed with the controller's answer to each (key
// session-dial-mix.N for the N-th line, 1-based as the Lua script counts).
const spread = dialable.map((list) =>
  list
    .map((id, j) => ({ id, at: (j * 0.6180339887) % 1 }))
    .sort((x, y) => x.at - y.at)
    .map((x) => x.id),
);
const mix: string[] = [];
for (let k = 0, took = true; took && mix.length < MIX_PAIRS; k++) {
  took = false;
  for (let u = 0; u < spread.length && mix.length < MIX_PAIRS; u++) {
    const serviceId = spread[u]![k];
    if (serviceId === undefined) continue;
    mix.push(`${stack.tokens[u]} ${serviceId}`);
    took = true;
  }
}
for (const [i, line] of mix.entries()) {
  const [token, serviceId] = line.split(' ');
  await stack.prime(
    `session-dial-mix.${i + 1}`,
    {
      method: 'POST',
      path: `${CLIENT}/sessions`,
      headers: { 'zt-session': token! },
      body: JSON.stringify({ serviceId, type: 'Dial' }),
    },
    [201],
  );
}
writeFileSync(join(dir, 'mix'), mix.join('\n') + '\n', { mode: 0o600 });
// As many pairs as two servers' warm-ups and runs take at 6,000 new sessions a second, no more: on the xlarge
// model every API session's Dialable services would make a text too long for one string.
const wanted = 2 * 6000 * (Number(seconds) + 1);
const pairs: string[] = [];
for (const f of stack.fresh) {
  for (const serviceId of dialable[f.user]!) {
    if (pairs.length > wanted) break;
    pairs.push(`${f.token} ${serviceId}`);
  }
}
const [token0, service0] = pairs.shift()!.split(' ');
await stack.prime(
  'new-sessions',
  {
    method: 'POST',
    path: `${CLIENT}/sessions`,
    headers: { 'zt-session': token0! },
    body: JSON.stringify({ serviceId: service0, type: 'Dial' }),
  },
  [201],
);
writeFileSync(join(dir, 'pairs'), pairs.join('\n') + '\n', { mode: 0o600 });
writeFileSync(
  join(dir, 'logins'),
  stack.users
    .slice(0, LOAD_USERS)
    .map((u) => `${u.username} ${u.password}`)
    .join('\n') + '\n',
  {
    mode: 0o600,
  },
);
writeFileSync(join(dir, 'tokens'), stack.tokens.slice(0, LOAD_USERS).join('\n') + '\n', { mode: 0o600 });
const env = {
  CTL_PID: stack.controller.pid,
  CTL_URL: stack.controller.origin,
  BARE_PID: stack.bare.pid,
  BARE_URL: stack.bare.origin,
  ADMIN_TOKEN: stack.adminToken,
  SERVICE_ID: serviceId,
  SERVICE_LIST_PATH: `${CLIENT}/services`,
  SESSION_PATH: `${CLIENT}/sessions`,
  SEARCH_PATH: search,
  AUTH_PATH: `${CLIENT}/authenticate?method=password`,
  PAIRS: pairs.length,
  MIX_PAIRS: mix.length,
};
// Written last: the script waits for this file.
writeFileSync(
  join(dir, 'env'),
  Object.entries(env)
    .map(([k, v]) => `${k}='${v}'\n`)
    .join(''),
  { mode: 0o600 },
);
const stop = () => void stack.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setInterval(() => {}, 1 << 30);
