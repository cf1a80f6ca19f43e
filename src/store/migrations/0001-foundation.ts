/** Foundation tables: identity types, auth policies, identities, authenticators, API sessions. */
import type { Kysely } from 'kysely';
import { entityTable, nowIso, onPostgres, setTable, sql } from './helpers.js';
import { PORTABLE_FUNCTIONS } from '../pg/portable-functions.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  if (onPostgres(db)) for (const statement of PORTABLE_FUNCTIONS) await sql.raw(statement).execute(db);
  await entityTable(db, 'identity_types')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .execute();

  await entityTable(db, 'auth_policies')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('primary', 'text', (c) => c.notNull())
    .addColumn('secondary', 'text', (c) => c.notNull())
    .execute();

  await entityTable(db, 'identities')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('typeId', 'text', (c) => c.notNull().references('identity_types.id'))
    .addColumn('isAdmin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('isDefaultAdmin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('authPolicyId', 'text', (c) => c.notNull().references('auth_policies.id'))
    .addColumn('externalId', 'text', (c) => c.unique())
    .addColumn('defaultHostingCost', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('defaultHostingPrecedence', 'text', (c) => c.notNull().defaultTo('default'))
    .addColumn('serviceHostingCosts', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('serviceHostingPrecedences', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('appData', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('envInfo', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('sdkInfo', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('disabledAt', 'text')
    .addColumn('disabledUntil', 'text')
    .execute();
  await setTable(db, 'identities', 'roleAttributes');
  await db.schema.createIndex('identities_by_auth_policy').on('identities').column('authPolicyId').execute();

  await entityTable(db, 'authenticators')
    .addColumn('identityId', 'text', (c) => c.notNull().references('identities.id').onDelete('cascade'))
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.unique())
    .addColumn('passwordHash', 'text')
    .addColumn('failedAttempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('certPem', 'text')
    .addColumn('fingerprint', 'text', (c) => c.unique())
    .addColumn('caId', 'text')
    .addUniqueConstraint('authenticators_one_per_method', ['identityId', 'method'])
    .execute();

  await entityTable(db, 'api_sessions')
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('identityId', 'text', (c) => c.notNull().references('identities.id').onDelete('cascade'))
    .addColumn('authenticatorId', 'text', (c) => c.notNull())
    .addColumn('ipAddress', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('configTypes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('authQueries', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('isMfaRequired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('isMfaComplete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lastActivityAt', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_sessions_by_identity').on('api_sessions').column('identityId').execute();
  await db.schema.createIndex('api_sessions_by_activity').on('api_sessions').column('lastActivityAt').execute();

  // Built-in records (parity: docs/reference-notes.md §5.5 default auth policy, §10.1 identity types).
  const now = nowIso();
  await db
    .insertInto('identity_types')
    .values(
      ['User', 'Device', 'Service', 'Router'].map((n) => ({
        id: n,
        name: n,
        createdAt: now,
        updatedAt: now,
        tags: '{}',
        isSystem: 1,
      })),
    )
    .execute();
  await db
    .insertInto('auth_policies')
    .values({
      id: 'default',
      name: 'Default',
      createdAt: now,
      updatedAt: now,
      tags: '{}',
      isSystem: 1,
      primary: JSON.stringify({
        cert: { allowed: true, allowExpiredCerts: true },
        extJwt: { allowed: true, allowedSigners: [] },
        updb: {
          allowed: true,
          minPasswordLength: 5,
          requireMixedCase: false,
          requireNumberChar: false,
          requireSpecialChar: false,
          maxAttempts: 0,
          lockoutDurationMinutes: 0,
        },
      }),
      secondary: JSON.stringify({ requireTotp: false, requireExtJwtSigner: null }),
    })
    .execute();
}
