/**
 * Builds a benchmark model in its own process, so the load generator that follows starts with a small, cold
 * heap (at the large size the build allocates hundreds of MB that would otherwise be collected during the
 * measurements). Usage: node --import tsx bench/build-model.ts DATA_DIR SIZE LOGIN_USERS [FRESH_API_SESSIONS [DB_URL
 * [store|api [CONNECTIONS]]]] → one JSON line
 * (DB_URL: a PostgreSQL database to build into, which then holds the PKI and the token key too, sealed under the
 * bench's master key; the data dir keeps the server's certificate and key for the bare server. `api`: through the
 * Management API of the built controller with CONNECTIONS clients, default 16; the default path is the size's,
 * `DEFAULT_BUILD` in bench/model.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildModel, DEFAULT_BUILD, SIZES, type BuildPath } from './model.js';

const [dir, sizeName, users, fresh, db, via, connections] = process.argv.slice(2);
const size = SIZES[sizeName!];
if (!dir || !size) throw new Error(`usage: build-model.ts DATA_DIR ${Object.keys(SIZES).join('|')} LOGIN_USERS`);
const path = (via || DEFAULT_BUILD[sizeName!] || 'store') as BuildPath;
if (path !== 'store' && path !== 'api') throw new Error(`build path ${via}: store or api`);
const model = await buildModel(
  dir,
  size,
  Number(users ?? 16),
  Number(fresh ?? 0),
  db || undefined,
  path,
  Number(connections || 16),
);
const out = JSON.stringify({ ...model, peakRssMiB: process.resourceUsage().maxRSS / 1024 });
// Kept beside the model, so a data dir kept by the bench (`--keep`) can be measured again (`--model DIR`).
writeFileSync(join(dir, 'bench-model.json'), out + '\n', { mode: 0o600 });
process.stdout.write(out + '\n');
