/**
 * Sessions: permission for one API session to Dial or Bind one service through a set of edge routers
 * (docs/reference-notes.md §4.5, docs/reference-notes.md §12 "Session"). Rows are written by the session service, never
 * by a generic create; this definition gives the listings their columns, filterable fields (§1.7: `token`,
 * `apiSession`, `service`, `type`) and rendering. `edgeRouters` is computed when rendered, so it always
 * reflects the current policies.
 */
import { Type } from '../schema-type.js';
import type { Ctx } from '../ctx.js';
import { entityRef } from '../render.js';
import type { ResourceDef, Row } from '../resource.js';
import { accessEngine } from '../access/engine.js';
import { sessionEdgeRouters } from '../services/session-routers.js';

/** `apiSession`, `service` refs and `edgeRouters`, for a page of sessions (identities and services cached by the engine). */
async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const engine = accessEngine(ctx);
  const m = await engine.markers(ctx);
  const catalog = await engine.serviceCatalog(ctx, m);
  for (const r of rows) {
    r.token = ctx.tokens.token('session', r.id as string);
    const identity = await engine.identity(ctx, m, r.identityId as string);
    decorateSession(
      r,
      (catalog.records.get(r.serviceId as string)?.name as string | undefined) ?? '',
      await sessionEdgeRouters(ctx, m, identity, r.serviceId as string),
    );
  }
}

/** The fields a session record adds to its row (shared by the create answer and the listings). */
export function decorateSession(r: Row, serviceName: string, edgeRouters: Record<string, unknown>[]): void {
  r.apiSession = entityRef('api-sessions', r.apiSessionId as string, '');
  r.service = entityRef('services', r.serviceId as string, serviceName);
  r.edgeRouters = edgeRouters;
}

export const sessions: ResourceDef = {
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
  hooks: { decorate },
  // Served by routes/sessions.ts (client create/list/detail/delete scoped to the caller, management for admins).
  ops: {},
  envelopes: { list: 'listSessionsEnvelope', detail: 'detailSessionEnvelope' },
};
