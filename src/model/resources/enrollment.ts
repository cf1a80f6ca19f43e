/**
 * Outstanding enrollments: a one-time token (with its signed JWT) that lets an identity obtain its first
 * credential (parity: docs/reference-notes.md §7.1, §7.2). Created by admins directly or with an identity
 * (`enrollment: {ott | ottca | updb}`), consumed by the `/enroll*` endpoints (services/enrollment/enrollment.ts).
 *
 * Rules: at most one enrollment per method per identity (409 ENROLLMENT_EXISTS, cause field `method`, whether
 * the existing one has expired or not, as the reference); `expiresAt` must lie in the future; `updb` needs a
 * username no authenticator or other enrollment uses. As a courtesy the reference does not offer, an enrollment
 * for a method whose authenticator the identity already has is refused up front (409
 * MAX_AUTHENTICATOR_METHODS_REACHED) instead of failing at enroll time. Each method's own rules are its module in
 * src/model/enrollments; the shared ones and the reads are services/hooks/enrollment.ts.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

/** The identity enrollment methods an admin can create (router methods come with routers). */
export const IDENTITY_ENROLLMENT_METHODS = ['ott', 'ottca', 'updb'] as const;
export type IdentityEnrollmentMethod = (typeof IDENTITY_ENROLLMENT_METHODS)[number];

export const enrollments = defineResource({
  name: 'enrollments',
  label: 'enrollment',
  table: 'enrollments',
  schemaName: 'enrollment',
  props: {
    method: {
      schema: Type.Union(IDENTITY_ENROLLMENT_METHODS.map((m) => Type.Literal(m))),
      storage: 'text',
      create: 'required',
      filter: true,
    },
    identityId: { schema: Type.String(), storage: 'text', create: 'required', filter: true },
    expiresAt: { schema: Type.String(), storage: 'datetime', create: 'required', filter: true },
    caId: {
      schema: Type.String(),
      storage: 'text',
      create: 'optional',
      nullable: true,
      renderNull: true,
      filter: true,
    },
    username: { schema: Type.String(), storage: 'text', create: 'optional', nullable: true, filter: true },
    // Stored instead of `token` and `jwt`, which are derived when rendered (model/tokens.ts).
    tokenHash: { schema: Type.String(), storage: 'text', hidden: true },
    jwtTemplate: { schema: Type.String(), storage: 'text', hidden: true },
    // Router enrollments (erott, trott) are created with their router (services/enrollment/router-enrollment.ts).
    edgeRouterId: { schema: Type.String(), storage: 'text', filter: true },
    transitRouterId: { schema: Type.String(), storage: 'text', filter: true },
  },
  extraFields: {
    token: { kind: 'scalar', type: 'string', column: 'tokenHash', hashed: true },
    identity: { kind: 'scalar', type: 'string', column: 'identityId' },
    ca: { kind: 'scalar', type: 'string', column: 'caId' },
    edgeRouter: { kind: 'scalar', type: 'string', column: 'edgeRouterId' },
    transitRouter: { kind: 'scalar', type: 'string', column: 'transitRouterId' },
  },
  ops: { list: 'listEnrollments', create: 'createEnrollment', detail: 'detailEnrollment', delete: 'deleteEnrollment' },
  envelopes: { list: 'listEnrollmentsEnvelope', detail: 'detailEnrollmentEnvelope' },
});
