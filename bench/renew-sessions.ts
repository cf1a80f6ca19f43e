/**
 * Makes new fresh API sessions in a model kept by an earlier run (`bench/run.ts --keep`), in its own process
 * and while no controller runs on it, and writes them into the kept bench-model.json (bench/model.ts,
 * `renewFreshApiSessions`). Usage: node --import tsx bench/renew-sessions.ts DATA_DIR COUNT [DB_URL] → the
 * number made, one line.
 */
import { renewFreshApiSessions } from './model.js';

const [dir, count, db] = process.argv.slice(2);
if (!dir || !(Number(count) >= 0)) throw new Error('usage: renew-sessions.ts DATA_DIR COUNT [DB_URL]');
const fresh = await renewFreshApiSessions(dir, Number(count), db || undefined);
process.stdout.write(`${fresh.length}\n`);
