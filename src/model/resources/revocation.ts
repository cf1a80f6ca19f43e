/**
 * Revocations of controller-issued JWTs (docs/reference-notes.md §14.9): listed and read through the generic
 * CRUD; created by `POST /revocations` (a create-or-replace, daemon/routes/revocations.ts) and by the OIDC
 * provider itself (model/services/oidc/revocations.ts). `issuedBefore`, the identity cutoff, is not shown.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

export const revocations = defineResource({
  name: 'revocations',
  label: 'revocation',
  table: 'revocations',
  schemaName: 'revocation',
  props: {
    type: { schema: Type.String(), storage: 'text', filter: true },
    expiresAt: { schema: Type.String(), storage: 'datetime', filter: true },
    issuedBefore: { schema: Type.String(), storage: 'datetime', hidden: true },
  },
  ops: { list: 'listRevocations', detail: 'detailRevocation' },
  envelopes: { list: 'listRevocationsEnvelope', detail: 'detailRevocationEnvelope' },
});
