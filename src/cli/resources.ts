/** The CLI's resource metadata by collection name (from the generated snapshot; see resource-meta.ts). */
import type { CliResource } from './resource-meta.js';
import { RESOURCE_META } from './resources.generated.js';

/** The metadata of collection `name`. */
export function resourceMeta(name: string): CliResource {
  const meta = RESOURCE_META[name];
  if (!meta) throw new Error(`no CLI metadata for /${name}: regenerate src/cli/resources.generated.ts`);
  return meta;
}

export const identities = resourceMeta('identities');
export const authPolicies = resourceMeta('auth-policies');
export const authenticators = resourceMeta('authenticators');
export const apiSessions = resourceMeta('api-sessions');
export const enrollments = resourceMeta('enrollments');
export const cas = resourceMeta('cas');
export const configTypes = resourceMeta('config-types');
export const configs = resourceMeta('configs');
export const services = resourceMeta('services');
export const edgeRouters = resourceMeta('edge-routers');
export const transitRouters = resourceMeta('transit-routers');
export const servicePolicies = resourceMeta('service-policies');
export const edgeRouterPolicies = resourceMeta('edge-router-policies');
export const serviceEdgeRouterPolicies = resourceMeta('service-edge-router-policies');
export const postureChecks = resourceMeta('posture-checks');
export const externalJwtSigners = resourceMeta('external-jwt-signers');
