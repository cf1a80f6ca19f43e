/**
 * The built-in config types that tunnelers and SDKs look up by name, as system records (they cannot be
 * updated or deleted), with the reference controller's ids so exports and scripts written against it resolve
 * the same types (docs/decisions.md, "Built-in config types").
 *
 * A store that already holds a config type of the same name or id (created by an admin before this
 * migration) keeps it: that record is left alone and the built-in one is not added.
 */
import type { Kysely } from 'kysely';
import { nowIso } from './helpers.js';
import { schema as hostV1 } from './config-types/host.v1.js';
import { schema as hostV2 } from './config-types/host.v2.js';
import { schema as interceptV1 } from './config-types/intercept.v1.js';
import { schema as tunnelerClientV1 } from './config-types/ziti-tunneler-client.v1.js';
import { schema as tunnelerServerV1 } from './config-types/ziti-tunneler-server.v1.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export const BUILTIN_CONFIG_TYPES: readonly { id: string; name: string; schema: Record<string, unknown> }[] = [
  { id: 'g7cIWbcGg', name: 'intercept.v1', schema: interceptV1 },
  { id: 'NH5p4FpGR', name: 'host.v1', schema: hostV1 },
  { id: 'host.v2', name: 'host.v2', schema: hostV2 },
  { id: 'f2dd2df0-9c04-4b84-a91e-71437ac229f1', name: 'ziti-tunneler-client.v1', schema: tunnelerClientV1 },
  { id: 'cea49285-6c07-42cf-9f52-09a9b115c783', name: 'ziti-tunneler-server.v1', schema: tunnelerServerV1 },
];

export async function up(db: AnyDb): Promise<void> {
  const now = nowIso();
  for (const t of BUILTIN_CONFIG_TYPES) {
    const taken = await db
      .selectFrom('config_types')
      .select('id')
      .where((eb) => eb.or([eb('id', '=', t.id), eb('name', '=', t.name)]))
      .executeTakeFirst();
    if (taken) continue;
    await db
      .insertInto('config_types')
      .values({
        id: t.id,
        name: t.name,
        schema: JSON.stringify(t.schema),
        createdAt: now,
        updatedAt: now,
        tags: '{}',
        isSystem: 1,
      })
      .execute();
  }
}
