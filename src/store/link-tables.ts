/**
 * Naming of set properties' link tables, kept free of Kysely so the model's resource definitions (which name
 * them) stay cheap to import (docs/design.md, "Cheap definitions"). The SQL over these tables is in crud.ts.
 */
import type { FieldDef } from './filter-ast.js';

/** Name of the link table holding a set property. */
export const linkTable = (table: string, prop: string): string => `${table}_${prop}`;

/** The filter field of a set property: its link table's owner and value columns. */
export const linkTableField = (table: string, prop: string): FieldDef => ({
  kind: 'set',
  table: linkTable(table, prop),
  ownerColumn: 'ownerId',
  valueColumn: 'value',
});
