/**
 * Third-party certificate authorities (parity: docs/reference-notes.md §7.5, docs/reference-notes.md §12 "Certificate
 * Authority"). A CA lets certificates from an operator's own PKI authenticate (`isAuthEnabled`), enroll
 * identities on the fly (`isAutoCaEnrollmentEnabled`) or complete `ottca` enrollments (`isOttCaEnrollmentEnabled`).
 *
 * A CA is created unverified with a random `verificationToken`; it is used for nothing until the operator proves
 * possession of its key by uploading a certificate whose CN is that token, signed by the CA (services/ca.ts).
 * The certificate itself is fixed at create: replacing it would silently change what the verification proved.
 * Deleting a CA deletes the cert authenticators issued through it and its outstanding `ottca` enrollments.
 */
import { Type } from '../schema-type.js';
import { caFingerprintUsed, deleteCaDependants } from '../../store/cas.js';
import type { Ctx } from '../ctx.js';
import { DomainError, fieldError } from '../errors.js';
import { newToken } from '../ids.js';
import type { Input, ResourceDef, Row, WriteMode } from '../resource.js';
import { AttributesSchema, checkRoleAttributes, NameSchema } from '../schemas.js';
import { ExternalIdClaimSchema, normalizeExternalIdClaim, patchExternalIdClaim } from '../ca/external-id.js';
import { DEFAULT_IDENTITY_NAME_FORMAT } from '../ca/name-format.js';
import {
  CERTIFICATE_PEM_TYPES,
  decodePemBlocks,
  isPkiError,
  parseCertificateDer,
  type ParsedCertificate,
} from '../../pki/index.js';

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

const bool = (create: 'required' | 'optional' = 'required') =>
  ({
    schema: Type.Boolean(),
    storage: 'bool',
    create,
    update: 'required',
    patch: true,
    nullable: true,
    default: false,
    filter: true,
  }) as const;

export const cas: ResourceDef = {
  name: 'cas',
  label: 'ca',
  table: 'cas',
  schemaName: 'ca',
  props: {
    name: {
      schema: NameSchema,
      storage: 'text',
      create: 'required',
      update: 'required',
      patch: true,
      nullable: true,
      filter: true,
    },
    certPem: { schema: Type.String(), storage: 'text', create: 'required' },
    fingerprint: { schema: Type.String(), storage: 'text', filter: true },
    isVerified: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
    verificationToken: { schema: Type.String(), storage: 'text', filter: true },
    isAuthEnabled: bool(),
    isAutoCaEnrollmentEnabled: bool(),
    isOttCaEnrollmentEnabled: bool(),
    identityRoles: {
      schema: AttributesSchema,
      storage: 'set',
      create: 'required',
      update: 'required',
      patch: true,
      default: [],
    },
    identityNameFormat: {
      schema: Type.String(),
      storage: 'text',
      create: 'optional',
      update: 'required',
      patch: true,
      default: DEFAULT_IDENTITY_NAME_FORMAT,
    },
    externalIdClaim: {
      schema: ExternalIdClaimSchema,
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      nullable: true,
    },
  },
  unique: ['name', 'fingerprint'],
  links: (id) => ({ jwt: `./cas/${id}/jwt`, verify: `./cas/${id}/verify` }),
  hooks: {
    prepare,
    afterWrite(ctx, _id, mode, _input, existing) {
      if (mode !== 'create') notifyIfTrusted(ctx, existing);
    },
    async beforeDelete(ctx, row) {
      const id = row.id as string;
      // The certificates this CA vouched for lose their trust anchor: their authenticators and pending
      // ottca enrollments go with it (seed; parity §7.5).
      await deleteCaDependants(ctx.db, id);
      notifyIfTrusted(ctx, row);
    },
  },
  ops: {
    list: 'listCas',
    create: 'createCa',
    detail: 'detailCa',
    update: 'updateCa',
    patch: 'patchCa',
    delete: 'deleteCa',
  },
  envelopes: { list: 'listCasEnvelope', detail: 'detailCaEnvelope' },
};
