/**
 * API sessions: the security contexts issued by authenticate (parity: docs/reference-notes.md §4.1–4.3).
 * Rows are created by the authentication service, never through a generic create. Hooks: services/hooks/api-session.ts.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

export const apiSessions = defineResource({
  name: 'api-sessions',
  label: 'api session',
  table: 'api_sessions',
  schemaName: 'apiSession',
  props: {
    tokenHash: { schema: Type.String(), storage: 'text', hidden: true },
    identityId: { schema: Type.String(), storage: 'text', filter: true },
    authenticatorId: { schema: Type.String(), storage: 'text', filter: true },
    ipAddress: { schema: Type.String(), storage: 'text', filter: true },
    configTypes: { schema: Type.Array(Type.String()), storage: 'json', default: [] },
    authQueries: { schema: Type.Array(Type.Object({})), storage: 'json', default: [] },
    isMfaRequired: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
    isMfaComplete: { schema: Type.Boolean(), storage: 'bool', default: false, filter: true },
    lastActivityAt: { schema: Type.String(), storage: 'datetime', filter: true },
  },
  extraFields: {
    token: { kind: 'scalar', type: 'string', column: 'tokenHash', hashed: true },
    identity: { kind: 'scalar', type: 'string', column: 'identityId' },
    authenticator: { kind: 'scalar', type: 'string', column: 'authenticatorId' },
    mfaRequired: { kind: 'scalar', type: 'bool', column: 'isMfaRequired' },
    mfaComplete: { kind: 'scalar', type: 'bool', column: 'isMfaComplete' },
  },
  links: (id) => ({ sessions: `./api-sessions/${id}/sessions` }),
  ops: { list: 'listAPISessions', detail: 'detailAPISessions', delete: 'deleteAPISessions' },
  envelopes: { list: 'listApiSessionsEnvelope', detail: 'detailApiSessionEnvelope' },
});
