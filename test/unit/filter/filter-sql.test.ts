/**
 * Filter → SQL compiler: every case checks the SQL and parameters produced AND the rows an in-memory
 * SQLite database returns for them, over the small fixed dataset below (the kysely testing style).
 * The expected rows were worked out by hand from docs/reference-notes.md §1.4 / §1.6, not from the output.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { parseFilter } from '../../../src/model/filter/parser.js';
import type { FieldTable } from '../../../src/model/filter/fields.js';
import type { CompiledQuery } from '../../../src/store/filter-sql.js';
import { compileFilter } from '../../../src/model/list-query.js';

const fields: FieldTable = {
  id: { kind: 'scalar', type: 'string', column: 'id' },
  name: { kind: 'scalar', type: 'string', column: 'name' },
  num: { kind: 'scalar', type: 'int', column: 'num' },
  score: { kind: 'scalar', type: 'float', column: 'score' },
  createdAt: { kind: 'scalar', type: 'datetime', column: 'createdAt' },
  flag: { kind: 'scalar', type: 'bool', column: 'flag' },
  tags: { kind: 'map', column: 'tags' },
  roleAttributes: { kind: 'set', table: 'item_attrs', ownerColumn: 'item_id', valueColumn: 'attr' },
};

/**
 * The dataset. Row `d` has every column NULL except flag and score; `c` has an empty set, a NULL bool and
 * a JSON-null tag; `e` has the string "true" as a tag where `a`/`b` have real bools.
 */
const ITEMS = [
  {
    id: 'a',
    name: 'Alpha',
    num: 1,
    score: 1.5,
    createdAt: '2024-01-01T00:00:00.000Z',
    flag: 1,
    tags: '{"env":"prod","on":true,"n":5}',
  },
  {
    id: 'b',
    name: 'beta',
    num: 2,
    score: 2.0,
    createdAt: '2024-06-01T12:00:00.000Z',
    flag: 0,
    tags: '{"env":"dev","on":false,"n":2.5}',
  },
  {
    id: 'c',
    name: 'Gamma ray',
    num: 10,
    score: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    flag: null,
    tags: '{"env":null}',
  },
  { id: 'd', name: null, num: null, score: 0.5, createdAt: null, flag: 1, tags: null },
  {
    id: 'e',
    name: 'alphabet',
    num: -3,
    score: 3.25,
    createdAt: '2023-12-31T23:59:59.999Z',
    flag: 0,
    tags: '{"on":"true","env":"prod"}',
  },
];
const ATTRS = [
  ['a', 'x'],
  ['a', 'y'],
  ['b', 'x'],
  ['d', 'y'],
  ['e', 'x'],
  ['e', 'z'],
];

let db: Kysely<any>;

before(async () => {
  db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
  await sql`create table items (id text primary key, name text, num integer, score real, createdAt text, flag integer, tags text)`.execute(
    db,
  );
  await sql`create table item_attrs (item_id text not null, attr text not null)`.execute(db);
  await db.insertInto('items').values(ITEMS).execute();
  await db
    .insertInto('item_attrs')
    .values(ATTRS.map(([item_id, attr]) => ({ item_id, attr })))
    .execute();
});

after(async () => {
  await db.destroy();
});

const compile = (filter: string): CompiledQuery => compileFilter(parseFilter(filter), fields, { tableAlias: 't' });

const PREFIX = 'select * from "items" as "t" where ';

/** The WHERE fragment and its parameters, as kysely compiles them. */
function where(c: CompiledQuery): { sql: string; parameters: readonly unknown[] } {
  assert.ok(c.where, 'expected a where clause');
  const q = db.selectFrom('items as t').selectAll().where(c.where).compile();
  assert.ok(q.sql.startsWith(PREFIX), q.sql);
  return { sql: q.sql.slice(PREFIX.length), parameters: q.parameters };
}

