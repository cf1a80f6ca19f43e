/** Sessions: the derived token, refs and the edge routers computed from the current policies on every read. */
import type { Ctx } from '../../ctx.js';
import { entityRef } from '../../render.js';
import type { ResourceHooks, Row } from '../../resource.js';
import { accessEngine } from '../../access/engine.js';
import { sessionEdgeRouters } from '../session/session-routers.js';
import { textOf } from '../../row.js';

/** `apiSession`, `service` refs and `edgeRouters`, for a page of sessions (identities and services cached by the engine). */
async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const engine = accessEngine(ctx);
  const m = await engine.markers(ctx);
  const catalog = await engine.serviceCatalog(ctx, m);
  for (const r of rows) {
    r.token = ctx.tokens.token('session', textOf(r, 'id'));
    const serviceId = textOf(r, 'serviceId');
    const serviceName = catalog.records.get(serviceId)?.name;
    const identity = await engine.identity(ctx, m, textOf(r, 'identityId'));
    decorateSession(
      r,
      typeof serviceName === 'string' ? serviceName : '',
      await sessionEdgeRouters(ctx, m, identity, serviceId),
    );
  }
}

/** The fields a session record adds to its row (shared by the create answer and the listings). */
export function decorateSession(r: Row, serviceName: string, edgeRouters: Record<string, unknown>[]): void {
  r.apiSession = entityRef('api-sessions', textOf(r, 'apiSessionId'), '');
  r.service = entityRef('services', textOf(r, 'serviceId'), serviceName);
  r.edgeRouters = edgeRouters;
}

export const sessionHooks: ResourceHooks = { decorate };
