/**
 * A CA's `externalIdClaim`: where in a client certificate issued by that CA the identity's `externalId` is
 * found (docs/reference-notes.md §7.5).
 *
 * Why it exists: a third-party PKI often encodes a stable user or device id in its certificates (an e-mail
 * SAN, a SPIFFE URI, the CN). With a claim, the controller finds the identity by that id instead of by the
 * certificate's fingerprint, so the PKI can rotate certificates without touching the controller.
 *
 * Extraction: the values at `location` (the CN, the URI SANs or the e-mail SANs), filtered by `matcher`
 * (ALL; PREFIX / SUFFIX on the text; SCHEME on a URI's scheme), then each split by `parserCriteria` when the
 * parser is SPLIT; `index` picks one of the resulting values. Out of range or empty ⇒ no external id.
 */
import { Type } from '../schema-type.js';
import { fieldError } from '../errors.js';
import type { ParsedCertificate } from '../../pki/index.js';

export const CLAIM_LOCATIONS = ['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'] as const;
export const CLAIM_MATCHERS = ['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'] as const;
export const CLAIM_PARSERS = ['NONE', 'SPLIT'] as const;

export type ClaimLocation = (typeof CLAIM_LOCATIONS)[number];
export type ClaimMatcher = (typeof CLAIM_MATCHERS)[number];
export type ClaimParser = (typeof CLAIM_PARSERS)[number];

/**
 * The stored (normalised) claim: every member present. Criteria are kept as written (`""` stays `""`, criteria
 * a matcher or parser does not use are kept and ignored), null only when not given: what a client writes, it
 * reads back.
 */
export interface ExternalIdClaim {
  location: ClaimLocation;
  matcher: ClaimMatcher;
  matcherCriteria: string | null;
  parser: ClaimParser;
  parserCriteria: string | null;
  index: number;
}

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T) =>
  Type.Optional(Type.Union([s, Type.Null()]));
const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

/**
 * The request schema. Members are optional here (the reference's schema lists them as required but
 * nullable); the semantic rules below report what a given location/matcher/parser needs.
 */
export const ExternalIdClaimSchema = Type.Object(
  {
    location: nullable(literals(CLAIM_LOCATIONS)),
    matcher: nullable(literals(CLAIM_MATCHERS)),
    matcherCriteria: nullable(Type.String()),
    parser: nullable(literals(CLAIM_PARSERS)),
    parserCriteria: nullable(Type.String()),
    index: nullable(Type.Integer()),
  },
  { additionalProperties: true },
);

const MATCHERS_FOR: Record<ClaimLocation, readonly ClaimMatcher[]> = {
  COMMON_NAME: ['ALL', 'PREFIX', 'SUFFIX'],
  SAN_EMAIL: ['ALL', 'PREFIX', 'SUFFIX'],
  SAN_URI: ['ALL', 'SCHEME'],
};

const FIELD = 'externalIdClaim';

/**
 * Validates a requested claim and returns it normalised, or null when it is absent or has no location (a
 * claim without a location means "no claim", parity §7.5). Field errors name `externalIdClaim.<member>`.
 */
export function normalizeExternalIdClaim(input: unknown): ExternalIdClaim | null {
  if (input === null || input === undefined) return null;
  if (typeof input !== 'object' || Array.isArray(input))
    throw fieldError(FIELD, 'externalIdClaim must be an object', input);
  const c = input as Record<string, unknown>;
  if (c.location === null || c.location === undefined || c.location === '') return null;
  const location = c.location as ClaimLocation;
  if (!CLAIM_LOCATIONS.includes(location))
    throw fieldError(`${FIELD}.location`, `location must be one of ${CLAIM_LOCATIONS.join(', ')}`, c.location);
  const matcher = (c.matcher ?? 'ALL') as ClaimMatcher;
  if (!MATCHERS_FOR[location].includes(matcher)) {
    throw fieldError(
      `${FIELD}.matcher`,
      `matcher must be one of ${MATCHERS_FOR[location].join(', ')} for location ${location}`,
      c.matcher,
    );
  }
  const matcherCriteria = typeof c.matcherCriteria === 'string' ? c.matcherCriteria : null;
  if (matcher !== 'ALL' && !matcherCriteria) {
    throw fieldError(
      `${FIELD}.matcherCriteria`,
      `matcherCriteria is required for matcher ${matcher}`,
      c.matcherCriteria ?? null,
    );
  }
  const parser = (c.parser ?? 'NONE') as ClaimParser;
  if (!CLAIM_PARSERS.includes(parser))
    throw fieldError(`${FIELD}.parser`, `parser must be one of ${CLAIM_PARSERS.join(', ')}`, c.parser);
  const parserCriteria = typeof c.parserCriteria === 'string' ? c.parserCriteria : null;
  if (parser === 'SPLIT' && !parserCriteria) {
    throw fieldError(
      `${FIELD}.parserCriteria`,
      'parserCriteria (the separator) is required for parser SPLIT',
      c.parserCriteria ?? null,
    );
  }
  const index = c.index === null || c.index === undefined ? 0 : c.index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0)
    throw fieldError(`${FIELD}.index`, 'index must be an integer of at least 0', c.index);
  return {
    location,
    matcher,
    matcherCriteria,
    parser,
    parserCriteria,
    index,
  };
}

/** A PATCH of the claim: members sent replace the stored ones; null as a whole removes the claim. */
export function patchExternalIdClaim(existing: unknown, patch: unknown): ExternalIdClaim | null {
  if (patch === null) return null;
  if (typeof patch !== 'object' || Array.isArray(patch))
    throw fieldError(FIELD, 'externalIdClaim must be an object', patch);
  const base = existing && typeof existing === 'object' ? (existing as Record<string, unknown>) : {};
  const merged: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) if (v !== undefined) merged[k] = v;
  return normalizeExternalIdClaim(merged);
}

function schemeOf(uri: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri);
  return m?.[1]?.toLowerCase();
}

/** The external id the claim selects from `cert`, or undefined when it finds none. */
export function externalIdFromCertificate(claim: ExternalIdClaim, cert: ParsedCertificate): string | undefined {
  const values =
    claim.location === 'COMMON_NAME'
      ? cert.commonName !== undefined
        ? [cert.commonName]
        : []
      : claim.location === 'SAN_URI'
        ? [...cert.sans.uri]
        : [...cert.sans.email];
  const criteria = claim.matcherCriteria ?? '';
  const matched = values.filter((v) => {
    switch (claim.matcher) {
      case 'PREFIX':
        return v.startsWith(criteria);
      case 'SUFFIX':
        return v.endsWith(criteria);
      case 'SCHEME':
        return schemeOf(v) === criteria.toLowerCase();
      default:
        return true;
    }
  });
  const parsed = claim.parser === 'SPLIT' ? matched.flatMap((v) => v.split(claim.parserCriteria ?? '')) : matched;
  const picked = parsed[claim.index];
  return picked === undefined || picked === '' ? undefined : picked;
}
