/**
 * API-session certificates (parity: docs/reference-notes.md §4.7, docs/reference-notes.md §12 "API session certificate"):
 * short-lived (12 h) client certificates an authenticated client obtains from a CSR, bound to its API session.
 *
 * They are only ever reached through `/current-api-session/certificates` (services/api-session/api-session-certs.ts), scoped
 * to the caller's API session, so the definition serves no generic CRUD operation; it still drives rendering and
 * the filterable fields. Rows go with their API session through a cascading foreign key.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

export const apiSessionCerts = defineResource({
  name: 'current-api-session/certificates',
  label: 'api session certificate',
  table: 'api_session_certs',
  schemaName: 'currentApiSessionCertificate',
  props: {
    subject: { schema: Type.String(), storage: 'text', filter: true },
    fingerprint: { schema: Type.String(), storage: 'text', filter: true },
    certificate: { schema: Type.String(), storage: 'text' },
    validFrom: { schema: Type.String(), storage: 'datetime', filter: true },
    validTo: { schema: Type.String(), storage: 'datetime', filter: true },
    apiSessionId: { schema: Type.String(), storage: 'text', hidden: true },
    identityId: { schema: Type.String(), storage: 'text', hidden: true },
  },
  ops: {},
  envelopes: {
    list: 'listCurrentApiSessionCertificatesEnvelope',
    detail: 'detailCurrentApiSessionCertificateEnvelope',
  },
});
