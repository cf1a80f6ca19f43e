/**
 * Builds a benchmark model in its own process, so the load generator that follows starts with a small, cold
 * heap (at the large size the build allocates hundreds of MB that would otherwise be collected during the
 * measurements). Usage: node --import tsx bench/build-model.ts DATA_DIR SIZE LOGIN_USERS [FRESH_API_SESSIONS [DB_URL]] → one JSON line
 * (DB_URL: a PostgreSQL database to build into; the data dir then holds only the PKI and the token key).
 */
import { buildModel, SIZES } from './model.js';

const [dir, sizeName, users, fresh, db] = process.argv.slice(2);
const size = SIZES[sizeName!];
if (!dir || !size) throw new Error('usage: build-model.ts DATA_DIR small|medium|large LOGIN_USERS');
const model = await buildModel(dir, size, Number(users ?? 16), Number(fresh ?? 0), db || undefined);
process.stdout.write(JSON.stringify({ ...model, peakRssMiB: process.resourceUsage().maxRSS / 1024 }) + '\n');
