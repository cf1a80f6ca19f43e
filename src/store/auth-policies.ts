/** Authentication policies: existence, names, and one policy with its JSON members parsed (queries only). */
import { hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { jsonFromDb } from './values.js';

export interface StoredAuthPolicy {
  id: string;
  name: string;
  /** Parsed JSON; its shape is the model's (AuthPolicy in src/model/resources/auth-policy.ts). */
  primary: unknown;
  secondary: unknown;
}

export async function authPolicyExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await hotRows(db, 'select id from auth_policies where id = ?', [id])).length > 0;
}

/** Every policy's id and name. */
export function authPolicyNames(db: TypedExecutor): Promise<{ id: string; name: string }[]> {
  return db.selectFrom('auth_policies').select(['id', 'name']).execute();
}

const POLICY_BY_ID = 'select id, name, "primary", secondary from auth_policies where id = ?';

/** One policy; undefined when it does not exist (read at every login and API-session cache miss). */
export async function authPolicyById(db: TypedExecutor, id: string): Promise<StoredAuthPolicy | undefined> {
  const [row] = await hotRows<{ id: string; name: string; primary: string; secondary: string }>(db, POLICY_BY_ID, [id]);
  return row && { id: row.id, name: row.name, primary: jsonFromDb(row.primary), secondary: jsonFromDb(row.secondary) };
}
