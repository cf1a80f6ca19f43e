/**
 * OpenID Connect login (issue 23; docs/decisions.md, "OIDC login"): the protocol state lives in the store, so a
 * login begun on one replica finishes on another and survives a restart.
 *
 * - `oidc_auth_requests`: an authorization request from `/oidc/authorize` until its code is exchanged (or it
 *   expires). Keyed by SHA-256 of its id (the id travels in URLs); the code is kept as SHA-256 too. Once the
 *   primary login succeeds it names the identity, the authenticator and the methods passed (`amr`).
 * - `oidc_refresh_tokens`: every refresh token issued, by `jti`, with the one it replaced: a rotation marks
 *   the presented token rotated inside the refresh's transaction, so a token is exchanged at most once.
 * - `revocations`: the reference's revocation records (`JTI`, `IDENTITY`, `API_SESSION`), checked for every
 *   controller-issued JWT; `issuedBefore` is the identity cutoff.
 * - `api_sessions.isOidc`: the API session an OIDC login made (the token's `z_asid`). Such a session is used
 *   with its bearer tokens only: its derived legacy token is never accepted.
 *
 * On PostgreSQL the new tables get their change counters (migration 0015), and the `api_sessions` trigger is
 * made again so that it lists the new column.
 */
import type { Kysely } from 'kysely';
import { entityTable, keyedOnly, onPostgres } from './helpers.js';
import { traceTable, traceTables } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const TABLES = ['oidc_auth_requests', 'oidc_refresh_tokens', 'revocations'];

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('api_sessions')
    .addColumn('isOidc', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await keyedOnly(
    db,
    db.schema
      .createTable('oidc_auth_requests')
      .addColumn('idHash', 'text', (c) => c.primaryKey())
      .addColumn('createdAt', 'text', (c) => c.notNull())
      .addColumn('expiresAt', 'text', (c) => c.notNull())
      .addColumn('clientId', 'text', (c) => c.notNull())
      .addColumn('redirectUri', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('state', 'text')
      .addColumn('nonce', 'text')
      .addColumn('codeChallenge', 'text', (c) => c.notNull())
      .addColumn('codeChallengeMethod', 'text', (c) => c.notNull())
      .addColumn('apiSessionId', 'text', (c) => c.notNull())
      .addColumn('remoteAddress', 'text', (c) => c.notNull())
      .addColumn('method', 'text')
      .addColumn('configTypes', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('identityId', 'text', (c) => c.references('identities.id').onDelete('cascade'))
      .addColumn('authenticatorId', 'text')
      .addColumn('amr', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('authTime', 'text')
      .addColumn('authQueries', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('sdkInfo', 'text')
      .addColumn('envInfo', 'text')
      .addColumn('codeHash', 'text'),
  ).execute();
  await db.schema
    .createIndex('oidc_auth_requests_by_code')
    .unique()
    .on('oidc_auth_requests')
    .column('codeHash')
    .execute();
  await db.schema.createIndex('oidc_auth_requests_by_expiry').on('oidc_auth_requests').column('expiresAt').execute();
  await db.schema.createIndex('oidc_auth_requests_by_identity').on('oidc_auth_requests').column('identityId').execute();

  await keyedOnly(
    db,
    db.schema
      .createTable('oidc_refresh_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('apiSessionId', 'text', (c) => c.notNull().references('api_sessions.id').onDelete('cascade'))
      .addColumn('parentJti', 'text')
      .addColumn('clientId', 'text', (c) => c.notNull())
      .addColumn('createdAt', 'text', (c) => c.notNull())
      .addColumn('expiresAt', 'text', (c) => c.notNull())
      .addColumn('rotatedAt', 'text'),
  ).execute();
  await db.schema
    .createIndex('oidc_refresh_tokens_by_api_session')
    .on('oidc_refresh_tokens')
    .column('apiSessionId')
    .execute();
  await db.schema.createIndex('oidc_refresh_tokens_by_expiry').on('oidc_refresh_tokens').column('expiresAt').execute();

  await entityTable(db, 'revocations')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('expiresAt', 'text', (c) => c.notNull())
    .addColumn('issuedBefore', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('revocations_by_expiry').on('revocations').column('expiresAt').execute();

  if (!onPostgres(db)) return;
  await traceTables(db, TABLES);
  // The new column joins the API sessions' trigger.
  await traceTable(db, 'api_sessions');
}
