/** Identities: the lookups and flag changes outside generic CRUD (queries only; booleans via values.ts). */
import { hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonToDb } from './values.js';

export async function identityExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await db.selectFrom('identities').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

const AUTH_POLICY_ID = `select "authPolicyId" from identities where id = ?`;

/** An identity's auth policy id; undefined when the identity does not exist (every login). */
export async function identityAuthPolicyId(db: TypedExecutor, id: string): Promise<string | undefined> {
  const [row] = await hotRows<{ authPolicyId: string }>(db, AUTH_POLICY_ID, [id]);
  return row?.authPolicyId;
}

/** Whether the identity exists and is the default admin. */
export async function isDefaultAdminIdentity(db: TypedExecutor, id: string): Promise<boolean> {
  const row = await db.selectFrom('identities').select('isDefaultAdmin').where('id', '=', id).executeTakeFirst();
  return boolFromDb(row?.isDefaultAdmin);
}

/** Whether any identity is the default admin. */
export async function defaultAdminExists(db: TypedExecutor): Promise<boolean> {
  return (
    (await db.selectFrom('identities').select('id').where('isDefaultAdmin', '=', boolToDb(true)).executeTakeFirst()) !==
    undefined
  );
}

/** Sets (or, with nulls, clears) an identity's disable window. */
export async function setIdentityDisabled(
  db: TypedExecutor,
  id: string,
  window: { disabledAt: string | null; disabledUntil: string | null },
  updatedAt: string,
): Promise<void> {
  await db
    .updateTable('identities')
    .set({ ...window, updatedAt })
    .where('id', '=', id)
    .execute();
}

const STANDING = `select id, "authPolicyId", "disabledAt", "disabledUntil" from identities where id = ?`;

/** What authentication checks of an identity: its policy and disable window; undefined when it does not exist. */
export async function identityStanding(
  db: TypedExecutor,
  id: string,
): Promise<{ id: string; authPolicyId: string; disabledAt: string | null; disabledUntil: string | null } | undefined> {
  const [row] = await hotRows<{
    id: string;
    authPolicyId: string;
    disabledAt: string | null;
    disabledUntil: string | null;
  }>(db, STANDING, [id]);
  return row;
}

/** The id of the identity with this external id, if any. */
export async function identityIdByExternalId(db: TypedExecutor, externalId: string): Promise<string | undefined> {
  return (await db.selectFrom('identities').select('id').where('externalId', '=', externalId).executeTakeFirst())?.id;
}

/** Replaces the client-reported `envInfo` and/or `sdkInfo` of an identity (absent ones are kept). */
export async function setIdentityClientInfo(
  db: TypedExecutor,
  id: string,
  info: { envInfo?: Record<string, string>; sdkInfo?: Record<string, string> },
): Promise<void> {
  if (!info.envInfo && !info.sdkInfo) return;
  await db
    .updateTable('identities')
    .set({
      ...(info.envInfo ? { envInfo: jsonToDb(info.envInfo)! } : {}),
      ...(info.sdkInfo ? { sdkInfo: jsonToDb(info.sdkInfo)! } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** Whether an identity has this name. */
export async function identityNameTaken(db: TypedExecutor, name: string): Promise<boolean> {
  return (await db.selectFrom('identities').select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
}