/** Runs the compiled query (where, order, skip/limit) and returns the ids in result order. */
async function ids(c: CompiledQuery): Promise<string[]> {
  let qb = db.selectFrom('items as t').select('t.id');
  if (c.where) qb = qb.where(c.where);
  for (const o of c.orderBy) qb = qb.orderBy(o.expr, o.direction);
  if (c.limit !== undefined && c.limit !== 'none') qb = qb.limit(c.limit);
  else if (c.skip !== undefined) qb = qb.limit(-1);
  if (c.skip !== undefined) qb = qb.offset(c.skip);
  const rows = await qb.execute();
  return rows.map((r) => r.id as string);
}

interface Case {
  filter: string;
  sql: string;
  params: unknown[];
  rows: string[];
}

/** Runs a table of cases: SQL, parameters and rows for each. */
function cases(list: Case[]): void {
  for (const c of list) {
    test(c.filter, async () => {
      const compiled = compile(c.filter);
      const w = where(compiled);
      assert.equal(w.sql, c.sql, 'sql');
      assert.deepEqual(w.parameters, c.params, 'parameters');
      assert.deepEqual(await ids(compiled), c.rows, 'rows');
    });
  }
}

const N = '"t"."name"';
const NUM = '"t"."num"';
const SC = '"t"."score"';
const CA = '"t"."createdAt"';
const FL = '"t"."flag"';
const TG = '"t"."tags"';
const LINK = 'select 1 from "item_attrs" as "t_set" where "t_set"."item_id" = "t"."id"';
const COUNT = `(select count(*) from "item_attrs" as "t_set" where "t_set"."item_id" = "t"."id")`;
const TEXT = `(case when json_type(${TG}, ?) = 'text' then json_extract(${TG}, ?) end)`;
const INT = `(case when json_type(${TG}, ?) = 'integer' then json_extract(${TG}, ?) end)`;
const FLOAT = `(case when json_type(${TG}, ?) in ('integer', 'real') then json_extract(${TG}, ?) end)`;
const BOOL = `(case json_type(${TG}, ?) when 'true' then 1 when 'false' then 0 end)`;
const ENV = '$."env"';
const ON = '$."on"';

describe('strings', () => {
  cases([
    { filter: 'name = "Alpha"', sql: `${N} = ?`, params: ['Alpha'], rows: ['a'] },
    // parity: a missing value is != anything (§1.4).
    { filter: 'name != "Alpha"', sql: `(${N} is null or ${N} <> ?)`, params: ['Alpha'], rows: ['b', 'c', 'd', 'e'] },
    // NOT of a comparison that is false because the value is missing is true.
    { filter: 'not name = "Alpha"', sql: `((${N} = ?) is not true)`, params: ['Alpha'], rows: ['b', 'c', 'd', 'e'] },
    {
      filter: 'not name != "Alpha"',
      sql: `(((${N} is null or ${N} <> ?)) is not true)`,
      params: ['Alpha'],
      rows: ['a'],
    },
    // byte-wise order: upper case sorts before lower case.
    { filter: 'name > "a"', sql: `${N} > ?`, params: ['a'], rows: ['b', 'e'] },
    { filter: 'name < "b"', sql: `${N} < ?`, params: ['b'], rows: ['a', 'c', 'e'] },
    { filter: 'name <= "Alpha"', sql: `${N} <= ?`, params: ['Alpha'], rows: ['a'] },
    { filter: 'name >= "alphabet"', sql: `${N} >= ?`, params: ['alphabet'], rows: ['b', 'e'] },
    // numbers convert to strings on a string field.
    { filter: 'name = 5', sql: `${N} = ?`, params: ['5'], rows: [] },
    { filter: 'name = null', sql: `${N} is null`, params: [], rows: ['d'] },
    { filter: 'name != null', sql: `${N} is not null`, params: [], rows: ['a', 'b', 'c', 'e'] },
  ]);
});

