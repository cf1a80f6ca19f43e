/**
 * Tokens stored as hashes (docs/decisions.md, "Token storage"): API-session, session and enrollment tokens are
 * derived from a key outside the store, which keeps only their SHA-256 (`tokenHash`), and enrollment JWTs are
 * kept with their `jti` blanked (`jwtTemplate`).
 *
 * The clear tokens of an existing store are not carried over, since the key could not show them again:
 * - API sessions end (their sessions and API-session certificates go with them); clients authenticate again;
 * - outstanding enrollments keep their records, but get a placeholder hash that matches no token and no JWT;
 *   the controller re-keys them at start (model/services/enrollment/token-reconcile.ts: new token, JWT re-signed with the
 *   same expiry), which needs the key and the PKI that a migration does not have. Their old JWTs stop working.
 * Columns are renamed rather than rebuilt: SQLite keeps their unique indexes, and rebuilding `api_sessions`
 * would cascade into the tables that reference it.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('sessions').execute();
  await db.deleteFrom('api_sessions').execute();
  await sql`alter table api_sessions rename column token to "tokenHash"`.execute(db);
  await sql`alter table sessions rename column token to "tokenHash"`.execute(db);
  await sql`alter table enrollments rename column token to "tokenHash"`.execute(db);
  await sql`alter table enrollments rename column jwt to "jwtTemplate"`.execute(db);
  // Unique and never a SHA-256 hex string, so no presented token matches until the start re-keys the row.
  await sql`update enrollments set "tokenHash" = 'unkeyed:' || id, "jwtTemplate" = ''`.execute(db);
}
