/**
 * Records typed from their definitions (`RecordOf`, src/model/resource-record.ts): what the generic CRUD reads
 * has each stored prop's kind, and null only where the store's column allows it, as the type says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createEntity, getEntity, getRow } from '../../../src/model/crud.js';
import type { ResourceDef, Row } from '../../../src/model/resource.js';
import { identities } from '../../../src/model/resources/identity.js';
import { services } from '../../../src/model/resources/service.js';
import { openTestStore, type TestStore } from '../../harness/store.js';

let ts: TestStore;
before(async () => {
  ts = await openTestStore();
});
after(() => ts.close());

const KIND_TEST: Record<string, (v: unknown) => boolean> = {
  text: (v) => typeof v === 'string',
  datetime: (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v)),
  int: (v) => Number.isInteger(v),
  real: (v) => typeof v === 'number',
  bool: (v) => typeof v === 'boolean',
  json: () => true,
  set: (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'),
};

/** Every stored prop of a record against its kind; null only in a column the table lets be NULL. */
async function assertRecordMatches(def: ResourceDef, record: Row): Promise<void> {
  const { rows } = await sql<{ name: string; notnull: number }>`
    select name, "notnull" from pragma_table_info(${def.table})`.execute(ts.ctx.db);
  const notNull = new Set(rows.filter((r) => r.notnull === 1).map((r) => r.name));
  for (const [name, p] of Object.entries(def.props)) {
    if (p.virtual) {
      assert.equal(name in record, false, `${def.name}.${name} is virtual`);
      continue;
    }
    const v = record[name];
    if (v === null) assert.equal(notNull.has(name), false, `${def.name}.${name} is null in a NOT NULL column`);
    else assert.ok(KIND_TEST[p.storage]?.(v), `${def.name}.${name} = ${JSON.stringify(v)} is not ${p.storage}`);
  }
}

describe('resource records', () => {
  it('an identity read back has the types its definition gives it', async () => {
    const id = await createEntity(ts.ctx, identities, { name: 'rec-ident', type: 'User', isAdmin: false });
    const row = await getRow(ts.ctx, identities, id);
    await assertRecordMatches(identities, row);
    // Typed reads, no casts: a NOT NULL column is its kind, a nullable one may be null.
    const name: string = row.name;
    const admin: boolean = row.isAdmin;
    const roles: string[] = row.roleAttributes;
    const authPolicyId: string = row.authPolicyId;
    assert.deepEqual([name, admin, roles, authPolicyId], ['rec-ident', false, [], 'default']);
    assert.equal(row.externalId, null);
    // @ts-expect-error externalId may be null
    void ((): string => row.externalId);
    // @ts-expect-error `type` is virtual: not stored, so not in the record
    void row.type;
    // A detail adds its decorations beside the typed fields.
    const detail = await getEntity(ts.ctx, identities, id);
    const typeId: string = detail.typeId;
    assert.equal(typeId, 'User');
    assert.ok(detail.authPolicy && typeof detail.authPolicy === 'object');
  });

  it('a service read back has the types its definition gives it', async () => {
    const id = await createEntity(ts.ctx, services, { name: 'rec-svc', encryptionRequired: true });
    const row = await getRow(ts.ctx, services, id);
    await assertRecordMatches(services, row);
    const encrypted: boolean = row.encryptionRequired;
    const configs: string[] = row.configs;
    const strategy: string = row.terminatorStrategy;
    assert.deepEqual([encrypted, configs, strategy], [true, [], 'smartrouting']);
  });
});
