/** Body and query checks on strings: lone surrogates and escapes that are not UTF-8, named by their field. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkJsonBody, parseJsonBody, utf8Body } from '../../../src/daemon/http/body-limits.js';
import { checkQueryEncoding } from '../../../src/daemon/http/query-encoding.js';
import { DomainError } from '../../../src/model/errors.js';

/** The field the check refuses `run` on, or undefined when it passes. */
function refusedField(run: () => void): string | undefined {
  try {
    run();
    return undefined;
  } catch (e) {
    assert.ok(e instanceof DomainError);
    assert.equal(e.code, 'COULD_NOT_VALIDATE');
    assert.equal((e.errorCause as { value?: unknown }).value, undefined, 'the bad value is not echoed');
    return (e.errorCause as { field: string }).field;
  }
}

test('a lone surrogate anywhere in a JSON body is named by its path', () => {
  const field = (json: string) => refusedField(() => parseJsonBody(json));
  assert.equal(field('{"name":"x\\ud800"}'), 'name');
  assert.equal(field('{"tags":{"a":{"b":["ok","\\udfff"]}}}'), 'tags.a.b.1');
  assert.equal(field('[{"name":"ok"},{"name":"\\udbff"}]'), '1.name');
  assert.equal(field('"\\ud800"'), '(root)');
  // A bad member name is named by the object holding it.
  assert.equal(field('{"tags":{"k\\udc00":"v"}}'), 'tags');
  assert.equal(field('{"k\\udc00":1}'), '(root)');
  // A path too long to repeat is named by its top-level member.
  assert.equal(field(`{"data":{"${'k'.repeat(300)}":"\\ud800"}}`), 'data');
});

test('well-formed strings pass: paired surrogates, emoji, U+FFFD itself', () => {
  for (const json of ['{"a":"\\ud83d\\ude00"}', '{"😀":["🚀","\\ufffd"]}', '"plain"', '[1,null,true]'])
    assert.equal(
      refusedField(() => parseJsonBody(json)),
      undefined,
      json,
    );
});

test('the depth bound still names the top-level member', () => {
  assert.equal(
    refusedField(() => checkJsonBody({ a: JSON.parse('['.repeat(70) + ']'.repeat(70)) })),
    'a',
  );
  assert.equal(
    refusedField(() => checkJsonBody(JSON.parse('['.repeat(70) + ']'.repeat(70)))),
    '(root)',
  );
});

test('bytes that are not UTF-8 are an unparsable body; UTF-8 is decoded as is', () => {
  assert.throws(() => utf8Body(Buffer.from([0x7b, 0xff, 0x7d])), { code: 'COULD_NOT_PARSE_BODY' });
  assert.throws(() => utf8Body(Buffer.from([0xed, 0xa0, 0x80])), { code: 'COULD_NOT_PARSE_BODY' });
  assert.equal(utf8Body(Buffer.from('{"a":"😀"}')), '{"a":"😀"}');
});

test('query escapes that are not UTF-8 are refused on the parameter; bare `%` and valid escapes pass', () => {
  const field = (url: string) => refusedField(() => checkQueryEncoding(url));
  assert.equal(field('/x?filter=%ED%A0%80'), 'filter');
  assert.equal(field('/x?limit=1&role%20Filter=%FF'), 'role Filter');
  assert.equal(field('/x?%FF=1'), '(query)');
  for (const url of ['/x', '/x?limit=1', '/x?filter=50%', '/x?filter=%F0%9F%98%80%25', '/x%FF?a=1'])
    assert.equal(field(url), undefined, url);
});
