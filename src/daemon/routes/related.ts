/**
 * Sub-collection listings of the Management API: the entities a policy affects, the policies affecting an
 * entity, what an entity reaches through policies, a service's configs, a config type's configs, and the
 * role attributes in use. Each is a parent (404 when missing), a child resource and a SQL scope; paging,
 * filters and sorting are those of the child's own list.
 */
import { getRow, listEntities } from '../../model/crud.js';
import { relationScope } from '../../model/relation-scopes.js';
import { RELATIONS, type Relation } from '../../model/relations.js';
import { renderRecord } from '../../model/render.js';
import type { ResourceDef } from '../../model/resource.js';
import { edgeRouters, postureChecks, services } from '../../model/resources/index.js';
import { listRoleAttributes } from '../../model/role-attributes.js';
import { listOf } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

/** One related listing of the model's table (src/model/relations.ts). */
function relatedRoute(r: Relation): RouteDef {
  return route({
    apis: ['management'],
    method: 'GET',
    path: `/${r.parent.name}/{id}/${r.segment}`,
    operationId: r.operationId,
    tag: r.tag,
    access: 'admin',
    success: 200,
    envelope: r.envelope,
    async handler(rc) {
      const id = rc.params.id;
      await getRow(rc.ctx, r.parent, id);
      const page = await listEntities(rc.ctx, r.child, listOptions(rc), relationScope(r, id));
      return listOf(
        page.rows.map((row) => renderRecord(r.child, row)),
        page,
      );
    },
  });
}

/** `GET /<x>-role-attributes`: the distinct attributes in use by one resource (§1.7). */
function roleAttributesRoute(path: string, operationId: string, def: ResourceDef): RouteDef {
  return route({
    apis: ['management'],
    method: 'GET',
    path,
    operationId,
    tag: 'Role Attributes',
    access: 'admin',
    success: 200,
    envelope: 'listRoleAttributesEnvelope',
    async handler(rc) {
      const page = await listRoleAttributes(rc.ctx, def, listOptions(rc));
      return listOf(page.values, page);
    },
  });
}

export const relatedRoutes: RouteDef[] = [
  ...RELATIONS.map(relatedRoute),
  roleAttributesRoute('/service-role-attributes', 'listServiceRoleAttributes', services),
  roleAttributesRoute('/edge-router-role-attributes', 'listEdgeRouterRoleAttributes', edgeRouters),
  roleAttributesRoute('/posture-check-role-attributes', 'listPostureCheckRoleAttributes', postureChecks),
];
