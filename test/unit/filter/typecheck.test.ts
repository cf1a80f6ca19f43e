/**
 * Type checking against a field table (docs/reference-notes.md §1.4, §1.8): symbol resolution, set/scalar
 * misuse, type conversions and mismatches, sort validation.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilter } from '../../../src/model/filter/parser.js';
import { checkFilter, numberToString, type CheckedExpr } from '../../../src/model/filter/typecheck.js';
import type { FieldTable } from '../../../src/model/filter/fields.js';

const fields: FieldTable = {
  id: { kind: 'scalar', type: 'string', column: 'id' },
  name: { kind: 'scalar', type: 'string', column: 'name' },
  cost: { kind: 'scalar', type: 'int', column: 'cost' },
  ratio: { kind: 'scalar', type: 'float', column: 'ratio' },
  createdAt: { kind: 'scalar', type: 'datetime', column: 'created_at' },
  isAdmin: { kind: 'scalar', type: 'bool', column: 'is_admin' },
  'type.name': { kind: 'scalar', type: 'string', column: 'type_name' },
  tags: { kind: 'map', column: 'tags' },
  roleAttributes: { kind: 'set', table: 'role_attributes', ownerColumn: 'owner_id', valueColumn: 'attr' },
};

const check = (text: string): CheckedExpr | null => checkFilter(parseFilter(text), fields).predicate;

function fails(text: string, causeMessage: string): void {
  assert.throws(() => check(text), {
    code: 'INVALID_FILTER',
    causeMessage,
    errorCause: { code: 'UNHANDLED', message: causeMessage },
  });
}

const NAME = { kind: 'column', field: 'name', column: 'name', type: 'string' } as const;
const COST = { kind: 'column', field: 'cost', column: 'cost', type: 'int' } as const;
const SET = {
  kind: 'set',
  field: 'roleAttributes',
  table: 'role_attributes',
  ownerColumn: 'owner_id',
  valueColumn: 'attr',
} as const;

describe('symbols', () => {
  test('unknown symbols', () => {
    fails('foo = 1', "unknown symbol 'foo'");
    fails('sort by foo', "unknown symbol 'foo'");
    fails('tag.x = 1', "unknown symbol 'tag.x'");
    fails('name.x = 1', "unknown symbol 'name.x'");
    // inherited object properties are not fields
    fails('constructor = "x"', "unknown symbol 'constructor'");
  });

  test('parity: a single-quoted identifier keeps its quotes and so is unknown', () => {
    fails('\'name\' = "x"', "unknown symbol ''name''");
  });

  test('an exact dotted entry wins over map lookup', () => {
    assert.deepEqual(check('type.name = "x"'), {
      kind: 'compare',
      subject: { kind: 'column', field: 'type.name', column: 'type_name', type: 'string' },
      as: 'string',
      op: '=',
      value: 'x',
    });
  });

  test('map entries resolve to a path under the map column', () => {
    assert.deepEqual(check('tags.a.b-c = "x"'), {
      kind: 'compare',
      subject: { kind: 'mapEntry', field: 'tags', column: 'tags', path: ['a', 'b-c'] },
      as: 'string',
      op: '=',
      value: 'x',
    });
    fails('tags = "x"', "symbol 'tags' is a map symbol; address one entry as tags.<key>");
  });

  test('set symbols used bare, scalars in set functions', () => {
    fails('roleAttributes = "x"', "symbol 'roleAttributes' is a set symbol but is used in non-set function context");
    fails('roleAttributes', "symbol 'roleAttributes' is a set symbol but is used in non-set function context");
    fails('anyOf(name) = "x"', "symbol 'name' is not a set symbol but is used in set function anyOf");
    fails('allOf(name) = "x"', "symbol 'name' is not a set symbol but is used in set function allOf");
    fails('count(name) > 1', "symbol 'name' is not a set symbol but is used in set function count");
    fails('isEmpty(name)', "symbol 'name' is not a set symbol but is used in set function isEmpty");
  });

  test('sub-queries are parsed but not supported', () => {
    fails('isEmpty(from identities where name = "x")', 'sub-queries are not supported');
    fails('count(from identities where name = "x") > 1', 'sub-queries are not supported');
  });
});

describe('conversions (§1.4)', () => {
  test('numbers convert to strings on string fields', () => {
    assert.deepEqual(check('name = 5'), { kind: 'compare', subject: NAME, as: 'string', op: '=', value: '5' });
    assert.deepEqual(check('name < 2.50'), { kind: 'compare', subject: NAME, as: 'string', op: '<', value: '2.5' });
    assert.deepEqual(check('name in [1, 2]'), {
      kind: 'in',
      subject: NAME,
      as: 'string',
      negated: false,
      values: ['1', '2'],
    });
    assert.deepEqual(check('name contains 7'), {
      kind: 'contains',
      subject: NAME,
      negated: false,
      caseInsensitive: false,
      value: '7',
    });
  });

  test('number formatting follows int64 / float64 (no exponent)', () => {
    assert.equal(numberToString({ value: 5, isInt: true, text: '5' }), '5');
    assert.equal(numberToString({ value: 0, isInt: true, text: '-0' }), '0');
    assert.equal(
      numberToString({ value: 9223372036854775807, isInt: true, text: '9223372036854775807' }),
      '9223372036854775807',
    );
    assert.equal(numberToString({ value: 1000, isInt: false, text: '1e3' }), '1000');
    assert.equal(numberToString({ value: 1e-7, isInt: false, text: '1e-7' }), '0.0000001');
  });

  test('int fields compare as int, or as float against a float literal', () => {
    assert.deepEqual(check('cost > 1'), { kind: 'compare', subject: COST, as: 'int', op: '>', value: 1 });
    assert.deepEqual(check('cost > 1.5'), { kind: 'compare', subject: COST, as: 'float', op: '>', value: 1.5 });
    assert.deepEqual(check('cost in [1, 2.5]'), {
      kind: 'in',
      subject: COST,
      as: 'float',
      negated: false,
      values: [1, 2.5],
    });
    assert.deepEqual(check('cost not between 1 and 5'), {
      kind: 'between',
      subject: COST,
      as: 'int',
      negated: true,
      lower: 1,
      upper: 5,
    });
  });

  test('int fields read as text for contains and string arrays', () => {
    assert.deepEqual(check('cost contains "1"'), {
      kind: 'contains',
      subject: COST,
      negated: false,
      caseInsensitive: false,
      value: '1',
    });
    assert.deepEqual(check('cost in ["1"]'), {
      kind: 'in',
      subject: COST,
      as: 'string',
      negated: false,
      values: ['1'],
    });
  });

  test('bools: = / != become a test against "missing is false"', () => {
    const subject = { kind: 'column', field: 'isAdmin', column: 'is_admin', type: 'bool' } as const;
    assert.deepEqual(check('isAdmin'), { kind: 'boolTest', subject, expect: true });
    assert.deepEqual(check('isAdmin = false'), { kind: 'boolTest', subject, expect: false });
    assert.deepEqual(check('isAdmin != false'), { kind: 'boolTest', subject, expect: true });
    assert.deepEqual(check('isAdmin = null'), { kind: 'isNull', subject, negated: false });
  });

  test('map entries take their type from the literal', () => {
    const subject = { kind: 'mapEntry', field: 'tags', column: 'tags', path: ['x'] } as const;
    assert.deepEqual(check('tags.x = 1'), { kind: 'compare', subject, as: 'int', op: '=', value: 1 });
    assert.deepEqual(check('tags.x = 1.5'), { kind: 'compare', subject, as: 'float', op: '=', value: 1.5 });
    assert.deepEqual(check('tags.x = true'), { kind: 'boolTest', subject, expect: true });
    assert.deepEqual(check('tags.x'), { kind: 'boolTest', subject, expect: true });
    assert.deepEqual(check('tags.x != null'), { kind: 'isNull', subject, negated: true });
    assert.deepEqual(check('tags.x between 1 and 2'), {
      kind: 'between',
      subject,
      as: 'int',
      negated: false,
      lower: 1,
      upper: 2,
    });
  });

  test('anyOf / allOf wrap an element test; count is an int', () => {
    assert.deepEqual(check('anyOf(roleAttributes) = "a"'), {
      kind: 'anyOf',
      set: SET,
      predicate: { kind: 'compare', subject: { kind: 'element', set: SET }, as: 'string', op: '=', value: 'a' },
    });
    assert.deepEqual(check('allOf(roleAttributes) != 3'), {
      kind: 'allOf',
      set: SET,
      predicate: { kind: 'compare', subject: { kind: 'element', set: SET }, as: 'string', op: '!=', value: '3' },
    });
    assert.deepEqual(check('count(roleAttributes) >= 2'), {
      kind: 'compare',
      subject: { kind: 'count', set: SET },
      as: 'int',
      op: '>=',
      value: 2,
    });
    assert.deepEqual(check('isEmpty(roleAttributes)'), { kind: 'isEmpty', set: SET });
  });
});

describe('type mismatches (§1.8)', () => {
  test('are INVALID_FILTER with the operation and operand types', () => {
    fails('cost = "x"', 'operation cost = "x" is not supported with operands types number, string');
    fails('name = true', 'operation name = true is not supported with operands types string, bool');
    fails(
      'name = datetime(2020-01-01T00:00:00Z)',
      'operation name = datetime(2020-01-01T00:00:00Z) is not supported with operands types string, datetime',
    );
    fails('createdAt > 5', 'operation createdAt > 5 is not supported with operands types datetime, number');
    fails(
      'createdAt contains "2020"',
      'operation createdAt contains "2020" is not supported with operands types datetime, string',
    );
    fails('isAdmin = 1', 'operation isAdmin = 1 is not supported with operands types bool, number');
    fails('isAdmin contains "t"', 'operation isAdmin contains "t" is not supported with operands types bool, string');
    fails('cost = false', 'operation cost = false is not supported with operands types number, bool');
    fails('name between 1 and 2', 'operation name between 1 and 2 is not supported with operands types string, number');
    fails(
      'cost between datetime(2020-01-01T00:00:00Z) and datetime(2021-01-01T00:00:00Z)',
      'operation cost between datetime(2020-01-01T00:00:00Z) and datetime(2021-01-01T00:00:00Z) is not supported with operands types number, datetime',
    );
    fails(
      'createdAt in ["x"]',
      'operation createdAt in ["x"] is not supported with operands types datetime, string array',
    );
    fails('isAdmin in [1]', 'operation isAdmin in [1] is not supported with operands types bool, number array');
    fails(
      'count(roleAttributes) = "2"',
      'operation count(roleAttributes) = "2" is not supported with operands types number, string',
    );
    fails(
      'count(roleAttributes) contains 1',
      'operation count(roleAttributes) contains 1 is not supported with operands types number, number',
    );
    fails(
      'count(roleAttributes) = null',
      'operation count(roleAttributes) = null is not supported with operands types number, null',
    );
    fails(
      'anyOf(roleAttributes) between 1 and 2',
      'operation anyOf(roleAttributes) between 1 and 2 is not supported with operands types string, number',
    );
  });

  test('a bare non-bool symbol is not a predicate', () => {
    fails('name', "symbol 'name' is of type string, not bool");
    fails('cost and isAdmin', "symbol 'cost' is of type number, not bool");
  });
});

describe('sorting, skip and limit', () => {
  test('sort fields resolve; more than 5 are dropped', () => {
    const q = checkFilter(
      parseFilter('sort by name desc, cost, ratio, createdAt, isAdmin, id skip 3 limit none'),
      fields,
    );
    assert.deepEqual(
      q.sort.map((s) => [s.subject.field, s.direction]),
      [
        ['name', 'desc'],
        ['cost', 'asc'],
        ['ratio', 'asc'],
        ['createdAt', 'asc'],
        ['isAdmin', 'asc'],
      ],
    );
    assert.equal(q.skip, 3);
    assert.equal(q.limit, 'none');
  });

  test('sorting on a set or a whole map is an error', () => {
    fails('sort by roleAttributes', "sorting on set symbol 'roleAttributes' is not supported");
    fails('sort by tags', "sorting on map symbol 'tags' is not supported, use tags.<key>");
  });

  test('no predicate stays null', () => {
    assert.equal(check('limit 5'), null);
    assert.equal(check(''), null);
  });
});
