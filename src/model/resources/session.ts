/**
 * Sessions: permission for one API session to Dial or Bind one service through a set of edge routers
 * (docs/reference-notes.md §4.5, docs/reference-notes.md §12 "Session"). Rows are written by the session service, never
 * by a generic create; this definition gives the listings their columns, filterable fields (§1.7: `token`,
 * `apiSession`, `service`, `type`) and rendering. `edgeRouters` is computed when rendered, so it always
 * reflects the current policies.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

export const sessions = defineResource({
  name: 'sessions',
  label: 'session',
  table: 'sessions',
  schemaName: 'session',
  props: {
    // Only the hash is stored; `token` is derived when rendered (model/tokens.ts) and filters compare hashes.
    tokenHash: { schema: Type.String(), storage: 'text', hidden: true },
    type: { schema: Type.String(), storage: 'text', filter: true },
    apiSessionId: { schema: Type.String(), storage: 'text' },
    serviceId: { schema: Type.String(), storage: 'text' },
    identityId: { schema: Type.String(), storage: 'text' },
  },
  extraFields: {
    token: { kind: 'scalar', type: 'string', column: 'tokenHash', hashed: true },
    apiSession: { kind: 'scalar', type: 'string', column: 'apiSessionId' },
    service: { kind: 'scalar', type: 'string', column: 'serviceId' },
    identity: { kind: 'scalar', type: 'string', column: 'identityId' },
  },
  // Served by routes/sessions.ts (client create/list/detail/delete scoped to the caller, management for admins).
  ops: {},
  envelopes: { list: 'listSessionsEnvelope', detail: 'detailSessionEnvelope' },
});
