/**
 * The generic CRUD routes of a resource definition: list, create, detail, update, patch and delete, with
 * the reference's envelopes and status codes. A resource gets its routes from its definition alone.
 */
import { Type } from '@sinclair/typebox';
import { createEntity, deleteEntity, getEntity, listEntities, updateEntity } from '../../model/crud.js';
import { renderRecord } from '../../model/render.js';
import { bodySchema, type Access, type CrudOp, type Input, type ResourceDef } from '../../model/resource.js';
import { created, empty, listOf, ok } from '../http/envelope.js';
import {
  queryArray,
  queryString,
  route,
  type ApiName,
  type RequestContext,
  type RouteAccess,
  type RouteDef,
  type RouteSpec,
} from '../http/route.js';
import type { ListOptions } from '../../model/list-query.js';
import { roleFilterScope } from '../../model/role-filter.js';
import { keptPage } from '../../model/rendered-pages.js';
import { hooksOf } from '../../model/resource-hooks.js';

export const listOptions = (rc: RequestContext): ListOptions => ({
  filter: queryString(rc.query, 'filter'),
  sort: queryString(rc.query, 'sort'),
  limit: queryString(rc.query, 'limit'),
  offset: queryString(rc.query, 'offset'),
});

const access = (def: ResourceDef, op: CrudOp): Access => def.access?.[op] ?? 'admin';

const tagOf = (def: ResourceDef) =>
  def.name.replace(/(^|-)(\w)/g, (_m, sep: string, c: string) => (sep ? ' ' : '') + c.toUpperCase());

/** The route declarations for every CRUD op a resource definition exposes. */
export function crudRoutes(def: ResourceDef, apis: readonly ApiName[] = ['management']): RouteDef[] {
  const base = `/${def.name}` as const;
  const one = `${base}/{id}` as const;
  // Where the spec puts a resource's writes on a sub-path of the record (controller settings' `/effective`).
  const written = `${one}${def.writePath ?? ''}` as const;
  const routes: RouteDef[] = [];
  const add = <A extends RouteAccess, P extends string>(spec: RouteSpec<A, P>) => routes.push(route(spec));
  const common = { apis, tag: tagOf(def) };
  if (def.ops.list) {
    add({
      ...common,
      method: 'GET',
      path: base,
      operationId: def.ops.list,
      access: access(def, 'list'),
      success: 200,
      envelope: def.envelopes?.list,
      async handler(rc) {
        const roles = def.roleFilter ? queryArray(rc.query, 'roleFilter') : [];
        const semantic = def.roleFilter ? queryString(rc.query, 'roleSemantic') : undefined;
        const opts = listOptions(rc);
        const key = JSON.stringify([def.name, opts.filter, opts.sort, opts.limit, opts.offset, roles, semantic]);
        return keptPage(rc.ctx, hooksOf(rc.ctx, def), key, async () => {
          const scope = def.roleFilter ? roleFilterScope(def, roles, semantic) : undefined;
          const page = await listEntities(rc.ctx, def, opts, scope);
          const { meta } = listOf([], page);
          return { records: page.rows.map((r) => renderRecord(def, r)), rows: page.rows, meta: meta! };
        });
      },
    });
  }
  if (def.ops.create) {
    add({
      ...common,
      method: 'POST',
      path: base,
      operationId: def.ops.create,
      access: access(def, 'create'),
      body: bodySchema(def, 'create'),
      success: 201,
      envelope: 'createEnvelope',
      async handler(rc) {
        const id = await createEntity(rc.ctx, def, rc.body as Input);
        return created(id, def.name);
      },
    });
  }
  if (def.ops.detail) {
    add({
      ...common,
      method: 'GET',
      path: one,
      operationId: def.ops.detail,
      access: access(def, 'detail'),
      success: 200,
      envelope: def.envelopes?.detail,
      async handler(rc) {
        return ok(renderRecord(def, await getEntity(rc.ctx, def, rc.params.id)));
      },
    });
  }
  for (const mode of ['update', 'patch'] as const) {
    const opId = def.ops[mode];
    if (!opId) continue;
    add({
      ...common,
      method: mode === 'update' ? 'PUT' : 'PATCH',
      path: written,
      operationId: opId,
      access: access(def, mode),
      body: bodySchema(def, mode),
      success: 200,
      envelope: 'empty',
      async handler(rc) {
        await updateEntity(rc.ctx, def, rc.params.id, rc.body as Input, mode);
        return empty();
      },
    });
  }
  if (def.ops.delete) {
    add({
      ...common,
      method: 'DELETE',
      path: written,
      operationId: def.ops.delete,
      access: access(def, 'delete'),
      success: 200,
      envelope: 'empty',
      async handler(rc) {
        await deleteEntity(rc.ctx, def, rc.params.id);
        return empty();
      },
    });
  }
  return routes;
}

export const EmptyObject = Type.Object({}, { additionalProperties: true });