describe('contains / icontains', () => {
  cases([
    { filter: 'name contains "lpha"', sql: `instr(${N}, ?) > 0`, params: ['lpha'], rows: ['a', 'e'] },
    // case-sensitive: LIKE would match here, instr does not.
    { filter: 'name contains "ALPHA"', sql: `instr(${N}, ?) > 0`, params: ['ALPHA'], rows: [] },
    { filter: 'name icontains "ALPHA"', sql: `instr(upper(${N}), upper(?)) > 0`, params: ['ALPHA'], rows: ['a', 'e'] },
    // parity: `not contains` is true for a missing value (§1.4).
    {
      filter: 'name not contains "ph"',
      sql: `(${N} is null or not (instr(${N}, ?) > 0))`,
      params: ['ph'],
      rows: ['b', 'c', 'd'],
    },
    {
      filter: 'name not icontains "AL"',
      sql: `(${N} is null or not (instr(upper(${N}), upper(?)) > 0))`,
      params: ['AL'],
      rows: ['b', 'c', 'd'],
    },
    // an int field is read as text for contains.
    { filter: 'num contains 1', sql: `instr(cast(${NUM} as text), ?) > 0`, params: ['1'], rows: ['a', 'c'] },
  ]);
});

describe('numbers', () => {
  cases([
    { filter: 'num > 1', sql: `${NUM} > ?`, params: [1], rows: ['b', 'c'] },
    { filter: 'num >= 1.5', sql: `${NUM} >= ?`, params: [1.5], rows: ['b', 'c'] },
    { filter: 'num < 0', sql: `${NUM} < ?`, params: [0], rows: ['e'] },
    { filter: 'num != 2', sql: `(${NUM} is null or ${NUM} <> ?)`, params: [2], rows: ['a', 'c', 'd', 'e'] },
    { filter: 'not num > 1', sql: `((${NUM} > ?) is not true)`, params: [1], rows: ['a', 'd', 'e'] },
    { filter: 'score = 2', sql: `${SC} = ?`, params: [2], rows: ['b'] },
    { filter: 'score <= 1.5', sql: `${SC} <= ?`, params: [1.5], rows: ['a', 'd'] },
  ]);
});

