/**
 * Claims on a PostgreSQL store (../claims.ts): `pg_try_advisory_lock` on a connection of the claim's own,
 * outside the store's pool (a claim may be held for the controller's lifetime, and a pool cannot close while a
 * connection is lent out). The lock is the session's: it goes when the connection does, whether the holder
 * released it, exited or was killed. A holder that vanishes without closing its connection (its machine lost)
 * is ended by the server after `idle_session_timeout`, which the claim's own pings keep from ending a live one.
 */
import pg from 'pg';
import type { ClaimName, StoreClaim } from '../claims.js';

/**
 * Advisory lock keys: one key space per database, shared with the migration lock ('migr', pg/open.ts) and
 * the writer lock ('edge', runtime.ts).
 */
const KEYS: Readonly<Record<ClaimName, number>> = {
  'periodic-work': 0x7469636b, // 'tick'
  'integrity-scan': 0x7363616e, // 'scan'
  snapshot: 0x736e6170, // 'snap'
};

/** The lock key of a claim (tests find the holder's connection by it in `pg_locks`). */
export const claimKey = (name: ClaimName): number => KEYS[name];

/** How often a held claim's connection is pinged, and how long the server lets a silent one live. */
const PING_MS = 10_000;
const IDLE_SESSION_TIMEOUT = '30s';
/** A claim's connection or ping that takes longer than this counts as lost. */
const TIMEOUT_MS = 5_000;

/** The claim `name`, or undefined when another session holds it; throws when the server cannot be reached. */
export async function claimOnPostgres(url: string, name: ClaimName): Promise<StoreClaim | undefined> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: TIMEOUT_MS,
    query_timeout: TIMEOUT_MS,
    application_name: `edgectl ${name}`,
    keepAlive: true,
  });
  let lost = false;
  // The server ending the session (a restart, an administrator) must not end the process: the claim is lost.
  client.on('error', () => (lost = true));
  client.on('end', () => (lost = true));
  try {
    await client.connect();
    await client.query(`set idle_session_timeout = '${IDLE_SESSION_TIMEOUT}'`);
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [KEYS[name]]);
    if (!rows[0]?.ok) {
      await client.end().catch(() => {});
      return undefined;
    }
  } catch (e) {
    await client.end().catch(() => {});
    throw e;
  }
  let released = false;
  const drop = () => {
    lost = true;
    clearInterval(pinger);
    client.end().catch(() => {});
  };
  const pinger = setInterval(() => void client.query('select 1').catch(drop), PING_MS);
  pinger.unref();
  return {
    async held() {
      if (lost || released) return false;
      try {
        await client.query('select 1');
        return !lost;
      } catch {
        drop();
        return false;
      }
    },
    async release() {
      if (released) return;
      released = true;
      clearInterval(pinger);
      // Unlocked before the connection goes, so a claim made right after this resolves finds the lock free.
      if (!lost) await client.query('select pg_advisory_unlock($1)', [KEYS[name]]).catch(() => {});
      await client.end().catch(() => {});
    },
  };
}
