/** Certificates of API sessions: removal one by one and by expiry (queries only). */
import type { TypedExecutor } from './executor.js';

export async function deleteApiSessionCert(db: TypedExecutor, id: string): Promise<void> {
  await db.deleteFrom('api_session_certs').where('id', '=', id).execute();
}

/** Deletes the certificates valid only until `cutoff` (ISO) or earlier; answers how many. */
export async function deleteApiSessionCertsValidTo(db: TypedExecutor, cutoff: string): Promise<number> {
  const res = await db.deleteFrom('api_session_certs').where('validTo', '<=', cutoff).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Whether the API session has a certificate with this fingerprint that is still valid at `now` (ISO). */
export async function hasValidSessionCert(
  db: TypedExecutor,
  apiSessionId: string,
  fingerprint: string,
  now: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('api_session_certs')
    .select('id')
    .where('apiSessionId', '=', apiSessionId)
    .where('fingerprint', '=', fingerprint)
    .where('validTo', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}
