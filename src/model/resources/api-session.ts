/**
 * API sessions: the security contexts issued by authenticate (parity: controller-behaviours.md §4.1–4.3).
 * Rows are created by the authentication service, never through a generic create.
 */
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../ctx.js';
import { entityRef } from '../render.js';
import type { ResourceDef, Row } from '../resource.js';

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const ids = [...new Set(rows.map((r) => r.identityId as string))];
  const names = await ctx.db.selectFrom('identities').select(['id', 'name']).where('id', 'in', ids).execute();
  const byId = new Map(names.map((n: { id: string; name: string }) => [n.id, n.name]));
  for (const r of rows) {
    r.identity = entityRef('identities', r.identityId as string, byId.get(r.identityId as string));
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
    token: { schema: Type.String(), storage: 'text', filter: true },
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
    identity: { kind: 'scalar', type: 'string', column: 'identityId' },
    authenticator: { kind: 'scalar', type: 'string', column: 'authenticatorId' },
    mfaRequired: { kind: 'scalar', type: 'bool', column: 'isMfaRequired' },
    mfaComplete: { kind: 'scalar', type: 'bool', column: 'isMfaComplete' },
  },
  links: (id) => ({ sessions: `./api-sessions/${id}/sessions` }),
  hooks: { decorate },
  ops: { list: 'listAPISessions', detail: 'detailAPISessions', delete: 'deleteAPISessions' },
  envelopes: { list: 'listApiSessionsEnvelope', detail: 'detailApiSessionEnvelope' },
};