describe('in / not in', () => {
  cases([
    { filter: 'num in [1, 10]', sql: `${NUM} in (?, ?)`, params: [1, 10], rows: ['a', 'c'] },
    // parity: `not in` is NOT(in), so true for a missing value (§1.4).
    {
      filter: 'num not in [1, 10]',
      sql: `(${NUM} is null or ${NUM} not in (?, ?))`,
      params: [1, 10],
      rows: ['b', 'd', 'e'],
    },
    { filter: 'name in ["beta", "Alpha"]', sql: `${N} in (?, ?)`, params: ['beta', 'Alpha'], rows: ['a', 'b'] },
    {
      filter: 'name not in ["beta"]',
      sql: `(${N} is null or ${N} not in (?))`,
      params: ['beta'],
      rows: ['a', 'c', 'd', 'e'],
    },
    // strings against an int field compare its decimal text.
    { filter: 'num in ["1", "10"]', sql: `cast(${NUM} as text) in (?, ?)`, params: ['1', '10'], rows: ['a', 'c'] },
    {
      filter: 'createdAt in [datetime(2024-01-01T00:00:00Z), datetime(2025-01-01T01:00:00+01:00)]',
      sql: `${CA} in (?, ?)`,
      params: ['2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
      rows: ['a', 'c'],
    },
  ]);
});

describe('between (half-open)', () => {
  cases([
    { filter: 'num between 1 and 10', sql: `(${NUM} >= ? and ${NUM} < ?)`, params: [1, 10], rows: ['a', 'b'] },
    {
      filter: 'num not between 1 and 10',
      sql: `(${NUM} is null or ${NUM} < ? or ${NUM} >= ?)`,
      params: [1, 10],
      rows: ['c', 'd', 'e'],
    },
    { filter: 'score between 1 and 2.5', sql: `(${SC} >= ? and ${SC} < ?)`, params: [1, 2.5], rows: ['a', 'b'] },
    {
      filter: 'createdAt between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00Z)',
      sql: `(${CA} >= ? and ${CA} < ?)`,
      params: ['2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
      rows: ['a', 'b'],
    },
  ]);
});

describe('datetimes', () => {
  cases([
    {
      filter: 'createdAt >= datetime(2024-01-01T00:00:00Z)',
      sql: `${CA} >= ?`,
      params: ['2024-01-01T00:00:00.000Z'],
      rows: ['a', 'b', 'c'],
    },
    // the offset is normalised to UTC: this is 2024-01-01T00:00:00Z.
    {
      filter: 'createdAt < datetime(2024-01-01T01:00:00+01:00)',
      sql: `${CA} < ?`,
      params: ['2024-01-01T00:00:00.000Z'],
      rows: ['e'],
    },
    {
      filter: 'createdAt = datetime(2024-06-01T12:00:00.000Z)',
      sql: `${CA} = ?`,
      params: ['2024-06-01T12:00:00.000Z'],
      rows: ['b'],
    },
    {
      filter: 'createdAt != datetime(2024-06-01T12:00:00Z)',
      sql: `(${CA} is null or ${CA} <> ?)`,
      params: ['2024-06-01T12:00:00.000Z'],
      rows: ['a', 'c', 'd', 'e'],
    },
    {
      filter: 'createdAt > datetime(2023-12-31T23:59:59.998Z)',
      sql: `${CA} > ?`,
      params: ['2023-12-31T23:59:59.998Z'],
      rows: ['a', 'b', 'c', 'e'],
    },
  ]);
});

describe('bools (a missing bool reads as false)', () => {
  cases([
    { filter: 'flag', sql: `${FL} = ?`, params: [1], rows: ['a', 'd'] },
    { filter: 'flag = true', sql: `${FL} = ?`, params: [1], rows: ['a', 'd'] },
    // parity: missing bool field evaluates false (§1.4), so `= false` matches c (NULL).
    { filter: 'flag = false', sql: `(${FL} is null or ${FL} = ?)`, params: [0], rows: ['b', 'c', 'e'] },
    { filter: 'flag != true', sql: `(${FL} is null or ${FL} = ?)`, params: [0], rows: ['b', 'c', 'e'] },
    { filter: 'flag != false', sql: `${FL} = ?`, params: [1], rows: ['a', 'd'] },
    { filter: 'not flag', sql: `((${FL} = ?) is not true)`, params: [1], rows: ['b', 'c', 'e'] },
    { filter: 'flag = null', sql: `${FL} is null`, params: [], rows: ['c'] },
  ]);
});

describe('map entries (tags.x)', () => {
  cases([
    { filter: 'tags.env = "prod"', sql: `${TEXT} = ?`, params: [ENV, ENV, 'prod'], rows: ['a', 'e'] },
    // JSON null and an absent tags column are both missing, so != is true for them.
    {
      filter: 'tags.env != "prod"',
      sql: `(${TEXT} is null or ${TEXT} <> ?)`,
      params: [ENV, ENV, ENV, ENV, 'prod'],
      rows: ['b', 'c', 'd'],
    },
    { filter: 'tags.env = null', sql: `json_extract(${TG}, ?) is null`, params: [ENV], rows: ['c', 'd'] },
    { filter: 'tags.env != null', sql: `json_extract(${TG}, ?) is not null`, params: [ENV], rows: ['a', 'b', 'e'] },
    { filter: 'tags.on = true', sql: `${BOOL} = ?`, params: [ON, 1], rows: ['a'] },
    { filter: 'tags.on', sql: `${BOOL} = ?`, params: [ON, 1], rows: ['a'] },
    // the string "true" (e) is not a bool, so it reads as missing → false.
    {
      filter: 'tags.on = false',
      sql: `(${BOOL} is null or ${BOOL} = ?)`,
      params: [ON, ON, 0],
      rows: ['b', 'c', 'd', 'e'],
    },
    { filter: 'tags.on = "true"', sql: `${TEXT} = ?`, params: [ON, ON, 'true'], rows: ['e'] },
    // the literal picks the type: an int literal only matches integer entries, a float literal any number.
    { filter: 'tags.n > 2', sql: `${INT} > ?`, params: ['$."n"', '$."n"', 2], rows: ['a'] },
    { filter: 'tags.n > 2.0', sql: `${FLOAT} > ?`, params: ['$."n"', '$."n"', 2], rows: ['a', 'b'] },
    { filter: 'tags.env contains "o"', sql: `instr(${TEXT}, ?) > 0`, params: [ENV, ENV, 'o'], rows: ['a', 'e'] },
    {
      filter: 'tags.env in ["dev", "prod"]',
      sql: `${TEXT} in (?, ?)`,
      params: [ENV, ENV, 'dev', 'prod'],
      rows: ['a', 'b', 'e'],
    },
    // keys with dashes and nested paths are quoted segments of a bound JSON path.
    {
      filter: 'tags.my-key.sub = null',
      sql: `json_extract(${TG}, ?) is null`,
      params: ['$."my-key"."sub"'],
      rows: ['a', 'b', 'c', 'd', 'e'],
    },
  ]);
});

describe('sets', () => {
  cases([
    {
      filter: 'anyOf(roleAttributes) = "x"',
      sql: `exists (${LINK} and "t_set"."attr" = ?)`,
      params: ['x'],
      rows: ['a', 'b', 'e'],
    },
    // any element other than x: b (only x) and c (empty) fail.
    {
      filter: 'anyOf(roleAttributes) != "x"',
      sql: `exists (${LINK} and ("t_set"."attr" is null or "t_set"."attr" <> ?))`,
      params: ['x'],
      rows: ['a', 'd', 'e'],
    },
    // parity: allOf over the empty set (c) is true (§1.4).
    {
      filter: 'allOf(roleAttributes) = "x"',
      sql: `not exists (${LINK} and ("t_set"."attr" = ?) is not true)`,
      params: ['x'],
      rows: ['b', 'c'],
    },
    {
      filter: 'allOf(roleAttributes) in ["x", "y"]',
      sql: `not exists (${LINK} and ("t_set"."attr" in (?, ?)) is not true)`,
      params: ['x', 'y'],
      rows: ['a', 'b', 'c', 'd'],
    },
    {
      filter: 'anyOf(roleAttributes) contains "z"',
      sql: `exists (${LINK} and instr("t_set"."attr", ?) > 0)`,
      params: ['z'],
      rows: ['e'],
    },
    { filter: 'count(roleAttributes) = 2', sql: `${COUNT} = ?`, params: [2], rows: ['a', 'e'] },
    { filter: 'count(roleAttributes) = 0', sql: `${COUNT} = ?`, params: [0], rows: ['c'] },
    {
      filter: 'count(roleAttributes) between 1 and 2',
      sql: `(${COUNT} >= ? and ${COUNT} < ?)`,
      params: [1, 2],
      rows: ['b', 'd'],
    },
    { filter: 'isEmpty(roleAttributes)', sql: `not exists (${LINK})`, params: [], rows: ['c'] },
    {
      filter: 'not isEmpty(roleAttributes)',
      sql: `((not exists (${LINK})) is not true)`,
      params: [],
      rows: ['a', 'b', 'd', 'e'],
    },
  ]);
});

describe('grouping and constants', () => {
  cases([
    // parity: `a and b or c` is `a and (b or c)` (§1.3); SQL precedence would return b here.
    {
      filter: 'num > 5 and flag = true or name = "beta"',
      sql: `(${NUM} > ? and (${FL} = ? or ${N} = ?))`,
      params: [5, 1, 'beta'],
      rows: [],
    },
    {
      filter: '(num > 5 and flag = true) or name = "beta"',
      sql: `((${NUM} > ? and ${FL} = ?) or ${N} = ?)`,
      params: [5, 1, 'beta'],
      rows: ['b'],
    },
    // parity: `not` takes everything to its right (§1.3).
    {
      filter: 'not num = 1 and flag = true',
      sql: `(((${NUM} = ? and ${FL} = ?)) is not true)`,
      params: [1, 1],
      rows: ['b', 'c', 'd', 'e'],
    },
    { filter: 'true', sql: 'true', params: [], rows: ['a', 'b', 'c', 'd', 'e'] },
    { filter: 'false or name = "beta"', sql: `(false or ${N} = ?)`, params: ['beta'], rows: ['b'] },
  ]);
});

describe('sorting and paging', () => {
  test('no filter: no where clause, order by id only', async () => {
    const c = compile('');
    assert.equal(c.where, null);
    assert.equal(c.orderBy.length, 1);
    assert.equal(c.skip, undefined);
    assert.equal(c.limit, undefined);
    assert.deepEqual(await ids(c), ['a', 'b', 'c', 'd', 'e']);
  });

  /** Compiles a query with ORDER BY only, returning its SQL tail, parameters and rows. */
  async function sorted(filter: string) {
    const c = compile(filter);
    let qb = db.selectFrom('items as t').select('t.id');
    for (const o of c.orderBy) qb = qb.orderBy(o.expr, o.direction);
    const q = qb.compile();
    return {
      order: q.sql.replace('select "t"."id" from "items" as "t" ', ''),
      parameters: q.parameters,
      rows: await ids(c),
      c,
    };
  }

  test('sort by name: nulls first ascending, byte order, id tie-breaker appended', async () => {
    const r = await sorted('sort by name');
    assert.equal(r.order, `order by ${N} asc, "t"."id" asc`);
    assert.deepEqual(r.rows, ['d', 'a', 'c', 'e', 'b']);
    assert.deepEqual(
      r.c.orderBy.map((o) => [o.direction, o.nulls]),
      [
        ['asc', 'first'],
        ['asc', 'first'],
      ],
    );
  });

  test('sort by name desc: nulls last', async () => {
    const r = await sorted('sort by name desc');
    assert.equal(r.order, `order by ${N} desc, "t"."id" asc`);
    assert.deepEqual(r.rows, ['b', 'e', 'c', 'a', 'd']);
    assert.equal(r.c.orderBy[0]!.nulls, 'last');
  });

  test('sort by several fields', async () => {
    const r = await sorted('sort by flag desc, num');
    assert.equal(r.order, `order by ${FL} desc, ${NUM} asc, "t"."id" asc`);
    assert.deepEqual(r.rows, ['d', 'a', 'e', 'b', 'c']);
  });

  test('sort by a datetime', async () => {
    const r = await sorted('sort by createdAt desc');
    assert.deepEqual(r.rows, ['c', 'b', 'a', 'e', 'd']);
  });

  test('sort by a map entry (missing and JSON null first, then id)', async () => {
    const r = await sorted('sort by tags.env');
    assert.equal(r.order, `order by json_extract(${TG}, ?) asc, "t"."id" asc`);
    assert.deepEqual(r.parameters, [ENV]);
    assert.deepEqual(r.rows, ['c', 'd', 'b', 'a', 'e']);
  });

  test('at most 5 sort fields are kept, then id', async () => {
    const r = await sorted('sort by name, num, score, createdAt, flag, tags.env');
    assert.equal(r.order, `order by ${N} asc, ${NUM} asc, ${SC} asc, ${CA} asc, ${FL} asc, "t"."id" asc`);
    assert.deepEqual(r.parameters, []);
  });

  test('skip and limit pass through with the filter', async () => {
    const c = compile('name != null sort by num skip 1 limit 2');
    assert.equal(c.skip, 1);
    assert.equal(c.limit, 2);
    // num order over a, b, c, e: e(-3) a(1) b(2) c(10).
    assert.deepEqual(await ids(c), ['a', 'b']);
  });

  test('limit none', async () => {
    const c = compile('limit none');
    assert.equal(c.where, null);
    assert.equal(c.limit, 'none');
    assert.deepEqual(await ids(c), ['a', 'b', 'c', 'd', 'e']);
  });

  test('the table alias qualifies every column', () => {
    const c = compileFilter(parseFilter('anyOf(roleAttributes) = "x" and name = "y"'), fields, { tableAlias: 'i' });
    const q = db.selectFrom('items as i').selectAll().where(c.where!).compile();
    assert.equal(
      q.sql,
      'select * from "items" as "i" where (exists (select 1 from "item_attrs" as "i_set" where "i_set"."item_id" = "i"."id" and "i_set"."attr" = ?) and "i"."name" = ?)',
    );
  });
});

describe('errors', () => {
  test('type errors surface from compileFilter as INVALID_FILTER', () => {
    assert.throws(() => compile('num = "x"'), { code: 'INVALID_FILTER' });
    assert.throws(() => compile('nope = 1'), { code: 'INVALID_FILTER', causeMessage: "unknown symbol 'nope'" });
  });
});
