/** Terminators: `service` and `router` checked and stored as ids, shown as refs (docs/reference-notes.md §12). */
import { serviceExists } from '../../../store/service-configs.js';
import { routerExists } from '../../../store/routers.js';
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import { attachRefs } from '../../refs.js';
import type { Input, ResourceHooks, Row } from '../../resource.js';

/** `service` and `router` are ids on the wire and stored as `serviceId`/`routerId`; a router is an edge or a transit router. */
async function prepare(ctx: Ctx, input: Input): Promise<Input> {
  const out = { ...input };
  if (out.service !== undefined) {
    if (typeof out.service !== 'string' || !(await serviceExists(ctx.db, out.service)))
      throw fieldError('service', 'no service found with the given id', out.service);
    out.serviceId = out.service;
    delete out.service;
  }
  if (out.router !== undefined) {
    const id = out.router;
    if (typeof id !== 'string' || !(await routerExists(ctx.db, id)))
      throw fieldError('router', 'no router found with the given id', id);
    out.routerId = id;
    delete out.router;
  }
  // Accepted for the reference's shape; the secret is only meaningful to the router protocol.
  delete out.identitySecret;
  return out;
}

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, { idField: 'serviceId', as: 'service', table: 'services', collection: 'services' });
  await attachRefs(ctx, rows, { idField: 'routerId', as: 'router', table: 'transit_routers', collection: 'routers' });
  await attachRefs(
    ctx,
    rows.filter((r) => !(r.router as { name?: string } | undefined)?.name),
    { idField: 'routerId', as: 'router', table: 'edge_routers', collection: 'edge-routers' },
  );
  for (const r of rows) r.dynamicCost = r.cost;
}

export const terminatorHooks: ResourceHooks = { prepare, decorate };
