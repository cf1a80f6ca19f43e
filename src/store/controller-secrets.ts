/**
 * The `controller_secrets` table (migration 0014): named values sealed under the master key of controllers that
 * share a store. The store sees only sealed text; sealing and opening happen in the model
 * (model/controller-secrets.ts).
 */
import type { Executor } from './executor.js';

export interface SealedSecret {
  name: string;
  ciphertext: string;
}

/** Every stored secret, by name. */
export async function sealedSecrets(db: Executor): Promise<SealedSecret[]> {
  return db.selectFrom('controller_secrets').select(['name', 'ciphertext']).orderBy('name').execute();
}

/** When the oldest secret was stored (what a refusal to replace them names), or undefined when there is none. */
export async function secretsCreatedAt(db: Executor): Promise<string | undefined> {
  const row = await db
    .selectFrom('controller_secrets')
    .select(({ fn }) => fn.min<string>('createdAt').as('at'))
    .executeTakeFirst();
  return row?.at ?? undefined;
}

/** Stores `rows`, replacing the values of names already stored (their `createdAt` stays). */
export async function putSealedSecrets(db: Executor, rows: readonly SealedSecret[], now: string): Promise<void> {
  for (const row of rows) {
    await db
      .insertInto('controller_secrets')
      .values({ ...row, createdAt: now, updatedAt: now })
      .onConflict((oc) => oc.column('name').doUpdateSet({ ciphertext: row.ciphertext, updatedAt: now }))
      .execute();
  }
}

/** Removes every stored secret (an import that replaces them). */
export async function deleteSealedSecrets(db: Executor): Promise<void> {
  await db.deleteFrom('controller_secrets').execute();
}
