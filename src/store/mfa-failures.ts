/**
 * Wrong MFA codes presented against verified enrollments (queries only; the rules are in
 * model/services/mfa/mfa-failures.ts). One row per wrong code: the enrollment, the API session that sent it, when.
 */
import { sql } from 'kysely';
import type { TypedExecutor } from './executor.js';

export interface MfaFailureCounts {
  /** Wrong codes against the enrollment since the cut-off, whichever session sent them. */
  total: number;
  /** Those of them the given API session sent. */
  session: number;
}

/** How many wrong codes the enrollment had after `since` (ISO), in all and from one API session. */
export async function mfaFailureCounts(
  db: TypedExecutor,
  mfaId: string,
  apiSessionId: string,
  since: string,
): Promise<MfaFailureCounts> {
  const row = await db
    .selectFrom('mfa_failures')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`coalesce(sum(case when "apiSessionId" = ${apiSessionId} then 1 else 0 end), 0)`.as('session'),
    ])
    .where('mfaId', '=', mfaId)
    .where('at', '>', since)
    .executeTakeFirstOrThrow();
  return { total: Number(row.total), session: Number(row.session) };
}

/** Records one wrong code and forgets the enrollment's rows at or before `before` (out of every count). */
export async function addMfaFailure(
  db: TypedExecutor,
  mfaId: string,
  apiSessionId: string,
  at: string,
  before: string,
): Promise<void> {
  await db.deleteFrom('mfa_failures').where('mfaId', '=', mfaId).where('at', '<=', before).execute();
  await db.insertInto('mfa_failures').values({ mfaId, apiSessionId, at }).execute();
}

/** Forgets the wrong codes one API session sent against the enrollment. */
export async function clearSessionMfaFailures(db: TypedExecutor, mfaId: string, apiSessionId: string): Promise<void> {
  await db.deleteFrom('mfa_failures').where('mfaId', '=', mfaId).where('apiSessionId', '=', apiSessionId).execute();
}
