/** Filter cost bounds (docs/decisions.md, "Input bounds"): terms, nesting and in-list values. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilter } from '../../../src/model/filter/parser.js';
import {
  checkFilterBounds,
  MAX_FILTER_DEPTH,
  MAX_FILTER_TERMS,
  MAX_FILTER_VALUES,
} from '../../../src/model/filter/bounds.js';
import { DomainError } from '../../../src/model/errors.js';

const check = (text: string) => checkFilterBounds(parseFilter(text));
function refused(text: string, message: RegExp): void {
  assert.throws(
    () => check(text),
    (e: unknown) =>
      e instanceof DomainError && e.code === 'INVALID_FILTER' && message.test(JSON.stringify(e.errorCause)),
  );
}
const chain = (n: number, op: string) => Array.from({ length: n }, (_, i) => `name = "${i}"`).join(` ${op} `);

describe('filter bounds', () => {
  test('a chain of the maximum number of terms passes; one more is refused', () => {
    check(chain(MAX_FILTER_TERMS, 'or'));
    check(chain(MAX_FILTER_TERMS, 'and'));
    refused(chain(MAX_FILTER_TERMS + 1, 'or'), /too many terms/);
  });

  test('terms inside sub-queries count too', () => {
    const sub = `count(from services where ${chain(60, 'or')}) > 0`;
    check(sub);
    refused(`${sub} and ${sub}`, /too many terms/);
  });

  test('not, sub-queries and switches between and/or nest; plain chains and parentheses do not', () => {
    check('not '.repeat(MAX_FILTER_DEPTH - 1) + 'true');
    refused('not '.repeat(MAX_FILTER_DEPTH) + 'true', /nested too deeply/);
    check('('.repeat(500) + 'true' + ')'.repeat(500));
    refused('a = 1 and b = 1 or '.repeat(MAX_FILTER_DEPTH / 2 + 1) + 'true', /nested too deeply/);
  });

  test('in-list values are counted across the filter', () => {
    const list = (n: number) => `id in [${Array.from({ length: n }, (_, i) => `"${i}"`).join(',')}]`;
    check(list(MAX_FILTER_VALUES));
    refused(list(MAX_FILTER_VALUES + 1), /too many values/);
    refused(`${list(600)} or ${list(600)}`, /too many values/);
  });
});
