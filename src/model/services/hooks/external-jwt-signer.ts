/**
 * External JWT signers (parity: docs/reference-notes.md §5.4): every rule is checked on the record as it will be
 * stored, so a PATCH is judged merged with what is there. Auth policies name signers inside JSON members, so
 * deleting a named signer is refused here (409).
 */
import { policiesNamingSigner } from '../../../store/external-jwt-signers.js';
import { decodePemBlocks, CERTIFICATE_PEM_TYPES, isPkiError, parseCertificateDer } from '../../../pki/index.js';
import type { Ctx } from '../../ctx.js';
import { iso } from '../../ctx.js';
import { DomainError, fieldError } from '../../errors.js';
import type { Input, Row, WriteMode } from '../../resource.js';
import { hooksFor } from '../../resource-hooks.js';
import { externalJwtSigners } from '../../resources/external-jwt-signer.js';
import { parseClaimsPointer } from '../ext-jwt/ext-jwt-claims.js';
import { authPolicyExists } from '../../../store/auth-policies.js';

/** How the reference renders a time it does not have (Go's zero time). */
const ZERO_TIME = '0001-01-01T00:00:00.000Z';

/** Required on create and PUT; null there is refused, on PATCH it leaves the value as it is. */
const REQUIRED = ['name', 'issuer', 'audience', 'enabled'] as const;
/** Null on create and PUT means the default; on PATCH, unchanged. */
const DEFAULTS: Record<string, unknown> = {
  claimsProperty: 'sub',
  useExternalId: false,
  enrollToCertEnabled: false,
  enrollToTokenEnabled: false,
};
/** May be cleared with null. */
const CLEARABLE = [
  'kid',
  'certPem',
  'jwksEndpoint',
  'externalAuthUrl',
  'enrollNameClaimsSelector',
  'enrollAttributeClaimsSelector',
  'enrollAuthPolicyId',
] as const;

const invalidPem = (reason: string) =>
  new DomainError('INVALID_CERT_PEM', { cause: { field: 'certPem', reason, value: '' }, causeMessage: reason });

/** The one certificate of `certPem` and what the record shows of it (INVALID_CERT_PEM otherwise). */
export function signerCertificate(pem: string) {
  const blocks = decodePemBlocks(pem);
  if (blocks.length !== 1) throw invalidPem(`expected exactly one certificate, found ${blocks.length} PEM blocks`);
  const block = blocks[0]!;
  if (!(CERTIFICATE_PEM_TYPES as readonly string[]).includes(block.type))
    throw invalidPem(`expected a CERTIFICATE block, found ${block.type}`);
  try {
    return parseCertificateDer(block.der);
  } catch (e) {
    if (isPkiError(e)) throw invalidPem('the certificate could not be parsed');
    throw e;
  }
}

function httpUrl(field: string, v: unknown): void {
  if (typeof v !== 'string') return;
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname)
    throw fieldError(field, `${field} must be an http or https URL`, v);
}

function nonEmpty(field: string, v: unknown): void {
  if (typeof v === 'string' && v.trim() === '') throw fieldError(field, `${field} must not be empty`, v);
}

function resolveNullsFor(out: Input, mode: WriteMode): void {
  for (const f of REQUIRED) {
    if (out[f] !== null) continue;
    if (mode === 'patch') delete out[f];
    else throw fieldError(f, `${f} is required`, null);
  }
  for (const [f, d] of Object.entries(DEFAULTS)) {
    if (out[f] !== null) continue;
    if (mode === 'patch') delete out[f];
    else out[f] = d;
  }
}

