/**
 * The servers for the independent bench (bench/independent/run.sh): builds a model, starts the built
 * controller and the bare same-bytes server (bench/stack.ts, as the project's bench does), primes the bare
 * server with the controller's answer for each scenario, and writes what the script needs to DIR/env (pids,
 * origins, paths, the admin token, a service id) and the load users' tokens to DIR/tokens, one a line. It
 * measures nothing: the load (wrk) and the CPU accounting (/proc/<pid>/stat) are the script's own.
 * Runs until SIGTERM or SIGINT. Usage: node --import tsx bench/independent/serve.ts SIZE DIR
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT, MGMT, startStack } from '../stack.js';

const [size, dir] = process.argv.slice(2);
if (!size || !dir) throw new Error('usage: serve.ts small|medium|large DIR');
const stack = await startStack({ size });
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
writeFileSync(join(dir, 'tokens'), stack.tokens.join('\n') + '\n', { mode: 0o600 });
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
