/**
 * ZitiQL lexer + parser: grouping (docs/reference-notes.md §1.3), every lexical rule of §1.1 including the
 * reference's quirks, the clause grammar of §1.2 and the syntax error format of §1.8.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilter, parseSortParam } from '../../../src/model/filter/parser.js';
import { formatExpr, type BoolExpr } from '../../../src/model/filter/ast.js';
import type { FieldTable } from '../../../src/model/filter/fields.js';
import { DomainError } from '../../../src/model/errors.js';

/** Renders the tree with explicit grouping so tests can state the shape compactly. */
function shape(e: BoolExpr | null): string {
  if (e === null) return '<none>';
  switch (e.kind) {
    case 'and':
      return `(${shape(e.left)} AND ${shape(e.right)})`;
    case 'or':
      return `(${shape(e.left)} OR ${shape(e.right)})`;
    case 'not':
      return `NOT ${shape(e.expr)}`;
    default:
      return formatExpr(e);
  }
}

const pred = (text: string): string => shape(parseFilter(text).predicate);

/** Asserts a syntax (or lexical) error: INVALID_FILTER with the reference's message shape. */
function rejects(text: string, symbol?: string, column?: number): void {
  assert.throws(
    () => parseFilter(text),
    (err: unknown) => {
      assert.ok(err instanceof DomainError, `expected a DomainError for ${JSON.stringify(text)}`);
      assert.equal(err.code, 'INVALID_FILTER');
      assert.equal(err.status, 400);
      if (symbol !== undefined) {
        assert.equal(
          err.causeMessage,
          `Unexpected symbol: "${symbol}" at line: 1 column: ${column}. line: 1, column: ${column}, symbol: ${symbol}`,
        );
      }
      return true;
    },
    `expected ${JSON.stringify(text)} to be rejected`,
  );
}

describe('grouping (§1.3)', () => {
  test('and/or have no relative precedence; a chain nests to the right', () => {
    assert.equal(pred('a = 1 and b = 2 or c = 3'), '(a = 1 AND (b = 2 OR c = 3))');
    assert.equal(pred('a = 1 or b = 2 and c = 3'), '(a = 1 OR (b = 2 AND c = 3))');
    assert.equal(pred('a = 1 and b = 2 and c = 3'), '(a = 1 AND (b = 2 AND c = 3))');
    assert.equal(pred('a = 1 or b = 2 or c = 3 and d = 4'), '(a = 1 OR (b = 2 OR (c = 3 AND d = 4)))');
  });

  test('not takes everything to its right', () => {
    assert.equal(pred('not a = 1 and b = 2'), 'NOT (a = 1 AND b = 2)');
    assert.equal(pred('not isAdmin and name = "x"'), 'NOT (isAdmin AND name = "x")');
    assert.equal(pred('a = 1 and not b = 2 or c = 3'), '(a = 1 AND NOT (b = 2 OR c = 3))');
    assert.equal(pred('not not a = 1'), 'NOT NOT a = 1');
  });

  test('parentheses override', () => {
    assert.equal(pred('(a = 1 or b = 2) and c = 3'), '((a = 1 OR b = 2) AND c = 3)');
    assert.equal(pred('not (a = 1) and b = 2'), 'NOT (a = 1 AND b = 2)');
    assert.equal(pred('(not a = 1) and b = 2'), '(NOT a = 1 AND b = 2)');
    assert.equal(pred('( ( a = 1 ) )'), 'a = 1');
  });

  test('not stops at the sort clause', () => {
    const q = parseFilter('not a = 1 sort by a');
    assert.equal(shape(q.predicate), 'NOT a = 1');
    assert.deepEqual(q.sort, [{ kind: 'sortField', symbol: 'a', direction: 'asc' }]);
  });
});

describe('whitespace (§1.1)', () => {
  test('optional around comparison operators', () => {
    assert.equal(pred('name="x"'), 'name = "x"');
    assert.equal(pred('a!=1'), 'a != 1');
    assert.equal(pred('a<=1'), 'a <= 1');
    assert.equal(pred('a>=-1'), 'a >= -1');
  });

  test('space, tab, CR and LF all count', () => {
    assert.equal(pred(' \t\r\nname\t=\n"x"\r\nand\tb = 1 \n'), '(name = "x" AND b = 1)');
  });

  test('required around word operators', () => {
    rejects('a = 1and b = 2', 'and', 5);
    rejects('name="x"and b = 1', 'and', 8);
    rejects('(a = 1)and(b = 2)', 'and', 7);
    rejects('(a = 1) and(b = 2)', '(', 11);
    rejects('name in["a"]', '[', 7);
    rejects('name between 1 and2', '2', 18);
    rejects('not(a = 1)', '(', 3);
    rejects('name contains"x"', '"x"', 13);
    rejects('sort by name desc,createdAt asc limit 5skip', 'skip', 39);
  });

  test('no whitespace between a set function and its parenthesis, but allowed inside', () => {
    assert.equal(pred('isEmpty( roleAttributes )'), 'isEmpty(roleAttributes)');
    assert.equal(pred('anyOf( x ) = "a"'), 'anyOf(x) = "a"');
    assert.equal(pred('anyOf(x)contains "a"'), 'anyOf(x) contains "a"');
    rejects('isEmpty (roleAttributes)', '(', 8);
    rejects('anyOf (x) = "a"', '(', 6);
    rejects('count (x) > 1', '(', 6);
  });
});