async function prepare(ctx: Ctx, input: Input, mode: WriteMode, existing?: Row): Promise<Input> {
  const out = { ...input };
  resolveNullsFor(out, mode);
  for (const f of CLEARABLE) if (out[f] === '') out[f] = null;
  // A blank claim means the default, as the reference stores it (its web console sends "" for an empty field).
  if (typeof out.claimsProperty === 'string' && out.claimsProperty.trim() === '')
    out.claimsProperty = DEFAULTS.claimsProperty;
  // The record as it will be stored: PATCH merges onto the existing one.
  const merged: Row = mode === 'patch' ? { ...existing, ...out } : out;
  for (const f of ['name', 'issuer', 'audience'] as const) nonEmpty(f, merged[f]);
  if (typeof merged.claimsProperty === 'string') parseClaimsPointer(merged.claimsProperty);
  for (const f of ['enrollNameClaimsSelector', 'enrollAttributeClaimsSelector'] as const) {
    const pointer = merged[f];
    if (typeof pointer !== 'string') continue;
    try {
      parseClaimsPointer(pointer);
    } catch {
      throw fieldError(f, `${f} must be a JSON pointer such as name or /user/groups`, pointer);
    }
  }
  const policyId = out.enrollAuthPolicyId;
  if (typeof policyId === 'string' && !(await authPolicyExists(ctx.db, policyId)))
    throw fieldError('enrollAuthPolicyId', 'no auth policy has this id', policyId);
  httpUrl('jwksEndpoint', merged.jwksEndpoint);
  httpUrl('externalAuthUrl', merged.externalAuthUrl);
  const certPem = merged.certPem;
  const hasCert = typeof certPem === 'string';
  const hasJwks = typeof merged.jwksEndpoint === 'string';
  if (hasCert === hasJwks) {
    const field = hasCert ? 'jwksEndpoint' : 'certPem';
    throw fieldError(field, 'exactly one of certPem and jwksEndpoint is required', merged[field] ?? null);
  }
  if (hasCert) {
    if (out.certPem !== undefined || mode !== 'patch') {
      const cert = signerCertificate(certPem);
      out.certPem = cert.pem;
      out.fingerprint = cert.fingerprint;
      out.commonName = cert.commonName ?? '';
      out.notBefore = iso(cert.notBefore);
      out.notAfter = iso(cert.notAfter);
    }
  } else {
    out.certPem = null;
    for (const f of ['fingerprint', 'commonName', 'notBefore', 'notAfter']) out[f] = null;
  }
  return out;
}

export const externalJwtSignerHooks = hooksFor(externalJwtSigners, {
  prepare,
  /**
   * Every field the detail requires is a string (or a list) where the schema does not allow null: an unset `kid`
   * or `externalAuthUrl` and a JWKS signer's certificate fields are `""`, its validity dates Go's zero time, as
   * the reference renders what it does not have. `clientId`, `scopes` and `targetToken` (the current spec) belong
   * to an OIDC client flow edgectl does not take: none set, and the reference's default target, the access token
   * (docs/decisions.md, "External JWT signers"). Only `certPem` and `jwksEndpoint` may be null.
   */
  decorate(_ctx, rows) {
    for (const r of rows) {
      for (const k of ['kid', 'externalAuthUrl', 'fingerprint', 'commonName'] as const) r[k] ??= '';
      r.notBefore ??= ZERO_TIME;
      r.notAfter ??= ZERO_TIME;
      r.clientId ??= '';
      r.scopes ??= [];
      r.targetToken ??= 'ACCESS';
    }
  },
  afterWrite(ctx, id) {
    ctx.extJwt?.forgetSigner(id);
  },
  async beforeDelete(ctx, row) {
    const { id } = row;
    const ids = await policiesNamingSigner(ctx.db, id, 10);
    if (ids.length > 0) {
      throw new DomainError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
        urlVars: { id },
        cause: {
          field: 'id',
          reason: `entity type external-jwt-signers referenced by auth-policies: [${ids.join(', ')}]`,
          value: id,
        },
        causeMessage: `referenced by /auth-policies/${ids[0]}`,
      });
    }
    ctx.extJwt?.forgetSigner(id);
  },
});
