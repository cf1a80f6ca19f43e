/**
 * Third-party CAs (parity: docs/reference-notes.md §7.5): the certificate is checked and fixed at create, a new
 * CA is unverified with a fresh verification token, and the listener re-reads its trusted CAs when a verified
 * one changes or goes (taking the authenticators and ottca enrollments it vouched for).
 */
import { caFingerprintUsed, deleteCaDependants } from '../../../store/cas.js';
import type { Ctx } from '../../ctx.js';
import { DomainError, fieldError } from '../../errors.js';
import { newToken } from '../../ids.js';
import type { Input, Row, WriteMode } from '../../resource.js';
import { hooksFor } from '../../resource-hooks.js';
import { checkRoleAttributes } from '../../schemas.js';
import { normalizeExternalIdClaim, patchExternalIdClaim } from '../../ca/external-id.js';
import { cas, DEFAULT_IDENTITY_NAME_FORMAT } from '../../resources/ca.js';
import {
  CERTIFICATE_PEM_TYPES,
  decodePemBlocks,
  isPkiError,
  parseCertificateDer,
  type ParsedCertificate,
} from '../../../pki/index.js';

const invalidPem = (reason: string) =>
  new DomainError('INVALID_CERT_PEM', { cause: { field: 'certPem', reason, value: '' } });

/** `certPem` must be exactly one certificate, and a CA certificate (INVALID_CERT_PEM / CERTIFICATE_IS_NOT_CA). */
export function parseCaCertificate(pem: unknown): ParsedCertificate {
  if (typeof pem !== 'string' || pem.trim() === '') throw fieldError('certPem', 'certPem is required', pem ?? null);
  const blocks = decodePemBlocks(pem);
  if (blocks.length !== 1) throw invalidPem(`expected exactly one certificate, found ${blocks.length} PEM blocks`);
  const block = blocks[0]!;
  if (!(CERTIFICATE_PEM_TYPES as readonly string[]).includes(block.type))
    throw invalidPem(`expected a CERTIFICATE block, found ${block.type}`);
  let cert: ParsedCertificate;
  try {
    cert = parseCertificateDer(block.der);
  } catch (e) {
    if (isPkiError(e)) throw invalidPem('the certificate could not be parsed');
    throw e;
  }
  if (!cert.isCA) {
    throw new DomainError('CERTIFICATE_IS_NOT_CA', {
      cause: {
        field: 'certPem',
        reason: 'the certificate is not a CA certificate (basicConstraints cA)',
        value: cert.subject,
      },
    });
  }
  return cert;
}

const FLAGS = ['name', 'isAuthEnabled', 'isAutoCaEnrollmentEnabled', 'isOttCaEnrollmentEnabled'] as const;

async function prepare(ctx: Ctx, input: Input, mode: WriteMode, existing?: Row): Promise<Input> {
  const out = { ...input };
  // The reference's patch schema makes these nullable: null on PATCH means "unchanged"; elsewhere it is refused.
  for (const f of FLAGS) {
    if (out[f] !== null) continue;
    if (mode === 'patch') delete out[f];
    else throw fieldError(f, `${f} must not be null`, null);
  }
  if (mode === 'create') {
    const cert = parseCaCertificate(out.certPem);
    if (await caFingerprintUsed(ctx.db, cert.fingerprint))
      throw fieldError('certPem', 'certificate already used as CA', cert.fingerprint);
    out.certPem = cert.pem;
    out.fingerprint = cert.fingerprint;
    out.isVerified = false;
    out.verificationToken = newToken();
  }
  if (out.identityRoles !== undefined) checkRoleAttributes('identityRoles', out.identityRoles);
  if (out.identityNameFormat === '') out.identityNameFormat = DEFAULT_IDENTITY_NAME_FORMAT;
  if ('externalIdClaim' in out) {
    out.externalIdClaim =
      mode === 'patch'
        ? patchExternalIdClaim(existing?.externalIdClaim, out.externalIdClaim)
        : normalizeExternalIdClaim(out.externalIdClaim);
  }
  return out;
}

/** Tells the listener to re-read its trusted CAs (only a verified CA is ever trusted). */
function notifyIfTrusted(ctx: Ctx, row: Row | undefined): void {
  if (row?.isVerified) ctx.pki?.trustChanged?.();
}

export const caHooks = hooksFor(cas, {
  prepare,
  afterWrite(ctx, _id, mode, _input, existing) {
    if (mode !== 'create') notifyIfTrusted(ctx, existing);
  },
  async beforeDelete(ctx, row) {
    const { id } = row;
    // The certificates this CA vouched for lose their trust anchor: their authenticators and pending
    // ottca enrollments go with it (seed; parity §7.5).
    await deleteCaDependants(ctx.db, id);
    notifyIfTrusted(ctx, row);
  },
});
