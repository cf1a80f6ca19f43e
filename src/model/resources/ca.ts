/**
 * Third-party certificate authorities (parity: docs/reference-notes.md §7.5, docs/reference-notes.md §12 "Certificate
 * Authority"). A CA lets certificates from an operator's own PKI authenticate (`isAuthEnabled`), enroll
 * identities on the fly (`isAutoCaEnrollmentEnabled`) or complete `ottca` enrollments (`isOttCaEnrollmentEnabled`).
 *
 * A CA is created unverified with a random `verificationToken`; it is used for nothing until the operator proves
 * possession of its key by uploading a certificate whose CN is that token, signed by the CA (services/ca/ca.ts).
 * The certificate itself is fixed at create: replacing it would silently change what the verification proved.
 * Deleting a CA deletes the cert authenticators issued through it and its outstanding `ottca` enrollments.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { AttributesSchema, NameSchema } from '../schemas.js';
import { ExternalIdClaimSchema } from '../ca/external-id.js';

/** What `identityNameFormat` is when left out or empty (src/model/ca/name-format.ts). */
export const DEFAULT_IDENTITY_NAME_FORMAT = '[caName]-[commonName]';

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

export const cas = defineResource({
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
  ops: {
    list: 'listCas',
    create: 'createCa',
    detail: 'detailCa',
    update: 'updateCa',
    patch: 'patchCa',
    delete: 'deleteCa',
  },
  envelopes: { list: 'listCasEnvelope', detail: 'detailCaEnvelope' },
});
