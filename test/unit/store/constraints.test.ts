/**
 * Constraint failures: the store describes them (kind, table, columns, the written value) without knowing the
 * model, and the model turns them into the error envelope's codes (docs/design.md "Store").
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { deleteRow, insertRow, updateRow, type StoredTable } from '../../../src/store/crud.js';
import { ConstraintViolation, violatedConstraint } from '../../../src/store/constraints.js';
import { constraintError } from '../../../src/model/constraints.js';
import { DomainError } from '../../../src/model/errors.js';
import { toDomainError } from '../../../src/daemon/http/errors.js';

const raw = new Database(':memory:');
raw.pragma('foreign_keys = ON');
const db = new Kysely<any>({ dialect: new SqliteDialect({ database: raw }) });
const things: StoredTable = {
  table: 'things',
  props: { name: { storage: 'text' }, on: { storage: 'bool' }, labels: { storage: 'set' } },
};

before(async () => {
  await sql`create table things (id text primary key, createdAt text, updatedAt text, tags text, isSystem integer, name text unique, "on" integer)`.execute(
    db,
  );
  await sql`create table things_labels ("ownerId" text not null references things(id), value text not null, position integer, primary key ("ownerId", value))`.execute(
    db,
  );
  await sql`create table uses (id text primary key, "thingId" text not null references things(id))`.execute(db);
});
after(() => db.destroy());

const base = (id: string, name: string) => ({
  id,
  name,
  on: true,
  labels: ['a'],
  createdAt: 'x',
  updatedAt: 'x',
  tags: {},
  isSystem: false,
});

test('a duplicate is described by the store with its table, column and written value', async () => {
  await insertRow(db, things, base('t1', 'one'));
  const err = await insertRow(db, things, base('t2', 'one')).then(
    () => assert.fail('the duplicate was stored'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConstraintViolation);
  assert.deepEqual(err.constraint, { kind: 'unique', table: 'things', columns: ['name'] });
  assert.equal(err.value, 'one');
  const mapped = constraintError(err);
  assert.ok(mapped instanceof DomainError);
  assert.equal(mapped.code, 'COULD_NOT_VALIDATE');
  assert.deepEqual(mapped.errorCause, { field: 'name', reason: 'name must be unique', value: 'one' });
});

test('an update to a taken name and a delete of a referenced row are described too', async () => {
  await insertRow(db, things, base('t3', 'three'));
  await assert.rejects(
    updateRow(db, things, 't3', { name: 'one' }),
    (e: unknown) => e instanceof ConstraintViolation && e.constraint.kind === 'unique',
  );
  await sql`insert into uses (id, "thingId") values ('u1', 't3')`.execute(db);
  const err = await deleteRow(db, things, 't3').then(
    () => assert.fail('the referenced row was deleted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConstraintViolation);
  assert.equal(err.constraint.kind, 'foreignKey');
  assert.equal(constraintError(err)?.code, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
});

test('a driver error that is not a constraint failure is left alone', () => {
  const other = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
  assert.equal(violatedConstraint(other), null);
  assert.equal(constraintError(other), null);
  assert.equal(violatedConstraint(undefined), null);
  // A raw driver failure (e.g. from a store module outside the generic CRUD) still maps.
  const rawDup = Object.assign(new Error('UNIQUE constraint failed: things.name'), {
    code: 'SQLITE_CONSTRAINT_UNIQUE',
  });
  assert.equal(constraintError(rawDup)?.code, 'COULD_NOT_VALIDATE');
});

test('a violation escaping a service (a store write outside the model CRUD) still gets the envelope code', async () => {
  const err = await insertRow(db, things, base('t9', 'one')).then(
    () => assert.fail('the duplicate was stored'),
    (e: unknown) => e,
  );
  const mapped = toDomainError(err);
  assert.equal(mapped?.code, 'COULD_NOT_VALIDATE');
  assert.deepEqual(mapped?.errorCause, { field: 'name', reason: 'name must be unique', value: 'one' });
  assert.equal(toDomainError(new Error('boom')), null);
});