describe('keywords (§1.1)', () => {
  test('are case-insensitive', () => {
    assert.equal(pred('a = 1 AND b = 2 Or c = 3'), '(a = 1 AND (b = 2 OR c = 3))');
    assert.equal(pred('NOT a = 1'), 'NOT a = 1');
    assert.equal(pred('x NOT IN ["a"]'), 'x not in ["a"]');
    assert.equal(pred('x Contains "a"'), 'x contains "a"');
    assert.equal(pred('x NOT ICONTAINS "a"'), 'x not icontains "a"');
    assert.equal(pred('x BETWEEN 1 AND 5'), 'x between 1 and 5');
    assert.equal(pred('ISEMPTY(x)'), 'isEmpty(x)');
    assert.equal(pred('ANYOF(x) = "a" and allof(y) = "b"'), '(anyOf(x) = "a" AND allOf(y) = "b")');
    assert.equal(pred('COUNT(x) > 1'), 'count(x) > 1');
    assert.equal(pred('x = NULL'), 'x = null');
    const q = parseFilter('SORT BY name DESC SKIP 1 LIMIT NONE');
    assert.deepEqual(q, {
      predicate: null,
      sort: [{ kind: 'sortField', symbol: 'name', direction: 'desc' }],
      skip: 1,
      limit: 'none',
    });
  });

  test('bools in any case, as predicates and as literals', () => {
    assert.deepEqual(parseFilter('TRUE').predicate, { kind: 'boolConst', value: true });
    assert.deepEqual(parseFilter('False').predicate, { kind: 'boolConst', value: false });
    assert.equal(pred('flag = TRUE'), 'flag = true');
    assert.equal(pred('flag != fAlSe'), 'flag != false');
  });

  test('a keyword prefix inside a longer word is an identifier', () => {
    assert.deepEqual(parseFilter('android').predicate, {
      kind: 'boolSymbol',
      symbol: { kind: 'symbol', name: 'android' },
    });
    assert.equal(pred('index = 1 and notes = "x" and tags.and = 1'), '(index = 1 AND (notes = "x" AND tags.and = 1))');
  });

  test('quirk: `not` + one space + `in…` is taken as `not in` whatever follows (longest match)', () => {
    rejects('not inStock = true', 'not in', 0);
    assert.equal(pred('not (inStock = true)'), 'NOT inStock = true');
  });
});

describe('operators (§1.1, §1.2)', () => {
  test('all six comparisons', () => {
    for (const op of ['=', '!=', '<', '<=', '>', '>=']) assert.equal(pred(`a ${op} 1`), `a ${op} 1`);
    rejects('a == 1', '=', 3);
    rejects('a ! = 1', '!', 2);
    rejects('a <> 1', '>', 3);
  });

  test('contains / icontains, optionally negated with one or more spaces', () => {
    assert.equal(pred('x contains "a"'), 'x contains "a"');
    assert.equal(pred('x contains 1'), 'x contains 1');
    assert.equal(pred('x not   contains "a"'), 'x not contains "a"');
    assert.equal(pred('x icontains "a"'), 'x icontains "a"');
    assert.equal(pred('x not \t icontains "a"'), 'x not icontains "a"');
    rejects('x icontains 1', '1', 12);
    rejects('x contains true', 'true', 11);
    rejects('x contains null', 'null', 11);
  });

  test('`not in` takes exactly one whitespace character', () => {
    assert.equal(pred('x not in ["a"]'), 'x not in ["a"]');
    assert.equal(pred('x not\tin ["a"]'), 'x not in ["a"]');
    rejects('x not  in ["a"]', 'not', 2);
    rejects('x not\n\tin ["a"]', 'not', 2);
  });

  test('between takes two numbers or two datetimes, `not between` one or more spaces', () => {
    assert.equal(pred('x between 1 and 2.5'), 'x between 1 and 2.5');
    assert.equal(pred('x not  between 1 and 2'), 'x not between 1 and 2');
    assert.equal(
      pred('x between datetime(2020-01-01T00:00:00Z) and datetime(2021-01-01T00:00:00Z)'),
      'x between datetime(2020-01-01T00:00:00Z) and datetime(2021-01-01T00:00:00Z)',
    );
    rejects('x between 1 and datetime(2021-01-01T00:00:00Z)', 'datetime(2021-01-01T00:00:00Z)', 16);
    rejects('x between "a" and "b"', '"a"', 10);
    rejects('x between 1 or 2', 'or', 12);
  });

  test('null only with = and != (`x > null` is a syntax error)', () => {
    assert.equal(pred('x = null'), 'x = null');
    assert.equal(pred('x != null'), 'x != null');
    rejects('x > null', 'null', 4);
    rejects('x <= null', 'null', 5);
    rejects('x in [null]', 'null', 6);
  });

  test('bools only with = and !=', () => {
    rejects('x < true', 'true', 4);
  });

  test('the literal is always on the right', () => {
    rejects('"x" = name', '"x"', 0);
    rejects('1 < num', '1', 0);
  });
});

