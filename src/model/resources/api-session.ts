/**
 * API sessions: the security contexts issued by authenticate (parity: docs/reference-notes.md §4.1–4.3).
 * Rows are created by the authentication service, never through a generic create.
 */
import { Type } from '../schema-type.js';
import type { Ctx } from '../ctx.js';
import { dropApiSession } from '../posture/state.js';
import { attachRefs, IDENTITY_REF } from '../refs.js';
import type { ResourceDef, Row } from '../resource.js';

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, IDENTITY_REF);
  for (const r of rows) {
    // The store keeps only the token's hash; the token itself is derived again (model/tokens.ts).
    r.token = ctx.tokens.token('api-session', r.id as string);
    r.cachedLastActivityAt = r.lastActivityAt;
    r.isCertExtendable = false;
  }
}

export const apiSessions: ResourceDef = {
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
  // Posture scoped to an API session goes with it (docs/reference-notes.md §4.2).
  hooks: { decorate, afterDelete: (row) => dropApiSession(row.id as string) },
  ops: { list: 'listAPISessions', detail: 'detailAPISessions', delete: 'deleteAPISessions' },
  envelopes: { list: 'listApiSessionsEnvelope', detail: 'detailApiSessionEnvelope' },
};
