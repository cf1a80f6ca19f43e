/** An identity's trace settings (migration 0010): until when, the trace id and the channels. */
import type { Executor } from './db.js';
import { jsonFromDb, jsonToDb } from './values.js';

export interface StoredTrace {
  until: string | null;
  traceId: string | null;
  channels: string[];
}

/** The identity's trace settings, or undefined when there is no such identity. */
export async function readTrace(db: Executor, identityId: string): Promise<StoredTrace | undefined> {
  const row = await db
    .selectFrom('identities')
    .select(['traceUntil', 'traceId', 'traceChannels'])
    .where('id', '=', identityId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    until: row.traceUntil ?? null,
    traceId: row.traceId ?? null,
    channels: row.traceChannels ? jsonFromDb<string[]>(row.traceChannels) : [],
  };
}

export async function writeTrace(
  db: Executor,
  identityId: string,
  trace: StoredTrace,
  updatedAt: string,
): Promise<void> {
  await db
    .updateTable('identities')
    .set({
      traceUntil: trace.until,
      traceId: trace.traceId,
      traceChannels: jsonToDb(trace.channels),
      updatedAt,
    })
    .where('id', '=', identityId)
    .execute();
}

/** The trace settings of those identities that have ever had any, by id. */
export async function readTraces(db: Executor, identityIds: readonly string[]): Promise<Map<string, StoredTrace>> {
  const out = new Map<string, StoredTrace>();
  for (let i = 0; i < identityIds.length; i += 500) {
    const rows = await db
      .selectFrom('identities')
      .select(['id', 'traceUntil', 'traceId', 'traceChannels'])
      .where('id', 'in', identityIds.slice(i, i + 500))
      .where('traceUntil', 'is not', null)
      .execute();
    for (const r of rows) {
      out.set(r.id, {
        until: r.traceUntil,
        traceId: r.traceId,
        channels: r.traceChannels ? jsonFromDb<string[]>(r.traceChannels) : [],
      });
    }
  }
  return out;
}