describe('literals (§1.1)', () => {
  test('strings: double quotes only, with the listed escapes', () => {
    const q = parseFilter('x = "a\\"b\\\\c\\f\\n\\r\\t"');
    assert.deepEqual(q.predicate, {
      kind: 'compare',
      op: '=',
      left: { kind: 'symbol', name: 'x' },
      right: { kind: 'string', value: 'a"b\\c\f\n\r\t' },
    });
    assert.equal(pred('x = ""'), 'x = ""');
    assert.equal(pred('x = "héllo ✓"'), 'x = "héllo ✓"');
  });

  test('single-quoted strings, unknown escapes, control characters and unterminated strings fail', () => {
    rejects("name = 'a'", "'a'", 7);
    rejects("name = 'a b'", "'", 7);
    rejects('x = "a\\x"', '"', 4);
    rejects('x = "a\\u0041"', '"', 4);
    rejects('x = "a\nb"', '"', 4);
    rejects('x = "a\tb"', '"', 4);
    rejects('x = "abc', '"', 4);
  });

  test('numbers: int64 when possible, else float64', () => {
    const lit = (t: string) => {
      const p = parseFilter(`x = ${t}`).predicate;
      assert.ok(p?.kind === 'compare');
      return p.right;
    };
    assert.deepEqual(lit('42'), { kind: 'number', value: 42, isInt: true, text: '42' });
    assert.deepEqual(lit('-7'), { kind: 'number', value: -7, isInt: true, text: '-7' });
    assert.deepEqual(lit('0'), { kind: 'number', value: 0, isInt: true, text: '0' });
    assert.deepEqual(lit('2.50'), { kind: 'number', value: 2.5, isInt: false, text: '2.50' });
    assert.deepEqual(lit('1e3'), { kind: 'number', value: 1000, isInt: false, text: '1e3' });
    assert.deepEqual(lit('-1.5E-2'), { kind: 'number', value: -0.015, isInt: false, text: '-1.5E-2' });
    assert.deepEqual(lit('9223372036854775807'), {
      kind: 'number',
      value: 9223372036854775807,
      isInt: true,
      text: '9223372036854775807',
    });
    assert.equal((lit('9223372036854775808') as { isInt: boolean }).isInt, false);
  });

  test('malformed numbers fail', () => {
    rejects('x = 01', '1', 5);
    rejects('x = 1.', '.', 5);
    rejects('x = .5', '.', 4);
    rejects('x = -', '-', 4);
    rejects('x = 1.5.2', '.', 7);
  });

  test('datetime( must be lowercase; spaces allowed inside; converted to UTC milliseconds', () => {
    const lit = (t: string) => {
      const p = parseFilter(`x = ${t}`).predicate;
      assert.ok(p?.kind === 'compare' && p.right.kind === 'datetime');
      return p.right.iso;
    };
    assert.equal(lit('datetime(2020-01-02T03:04:05Z)'), '2020-01-02T03:04:05.000Z');
    assert.equal(lit('datetime( 2020-01-02T03:04:05.5Z )'), '2020-01-02T03:04:05.500Z');
    assert.equal(lit('datetime(2020-01-02t03:04:05.123456z)'), '2020-01-02T03:04:05.123Z');
    assert.equal(lit('datetime(2020-01-02T03:04:05+02:30)'), '2020-01-02T00:34:05.000Z');
    assert.equal(lit('datetime(2020-01-01T00:30:00-01:00)'), '2020-01-01T01:30:00.000Z');
    rejects('x = DATETIME(2020-01-02T03:04:05Z)', 'DATETIME', 4);
    rejects('x = Datetime(2020-01-02T03:04:05Z)', 'Datetime', 4);
    rejects('x = datetime(2020-01-02)', 'datetime', 4);
    rejects('x = datetime(2020-01-02T03:04:05)', 'datetime', 4);
    rejects('x = datetime(2020-13-02T03:04:05Z)', 'datetime', 4);
    rejects('x = datetime("2020-01-02T03:04:05Z")', 'datetime', 4);
  });

  test('a datetime that names no real instant is rejected', () => {
    assert.throws(() => parseFilter('x = datetime(2021-02-30T00:00:00Z)'), {
      code: 'INVALID_FILTER',
      causeMessage: "invalid datetime '2021-02-30T00:00:00Z'",
    });
  });

  test('arrays: one literal kind, spaces allowed, never empty', () => {
    assert.equal(pred('x in [ "a" , "b" ]'), 'x in ["a", "b"]');
    assert.equal(pred('x in [1,2.5,-3]'), 'x in [1, 2.5, -3]');
    assert.equal(pred('x in [datetime(2020-01-01T00:00:00Z)]'), 'x in [datetime(2020-01-01T00:00:00Z)]');
    rejects('x in []', ']', 6);
    rejects('x in [ ]', ']', 7);
    rejects('x in ["a", 1]', '1', 11);
    rejects('x in [true]', 'true', 6);
    rejects('x in ["a",]', ']', 10);
    rejects('x in "a"', '"a"', 5);
  });
});

