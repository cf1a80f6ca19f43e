/** Identities: the lookups and flag changes outside generic CRUD (queries only; booleans via values.ts). */
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb } from './values.js';

export async function identityExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await db.selectFrom('identities').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** An identity's auth policy id; undefined when the identity does not exist. */
export async function identityAuthPolicyId(db: TypedExecutor, id: string): Promise<string | undefined> {
  return (await db.selectFrom('identities').select('authPolicyId').where('id', '=', id).executeTakeFirst())?.authPolicyId;
}

/** Whether the identity exists and is the default admin. */
export async function isDefaultAdminIdentity(db: TypedExecutor, id: string): Promise<boolean> {
  const row = await db.selectFrom('identities').select('isDefaultAdmin').where('id', '=', id).executeTakeFirst();
  return boolFromDb(row?.isDefaultAdmin);
}

/** Whether any identity is the default admin. */
export async function defaultAdminExists(db: TypedExecutor): Promise<boolean> {
  return (await db.selectFrom('identities').select('id').where('isDefaultAdmin', '=', boolToDb(true)).executeTakeFirst()) !== undefined;
}

/** Sets (or, with nulls, clears) an identity's disable window. */
export async function setIdentityDisabled(
  db: TypedExecutor,
  id: string,
  window: { disabledAt: string | null; disabledUntil: string | null },
  updatedAt: string,
): Promise<void> {
  await db.updateTable('identities').set({ ...window, updatedAt }).where('id', '=', id).execute();
}
