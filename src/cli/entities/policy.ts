/**
 * What the three policy resource definitions cannot say for the CLI: columns showing roles by current name
 * (`…RolesDisplay`), `@name` in role flags resolved to `@id` against the collection each list selects, the
 * semantic's choices, and the reference CLI's shape: `ziti edge create service-policy NAME Dial|Bind
 * --service-roles --identity-roles -p postureCheckRoles --semantic`. The semantic is AllOf unless given: with
 * AnyOf, `--identity-roles '#sales,#vip'` would also select identities holding only one of the two, a wider grant
 * than the roles read as written (docs/decisions.md, "CLI defaults").
 */
import type { Column, Rec } from '../output.js';
import type { EntitySpec, FlagOverride } from '../crud.js';
import { col } from '../output.js';
import {
  edgeRouterPolicies,
  edgeRouters,
  identities,
  postureChecks,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
} from '../resources.js';

/** A role list as people read it: `@<name>` for `@id` entries (from `…RolesDisplay`), the raw roles otherwise. */
const roles = (header: string, prop: string): Column => ({
  header,
  value: (r: Rec) => {
    const display = r[`${prop}Display`];
    return Array.isArray(display) ? display.map((d) => (d as { name?: unknown }).name) : r[prop];
  },
});

const ROLE_FLAGS: Record<string, FlagOverride> = {
  identityRoles: { roles: identities, description: 'identities' },
  serviceRoles: { roles: services, description: 'services' },
  edgeRouterRoles: { roles: edgeRouters, description: 'edge routers' },
  postureCheckRoles: { short: 'p', roles: postureChecks, description: 'posture checks' },
};

const common = {
  createArgs: ['name'],
  createDefaults: { semantic: 'AllOf' },
  flags: {
    name: { description: 'name (unique)' },
    semantic: {
      choices: ['AllOf', 'AnyOf'],
      description: 'how several attribute roles combine: AllOf or AnyOf (AllOf on create unless given)',
    },
    ...ROLE_FLAGS,
  },
  createHelp: '\nRoles: #attribute, #all, @id or @name (a name is resolved to its id before sending).',
} satisfies Partial<EntitySpec>;

export const servicePolicySpec: EntitySpec = {
  ...common,
  def: servicePolicies,
  noun: 'service-policy',
  aliases: ['service-policies', 'sp', 'sps'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('TYPE', 'type'),
    col('SEMANTIC', 'semantic'),
    roles('SERVICE ROLES', 'serviceRoles'),
    roles('IDENTITY ROLES', 'identityRoles'),
    roles('POSTURE CHECK ROLES', 'postureCheckRoles'),
  ],
  createArgs: ['name', 'type'],
  flags: { ...common.flags, type: { description: 'Dial (use the services) or Bind (host them)' } },
};

export const edgeRouterPolicySpec: EntitySpec = {
  ...common,
  def: edgeRouterPolicies,
  noun: 'edge-router-policy',
  aliases: ['edge-router-policies', 'erp', 'erps'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('SEMANTIC', 'semantic'),
    roles('EDGE ROUTER ROLES', 'edgeRouterRoles'),
    roles('IDENTITY ROLES', 'identityRoles'),
    col('SYSTEM', 'isSystem'),
  ],
};

export const serviceEdgeRouterPolicySpec: EntitySpec = {
  ...common,
  def: serviceEdgeRouterPolicies,
  noun: 'service-edge-router-policy',
  aliases: ['service-edge-router-policies', 'serp', 'serps'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('SEMANTIC', 'semantic'),
    roles('SERVICE ROLES', 'serviceRoles'),
    roles('EDGE ROUTER ROLES', 'edgeRouterRoles'),
  ],
};

/** Posture checks as a sub-collection of service policies (they have no noun of their own yet). */
export const postureCheckSpec: EntitySpec = {
  def: postureChecks,
  noun: 'posture-check',
  aliases: ['posture-checks'],
  columns: [col('ID', 'id'), col('NAME', 'name'), col('TYPE', 'typeId'), col('ATTRIBUTES', 'roleAttributes')],
};