describe('identifiers (§1.1)', () => {
  test('letters and underscores, dotted segments, dashes after a dot', () => {
    assert.equal(pred('is_admin = true'), 'is_admin = true');
    assert.equal(pred('tags.env = "x"'), 'tags.env = "x"');
    assert.equal(pred('tags.my-key = "x"'), 'tags.my-key = "x"');
    assert.equal(pred('data.a.b_c.d = 1'), 'data.a.b_c.d = 1');
  });

  test('digits are not allowed', () => {
    rejects('tags.foo1 = 1', '1', 8);
    rejects('name2 = "x"', '2', 4);
    rejects('_name = "x"', '_', 0);
    rejects('my-key = 1', '-', 2);
  });

  test('single quotes are kept as part of the symbol', () => {
    assert.deepEqual(parseFilter('\'name\' = "x"').predicate, {
      kind: 'compare',
      op: '=',
      left: { kind: 'symbol', name: "'name'" },
      right: { kind: 'string', value: 'x' },
    });
  });
});

describe('set functions and sub-queries (§1.2)', () => {
  test('allOf / anyOf / count / isEmpty', () => {
    assert.equal(pred('allOf(roleAttributes) = "a"'), 'allOf(roleAttributes) = "a"');
    assert.equal(pred('anyOf(roleAttributes) in ["a", "b"]'), 'anyOf(roleAttributes) in ["a", "b"]');
    assert.equal(pred('count(roleAttributes) between 1 and 3'), 'count(roleAttributes) between 1 and 3');
    assert.equal(pred('isEmpty(roleAttributes)'), 'isEmpty(roleAttributes)');
    rejects('anyOf(roleAttributes)', '<EOF>', 21);
    rejects('isEmpty(roleAttributes) = true', '=', 24);
    rejects('anyOf("a") = "a"', '"a"', 6);
  });

  test('from <type> where <query> parses as a sub-query', () => {
    const q = parseFilter(
      'isEmpty(from edgeRouterPolicies where anyOf(identities) = "ID" limit 1) and count(from services where name = "x") > 0',
    );
    assert.equal(
      shape(q.predicate),
      '(isEmpty(from edgeRouterPolicies where anyOf(identities) = "ID") AND count(from services where name = "x") > 0)',
    );
    assert.ok(
      q.predicate?.kind === 'and' && q.predicate.left.kind === 'isEmpty' && q.predicate.left.set.kind === 'subQuery',
    );
    assert.equal(q.predicate.left.set.query.limit, 1);
    rejects('isEmpty(from x)', ')', 14);
    rejects('isEmpty(from x where)', ')', 20);
  });
});

