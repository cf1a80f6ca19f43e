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
