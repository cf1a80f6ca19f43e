/** The pure statement of the matching rule and role syntax (docs/reference-notes.md §2.1, §2.2). */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../../src/model/errors.js';
import {
  checkRoleSyntax,
  normaliseSemantic,
  parseRoles,
  roleMatches,
  type Semantic,
} from '../../../src/model/policy/roles.js';

const E = { id: 'e1', roleAttributes: ['a', 'b'] };

describe('roleMatches', () => {
  const cases: [string[], Semantic, boolean, string][] = [
    [[], 'AllOf', false, 'an empty list selects nothing'],
    [[], 'AnyOf', false, 'an empty list selects nothing (AnyOf)'],
    [['#all'], 'AllOf', true, '#all selects everything'],
    [['#all'], 'AnyOf', true, '#all selects everything (AnyOf)'],
    [['@e1'], 'AllOf', true, '@id selects the entity'],
    [['@e2'], 'AnyOf', false, '@ of another id does not'],
    [['#a'], 'AllOf', true, 'one held attribute'],
    [['#a', '#b'], 'AllOf', true, 'all held attributes'],
    [['#a', '#c'], 'AllOf', false, 'AllOf misses one attribute'],
    [['#a', '#c'], 'AnyOf', true, 'AnyOf needs one'],
    [['#c', '#d'], 'AnyOf', false, 'AnyOf with none held'],
    [['#c', '@e1'], 'AllOf', true, '@id is OR-ed in whatever the semantic'],
    [['#c', '@e2'], 'AllOf', false, '@ of another id does not help the attribute test'],
    [['@e2', '#a'], 'AllOf', true, 'attributes still match beside @ entries'],
  ];
  for (const [roles, semantic, expected, why] of cases) {
    test(`${JSON.stringify(roles)} ${semantic}: ${why}`, () => assert.equal(roleMatches(roles, semantic, E), expected));
  }

  test('an entity without attributes is only selected by @id or #all', () => {
    const bare = { id: 'x', roleAttributes: [] };
    assert.equal(roleMatches(['#a'], 'AnyOf', bare), false);
    assert.equal(roleMatches(['#all'], 'AllOf', bare), true);
    assert.equal(roleMatches(['@x'], 'AllOf', bare), true);
  });
});

describe('role syntax', () => {
  test('parseRoles splits ids, attributes and #all', () => {
    assert.deepEqual(parseRoles(['#a', '@x', '#all', '#b']), { all: true, ids: ['x'], attributes: ['a', 'b'] });
  });

  test('entries need a # or @ prefix and something after it', () => {
    for (const bad of ['plain', '#', '@', '', 'a#b']) {
      assert.throws(
        () => checkRoleSyntax('identityRoles', [bad]),
        (e: DomainError) =>
          e.code === 'COULD_NOT_VALIDATE' && (e.errorCause as { field: string }).field === 'identityRoles',
        bad,
      );
    }
    assert.doesNotThrow(() => checkRoleSyntax('serviceRoles', ['#a', '@id', '#all-but-not-all']));
  });

  test('#all must stand alone', () => {
    assert.throws(() => checkRoleSyntax('edgeRouterRoles', ['#all', '#a']), DomainError);
    assert.doesNotThrow(() => checkRoleSyntax('edgeRouterRoles', ['#all']));
  });

  test('semantic is accepted in any letter case and normalised', () => {
    assert.equal(normaliseSemantic('anyof'), 'AnyOf');
    assert.equal(normaliseSemantic('ALLOF'), 'AllOf');
    assert.equal(normaliseSemantic('OneOf'), undefined);
    assert.equal(normaliseSemantic(3), undefined);
  });
});
