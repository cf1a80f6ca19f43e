/** Shared shapes for migrations: every entity table starts with the same base columns. */
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** id, createdAt, updatedAt, tags, isSystem — the fields every record has. */
export function entityTable(db: AnyDb, name: string): CreateTableBuilder<string, never> {
  return db.schema
    .createTable(name)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('createdAt', 'text', (c) => c.notNull())
    .addColumn('updatedAt', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('isSystem', 'integer', (c) => c.notNull().defaultTo(0)) as CreateTableBuilder<string, never>;
}

/** The link table of a set property: (ownerId, value, position), indexed both ways for policy matching. */
export async function setTable(db: AnyDb, owner: string, prop: string): Promise<void> {
  const name = `${owner}_${prop}`;
  await db.schema
    .createTable(name)
    .addColumn('ownerId', 'text', (c) => c.notNull().references(`${owner}.id`).onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${name}_pk`, ['ownerId', 'value'])
    .execute();
  await db.schema.createIndex(`${name}_by_value`).on(name).columns(['value', 'ownerId']).execute();
}

export const nowIso = () => new Date().toISOString();
export { sql };
