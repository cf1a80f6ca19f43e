/**
 * CA actions beyond CRUD: proof of possession (`POST /cas/{id}/verify`) and the CA enrollment JWT
 * (`GET /cas/{id}/jwt`) (parity: docs/reference-notes.md §7.1, §7.5).
 */
import { markCaVerified } from '../../../store/cas.js';
import { withTx } from '../../../store/db.js';
import {
  CERTIFICATE_PEM_TYPES,
  decodePemBlocks,
  isIssuedBy,
  parseCertificate,
  parseCertificateDer,
  type ParsedCertificate,
} from '../../../pki/index.js';
import { getRow } from '../../crud.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { requirePki } from '../../pki.js';
import { cas } from '../../resources/ca.js';
import { trustChanged } from '../../ca/trust.js';
import { recordRowChange, rowBefore } from '../../events/operation-events.js';

/** The first PEM block of a verification upload, with the reference's error for each way it can be wrong. */
function verificationCertificate(body: unknown): ParsedCertificate {
  if (typeof body !== 'string')
    throw new DomainError('COULD_NOT_PARSE_BODY', { cause: { message: 'expected a PEM certificate as text/plain' } });
  const [block] = decodePemBlocks(body);
  if (!block) throw new DomainError('COULD_NOT_PARSE_BODY', { cause: { message: 'the body holds no PEM block' } });
  if (!(CERTIFICATE_PEM_TYPES as readonly string[]).includes(block.type)) {
    throw new DomainError('EXPECTED_PEM_CERTIFICATE', {
      cause: { message: `found a PEM block of type ${block.type}` },
    });
  }
  try {
    return parseCertificateDer(block.der);
  } catch {
    throw new DomainError('COULD_NOT_PARSE_DER_BLOCK');
  }
}

/**
 * Marks a CA verified once `body` (PEM) holds a certificate whose CN is the CA's verification token and which the
 * CA signed: only the holder of the CA's key can produce one. Checks run in the reference's order: already
 * verified (409 CA_ALREADY_VERIFIED), PEM problems, CN (400 INVALID_COMMON_NAME), signature (400
 * CERTIFICATE_FAILED_VALIDATION).
 */
export async function verifyCa(ctx: Ctx, id: string, body: unknown): Promise<void> {
  await withTx(ctx.db, async (trx) => {
    const row = await getRow(withDb(ctx, trx), cas, id);
    if (row.isVerified) throw new DomainError('CA_ALREADY_VERIFIED', { urlVars: { id } });
    const cert = verificationCertificate(body);
    if (cert.commonName !== row.verificationToken) {
      throw new DomainError('INVALID_COMMON_NAME', {
        cause: {
          field: 'commonName',
          reason: 'the common name must equal the CA verification token',
          value: cert.commonName ?? '',
        },
      });
    }
    if (!isIssuedBy(cert, parseCertificate(row.certPem))) {
      throw new DomainError('CERTIFICATE_FAILED_VALIDATION', {
        cause: { message: 'the certificate is not signed by the CA' },
      });
    }
    const before = await rowBefore(withDb(ctx, trx), cas, id);
    await markCaVerified(trx, id, iso(ctx.now()));
    await recordRowChange(withDb(ctx, trx), cas, id, 'updated', 'ca-verified', before);
    trustChanged(withDb(ctx, trx));
  });
}

/**
 * The CA enrollment JWT (parity §7.1): `em: "ca"`, `aud: ["openziti-enroller"]`, `iss` the controller URL with a
 * trailing slash, `sub` = `jti` = the CA id, no expiry. It tells a client where to auto-enroll with a certificate
 * from this CA; it grants nothing by itself.
 */
export async function caJwt(ctx: Ctx, id: string): Promise<string> {
  const row = await getRow(ctx, cas, id);
  const pki = requirePki(ctx);
  const issuer = pki.issuer.endsWith('/') ? pki.issuer : `${pki.issuer}/`;
  return pki.signEnrollmentJwt({
    method: 'ca',
    issuer,
    subject: row.id,
    token: row.id,
    audience: ['openziti-enroller'],
  });
}
