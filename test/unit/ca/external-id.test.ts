/** Unit tests of the CA helpers: externalIdClaim validation and extraction, identity name formatting. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  externalIdFromCertificate,
  normalizeExternalIdClaim,
  patchExternalIdClaim,
  type ExternalIdClaim,
} from '../../../src/model/ca/external-id.js';
import { formatIdentityName } from '../../../src/model/ca/name-format.js';
import { isDomainError } from '../../../src/model/errors.js';
import type { ParsedCertificate } from '../../../src/pki/index.js';

/** Only the fields extraction reads. */
const cert = (commonName: string | undefined, uri: string[] = [], email: string[] = []) =>
  ({ commonName, sans: { dns: [], ip: [], uri, email } }) as unknown as ParsedCertificate;

const claim = (c: Partial<ExternalIdClaim>): ExternalIdClaim =>
  normalizeExternalIdClaim({ matcher: 'ALL', parser: 'NONE', ...c })!;

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isDomainError(e)) return (e.errorCause as { field?: string } | undefined)?.field;
    throw e;
  }
  return undefined;
}

describe('externalIdClaim validation', () => {
  test('absent or location-less claims are no claim; defaults fill the rest', () => {
    assert.equal(normalizeExternalIdClaim(undefined), null);
    assert.equal(normalizeExternalIdClaim(null), null);
    assert.equal(normalizeExternalIdClaim({ location: null, matcher: 'ALL' }), null);
    assert.deepEqual(normalizeExternalIdClaim({ location: 'COMMON_NAME' }), {
      location: 'COMMON_NAME',
      matcher: 'ALL',
      matcherCriteria: null,
      parser: 'NONE',
      parserCriteria: null,
      index: 0,
    });
    // Criteria are kept as written, also empty ones and those a matcher/parser does not use.
    const kept = normalizeExternalIdClaim({
      location: 'COMMON_NAME',
      matcher: 'ALL',
      matcherCriteria: 'x',
      parser: 'NONE',
      parserCriteria: '-',
    })!;
    assert.deepEqual([kept.matcherCriteria, kept.parserCriteria], ['x', '-']);
    const empty = normalizeExternalIdClaim({
      location: 'COMMON_NAME',
      matcher: 'ALL',
      matcherCriteria: '',
      parser: 'NONE',
      parserCriteria: '',
    })!;
    assert.deepEqual([empty.matcherCriteria, empty.parserCriteria], ['', '']);
  });

  test('each rule names its member', () => {
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim({ location: 'DNS' })),
      'externalIdClaim.location',
    );
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim({ location: 'SAN_EMAIL', matcher: 'SCHEME', matcherCriteria: 'x' })),
      'externalIdClaim.matcher',
    );
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim({ location: 'SAN_URI', matcher: 'SUFFIX', matcherCriteria: 'x' })),
      'externalIdClaim.matcher',
    );
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim({ location: 'COMMON_NAME', matcher: 'PREFIX' })),
      'externalIdClaim.matcherCriteria',
    );
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim({ location: 'COMMON_NAME', parser: 'SPLIT', parserCriteria: '' })),
      'externalIdClaim.parserCriteria',
    );
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim({ location: 'COMMON_NAME', index: 1.5 })),
      'externalIdClaim.index',
    );
    assert.equal(
      fieldOf(() => normalizeExternalIdClaim('COMMON_NAME')),
      'externalIdClaim',
    );
  });

  test('a patch merges into the stored claim; null removes it', () => {
    const stored = claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe' });
    assert.equal(patchExternalIdClaim(stored, { index: 2 })!.index, 2);
    assert.equal(patchExternalIdClaim(stored, { index: 2 })!.matcherCriteria, 'spiffe');
    assert.equal(patchExternalIdClaim(stored, null), null);
    assert.equal(
      fieldOf(() => patchExternalIdClaim(stored, { location: 'COMMON_NAME' })),
      'externalIdClaim.matcher',
    );
  });
});

describe('externalIdClaim extraction', () => {
  test('location × matcher × parser × index', () => {
    assert.equal(externalIdFromCertificate(claim({ location: 'COMMON_NAME' }), cert('alice')), 'alice');
    assert.equal(externalIdFromCertificate(claim({ location: 'COMMON_NAME' }), cert(undefined)), undefined);
    assert.equal(
      externalIdFromCertificate(
        claim({ location: 'COMMON_NAME', matcher: 'PREFIX', matcherCriteria: 'u-' }),
        cert('x-alice'),
      ),
      undefined,
    );
    assert.equal(
      externalIdFromCertificate(
        claim({
          location: 'COMMON_NAME',
          matcher: 'PREFIX',
          matcherCriteria: 'u-',
          parser: 'SPLIT',
          parserCriteria: '-',
          index: 1,
        }),
        cert('u-alice'),
      ),
      'alice',
    );
    const emails = cert('cn', [], ['a@other.example', 'b@corp.example', 'c@corp.example']);
    assert.equal(externalIdFromCertificate(claim({ location: 'SAN_EMAIL' }), emails), 'a@other.example');
    assert.equal(
      externalIdFromCertificate(
        claim({ location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.example' }),
        emails,
      ),
      'b@corp.example',
    );
    assert.equal(
      externalIdFromCertificate(
        claim({ location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.example', index: 1 }),
        emails,
      ),
      'c@corp.example',
    );
    assert.equal(
      externalIdFromCertificate(
        claim({ location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.example', index: 2 }),
        emails,
      ),
      undefined,
    );
    const uris = cert('cn', ['https://example.org/x', 'SPIFFE://td/user/bob']);
    assert.equal(
      externalIdFromCertificate(claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe' }), uris),
      'SPIFFE://td/user/bob',
    );
    assert.equal(
      externalIdFromCertificate(
        claim({
          location: 'SAN_URI',
          matcher: 'SCHEME',
          matcherCriteria: 'spiffe',
          parser: 'SPLIT',
          parserCriteria: '/',
          index: 4,
        }),
        uris,
      ),
      'bob',
    );
    // An empty selected value is no external id.
    assert.equal(
      externalIdFromCertificate(
        claim({
          location: 'SAN_URI',
          matcher: 'SCHEME',
          matcherCriteria: 'spiffe',
          parser: 'SPLIT',
          parserCriteria: '/',
          index: 1,
        }),
        uris,
      ),
      undefined,
    );
  });
});

describe('identity name format', () => {
  test('every placeholder, every occurrence; an empty format is the default', () => {
    const values = { caName: 'corp', caId: 'c1', commonName: 'laptop', requestedName: 'mine', identityId: 'i9' };
    assert.equal(formatIdentityName('[caName]-[commonName]', values), 'corp-laptop');
    assert.equal(
      formatIdentityName('[requestedName]@[caId]/[identityId]/[commonName]/[commonName]', values),
      'mine@c1/i9/laptop/laptop',
    );
    assert.equal(formatIdentityName('', values), 'corp-laptop');
    assert.equal(formatIdentityName('static [unknown]', values), 'static [unknown]');
  });
});
