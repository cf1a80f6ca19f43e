/** The typed store interface is generated from the migrations; this keeps the committed file current. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderStoreSchema, SCHEMA_FILE } from '../../../scripts/gen-store-schema.js';

test('src/store/schema.ts matches the tables the migrations create', async () => {
  const expected = await renderStoreSchema();
  assert.equal(
    readFileSync(SCHEMA_FILE, 'utf8'),
    expected,
    'src/store/schema.ts is out of date: run `node --import tsx scripts/gen-store-schema.ts`',
  );
});
