/**
 * Writes `src/store/schema.ts`: the kysely `Database` interface of the store, read from a fresh store after
 * every migration has run. The migrations stay the one place a table is described; this file is their typed
 * shadow. `test/unit/store/schema.test.ts` fails when the committed file differs from what this renders.
 *
 * Usage: node --import tsx scripts/gen-store-schema.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore } from '../src/store/db.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../src/store/schema.ts', import.meta.url));

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

const pascal = (table: string) =>
  table
    .split(/[_-]/)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('') + 'Table';

const tsType = (sqlType: string) =>
  /int/i.test(sqlType) ? 'number' : /real|floa|doub/i.test(sqlType) ? 'number' : 'string';

/** The text of `src/store/schema.ts` for the current migrations. */
export async function renderStoreSchema(): Promise<string> {
  const store = await openStore(':memory:');
  try {
    const tables = store.raw
      // Search indexes (FTS5 virtual tables and their shadow tables) are read through SQL only, never kysely.
      .prepare(
        `select name from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite_%' order by name`,
      )
      .all() as { name: string }[];
    const out: string[] = [
      '/**',
      " * The store's tables as kysely sees them. GENERATED from the migrations by `scripts/gen-store-schema.ts`:",
      ' * do not edit; rerun the script after adding a migration (a unit test checks it is current).',
      ' *',
      ' * Column types are the stored ones: booleans are 0/1 integers and JSON values are text; the conversions live',
      ' * in `src/store/values.ts`. `Generated<T>` marks a column with a default, optional on insert.',
      ' */',
      "import type { Generated } from 'kysely';",
      '',
    ];
    const entries: string[] = [];
    const member = (n: string) => (/^[A-Za-z_$][\w$]*$/.test(n) ? n : JSON.stringify(n));
    const line = (c: ColumnInfo) => {
      let t = tsType(c.type);
      if (!c.notnull && !c.pk) t += ' | null';
      if (c.dflt_value !== null) t = `Generated<${t}>`;
      return `  ${member(c.name)}: ${t};`;
    };
    // Every entity table starts with the same base columns (migrations/helpers.ts `entityTable`): declared once.
    const base = [
      'id: string;',
      'createdAt: string;',
      'updatedAt: string;',
      'tags: Generated<string>;',
      'isSystem: Generated<number>;',
    ];
    out.push('export interface EntityColumns {', ...base.map((b) => `  ${b}`), '}', '');
    for (const { name } of tables) {
      const cols = store.raw.prepare(`select * from pragma_table_info(?) order by cid`).all(name) as ColumnInfo[];
      const lines = cols.map(line);
      const isEntity = base.every((b, i) => lines[i] === `  ${b}`);
      out.push(`export interface ${pascal(name)}${isEntity ? ' extends EntityColumns' : ''} {`);
      out.push(...(isEntity ? lines.slice(base.length) : lines), '}', '');
      entries.push(`  ${member(name)}: ${pascal(name)};`);
    }
    out.push('export interface Database {', ...entries, '}', '');
    return out.join('\n');
  } finally {
    await store.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SCHEMA_FILE, await renderStoreSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
