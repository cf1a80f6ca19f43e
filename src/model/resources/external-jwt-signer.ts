/**
 * External JWT signers (parity: docs/reference-notes.md §5.4): an issuer whose JWTs log identities in
 * (`POST /authenticate?method=ext-jwt`) or serve as their second factor (an auth policy's
 * `secondary.requireExtJwtSigner`). A signer verifies with exactly one of `certPem` (one certificate; its
 * fingerprint, common name and validity are derived and shown) or `jwksEndpoint` (an http(s) URL).
 *
 * Every rule is checked on the record as it will be stored, so a PATCH is judged merged with what is there.
 * Auth policies name signers inside JSON members, so deleting a named signer is refused here (409).
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import type { PropDef } from '../resource.js';
import { NameSchema } from '../schemas.js';

const text = (create: 'required' | 'optional', filter = true) =>
  ({
    schema: Type.String(),
    storage: 'text',
    create,
    update: create,
    patch: true,
    nullable: true,
    filter,
  }) satisfies PropDef;

const flag = (create: 'required' | 'optional') =>
  ({
    schema: Type.Boolean(),
    storage: 'bool',
    create,
    update: create,
    patch: true,
    nullable: true,
    filter: true,
  }) satisfies PropDef;

/** Derived from `certPem`: never written by a request, shown as null for a JWKS signer. */
const derived = <S extends 'text' | 'datetime'>(storage: S) =>
  ({
    schema: Type.String(),
    storage,
    renderNull: true,
    filter: true,
  }) satisfies PropDef;

export const externalJwtSigners = defineResource({
  name: 'external-jwt-signers',
  label: 'external JWT signer',
  table: 'external_jwt_signers',
  schemaName: 'externalJwtSigner',
  props: {
    name: { ...text('required'), schema: NameSchema },
    issuer: text('required'),
    audience: text('required'),
    enabled: flag('required'),
    // Unset ones are shown as null: the detail lists every field (docs/decisions.md, "External JWT signers").
    kid: { ...text('optional'), renderNull: true },
    certPem: { ...text('optional', false), renderNull: true },
    jwksEndpoint: { ...text('optional'), renderNull: true },
    claimsProperty: { ...text('optional'), default: 'sub' },
    useExternalId: { ...flag('optional'), default: false },
    externalAuthUrl: { ...text('optional'), renderNull: true },
    // Enrollment with the signer's tokens (`POST /enroll/token`; docs/decisions.md, "Enrollment with an external
    // JWT"): to a certificate or to an ext-JWT identity, the claims giving its name and attributes, its policy.
    enrollToCertEnabled: { ...flag('optional'), default: false },
    enrollToTokenEnabled: { ...flag('optional'), default: false },
    enrollNameClaimsSelector: text('optional'),
    enrollAttributeClaimsSelector: text('optional'),
    enrollAuthPolicyId: text('optional'),
    fingerprint: derived('text'),
    commonName: derived('text'),
    notBefore: derived('datetime'),
    notAfter: derived('datetime'),
  },
  unique: ['name', 'issuer'],
  ops: {
    list: 'listExternalJwtSigners',
    create: 'createExternalJwtSigner',
    detail: 'detailExternalJwtSigner',
    update: 'updateExternalJwtSigner',
    patch: 'patchExternalJwtSigner',
    delete: 'deleteExternalJwtSigner',
  },
  envelopes: { list: 'listExternalJwtSignersEnvelope', detail: 'detailExternalJwtSignerEnvelope' },
});
