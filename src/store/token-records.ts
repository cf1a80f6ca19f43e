/** The records that carry a token hash, for the start-up reconciliation of tokens with the token key (queries only). */
import type { TypedExecutor } from './executor.js';

export type TokenTable = 'sessions' | 'api_sessions' | 'enrollments';

/** Every record's id and stored token hash. */
export function tokenHashesOf(db: TypedExecutor, table: TokenTable): Promise<{ id: string; tokenHash: string }[]> {
  return db.selectFrom(table).select(['id', 'tokenHash']).execute();
}

/** Deletes records by id, in chunks that stay under any bound-parameter limit. */
export async function deleteByIds(db: TypedExecutor, table: TokenTable, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .deleteFrom(table)
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
  }
}

export interface EnrollmentKeying {
  id: string;
  method: string;
  identityId: string | null;
  edgeRouterId: string | null;
  transitRouterId: string | null;
  expiresAt: string;
}

/** What re-keying an enrollment needs to know of it. */
export function enrollmentKeying(db: TypedExecutor, id: string): Promise<EnrollmentKeying> {
  return db
    .selectFrom('enrollments')
    .select(['id', 'method', 'identityId', 'edgeRouterId', 'transitRouterId', 'expiresAt'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

/** Stores an enrollment's new token hash and JWT template. */
export async function setEnrollmentSecrets(
  db: TypedExecutor,
  id: string,
  secrets: { tokenHash: string; jwtTemplate: string },
  updatedAt: string,
): Promise<void> {
  await db
    .updateTable('enrollments')
    .set({ ...secrets, updatedAt })
    .where('id', '=', id)
    .execute();
}
