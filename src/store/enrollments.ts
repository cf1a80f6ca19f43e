/** Enrollments: lookups by owner, username and token hash, and the conditional delete of a used one (queries only). */
import type { TypedExecutor } from './executor.js';

/** The id of an identity's enrollment of one method, if any. */
export async function enrollmentIdOf(
  db: TypedExecutor,
  identityId: string,
  method: string,
): Promise<string | undefined> {
  return (
    await db
      .selectFrom('enrollments')
      .select('id')
      .where('identityId', '=', identityId)
      .where('method', '=', method)
      .executeTakeFirst()
  )?.id;
}

/** Whether an outstanding `updb` enrollment reserves this username. */
export async function updbEnrollmentHasUsername(db: TypedExecutor, username: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('enrollments')
      .select('id')
      .where('method', '=', 'updb')
      .where('username', '=', username)
      .executeTakeFirst()) !== undefined
  );
}

export interface EnrollmentSummaryRow {
  id: string;
  identityId: string | null;
  method: string;
  jwtTemplate: string;
  expiresAt: string;
  caId: string | null;
}

/** The enrollments of some identities (a page of identity records). */
export function enrollmentsOfIdentities(
  db: TypedExecutor,
  identityIds: readonly string[],
): Promise<EnrollmentSummaryRow[]> {
  if (identityIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('enrollments')
    .select(['id', 'identityId', 'method', 'jwtTemplate', 'expiresAt', 'caId'])
    .where('identityId', 'in', identityIds)
    .execute();
}

/** An outstanding enrollment as its token's use needs it; exactly one of the three owner ids is set. */
export interface EnrollmentByToken {
  id: string;
  method: string;
  tokenHash: string;
  identityId: string | null;
  edgeRouterId: string | null;
  transitRouterId: string | null;
  expiresAt: string;
  username: string | null;
  caId: string | null;
}

export function enrollmentByTokenHash(db: TypedExecutor, tokenHash: string): Promise<EnrollmentByToken | undefined> {
  return db
    .selectFrom('enrollments')
    .select([
      'id',
      'method',
      'tokenHash',
      'identityId',
      'edgeRouterId',
      'transitRouterId',
      'expiresAt',
      'username',
      'caId',
    ])
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
}

/** Deletes the enrollment if it still has this token hash; answers whether it did (false: used concurrently). */
export async function deleteEnrollmentWithTokenHash(
  db: TypedExecutor,
  id: string,
  tokenHash: string,
): Promise<boolean> {
  const res = await db
    .deleteFrom('enrollments')
    .where('id', '=', id)
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