describe('clauses (§1.2)', () => {
  test('sort, skip and limit, alone or after a predicate', () => {
    assert.deepEqual(parseFilter('sort by name'), {
      predicate: null,
      sort: [{ kind: 'sortField', symbol: 'name', direction: 'asc' }],
    });
    assert.deepEqual(parseFilter('skip 5'), { predicate: null, sort: [], skip: 5 });
    assert.deepEqual(parseFilter('limit 5'), { predicate: null, sort: [], limit: 5 });
    assert.deepEqual(parseFilter('limit none'), { predicate: null, sort: [], limit: 'none' });
    assert.deepEqual(parseFilter('skip 0 limit -1'), { predicate: null, sort: [], skip: 0, limit: -1 });
    const q = parseFilter('name = "x" sort by name desc, createdAt asc ,id skip 10 limit 2');
    assert.equal(shape(q.predicate), 'name = "x"');
    assert.deepEqual(q.sort, [
      { kind: 'sortField', symbol: 'name', direction: 'desc' },
      { kind: 'sortField', symbol: 'createdAt', direction: 'asc' },
      { kind: 'sortField', symbol: 'id', direction: 'asc' },
    ]);
    assert.equal(q.skip, 10);
    assert.equal(q.limit, 2);
  });

  test('clause order is fixed: sort, skip, limit', () => {
    rejects('limit 5 skip 2', 'skip', 8);
    rejects('skip 1 sort by name', 'sort', 7);
    rejects('limit 1 sort by name', 'sort', 8);
    rejects('sort by name sort by id', 'sort', 13);
    rejects('limit 1 name = "x"', 'name', 8);
  });

  test('malformed clauses fail', () => {
    rejects('sort name', 'name', 5);
    rejects('sort by', '<EOF>', 7);
    rejects('sort by name,', '<EOF>', 13);
    rejects('sort by name up', 'up', 13);
    rejects('skip', '<EOF>', 4);
    rejects('skip none', 'none', 5);
    rejects('limit 1.5', '1.5', 6);
    rejects('limit "5"', '"5"', 6);
  });

  test('only the empty string means no filter', () => {
    assert.deepEqual(parseFilter(''), { predicate: null, sort: [] });
    rejects('   ', '<EOF>', 3);
    rejects('()', ')', 1);
  });
});

describe('syntax errors (§1.8)', () => {
  test('carry INVALID_FILTER, status 400 and an UNHANDLED cause with the message', () => {
    assert.throws(
      () => parseFilter('name = '),
      (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.code, 'INVALID_FILTER');
        assert.equal(err.status, 400);
        assert.equal(err.message, 'The filter query supplied is invalid');
        const message = 'Unexpected symbol: "<EOF>" at line: 1 column: 7. line: 1, column: 7, symbol: <EOF>';
        assert.deepEqual(err.errorCause, { code: 'UNHANDLED', message });
        assert.equal(err.causeMessage, message);
        return true;
      },
    );
  });

  test('report the first bad token in reading order, with its line', () => {
    assert.throws(() => parseFilter('a = 1 and\nb = = 2 $'), {
      causeMessage: 'Unexpected symbol: "=" at line: 2 column: 4. line: 2, column: 4, symbol: =',
    });
    rejects('a = 1 $', '$', 6);
  });
});

describe('parseSortParam (URL sort=, §1.6)', () => {
  const fields: FieldTable = {
    id: { kind: 'scalar', type: 'string', column: 'id' },
    name: { kind: 'scalar', type: 'string', column: 'name' },
    createdAt: { kind: 'scalar', type: 'datetime', column: 'created_at' },
    tags: { kind: 'map', column: 'tags' },
    roleAttributes: { kind: 'set', table: 'attrs', ownerColumn: 'owner', valueColumn: 'attr' },
  };

  test('parses the field list of a sort by clause', () => {
    assert.deepEqual(parseSortParam('name desc, createdAt', fields), [
      { kind: 'sortField', symbol: 'name', direction: 'desc' },
      { kind: 'sortField', symbol: 'createdAt', direction: 'asc' },
    ]);
    assert.deepEqual(parseSortParam('tags.env ASC', fields), [
      { kind: 'sortField', symbol: 'tags.env', direction: 'asc' },
    ]);
  });

  test('every error is INVALID_SORT_IDENTIFIER', () => {
    const bad = (text: string, causeMessage?: string) =>
      assert.throws(() => parseSortParam(text, fields), {
        code: 'INVALID_SORT_IDENTIFIER',
        ...(causeMessage && { causeMessage }),
      });
    bad('name sideways', 'Unexpected symbol: "sideways" at line: 1 column: 5. line: 1, column: 5, symbol: sideways');
    bad('');
    bad('sort by name');
    bad('name limit 5');
    bad('nope', "unknown symbol 'nope'");
    bad('roleAttributes');
    bad('tags');
  });
});
