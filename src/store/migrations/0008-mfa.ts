/**
 * TOTP MFA (docs/decisions.md, "TOTP MFA"): one enrollment per identity. The TOTP secret (and, until
 * verification, the clear recovery codes shown to the user) are sealed with a key derived from the data dir's
 * token key; recovery codes are kept as Argon2id hashes under one salt per enrollment. `lastTimeStep` is the
 * newest TOTP time step accepted, so a code is never accepted twice.
 * API sessions gain the time their second factor was passed (posture checks read it).
 */
import type { Kysely } from 'kysely';
import { entityTable } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await entityTable(db, 'mfas')
    .addColumn('identityId', 'text', (c) => c.notNull().unique().references('identities.id').onDelete('cascade'))
    .addColumn('isVerified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('secretSealed', 'text', (c) => c.notNull())
    .addColumn('recoverySalt', 'text', (c) => c.notNull())
    .addColumn('recoveryHashes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('recoveryCodesSealed', 'text')
    .addColumn('lastTimeStep', 'integer')
    .execute();
  await db.schema.alterTable('api_sessions').addColumn('mfaPassedAt', 'text').execute();
}
