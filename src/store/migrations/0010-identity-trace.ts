/**
 * Identity tracing (`PUT /identities/{id}/trace`): until when it is on, its trace id and channels, kept on the
 * identity. Whether tracing is on is computed from `traceUntil` at read time, so it ends by itself.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('identities').addColumn('traceUntil', 'text').execute();
  await db.schema.alterTable('identities').addColumn('traceId', 'text').execute();
  // JSON array of channel names.
  await db.schema.alterTable('identities').addColumn('traceChannels', 'text').execute();
}
