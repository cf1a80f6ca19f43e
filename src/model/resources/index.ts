/** Every resource definition, listed explicitly (no runtime discovery, so bundling keeps working). */
import type { ResourceDef } from '../resource.js';
import { apiSessions } from './api-session.js';
import { authPolicies } from './auth-policy.js';
import { authenticators } from './authenticator.js';
import { cas } from './ca.js';
import { enrollments } from './enrollment.js';
import { identities } from './identity.js';
import { identityTypes } from './identity-type.js';
import { configTypes } from './config-type.js';
import { configs } from './config.js';
import { services } from './service.js';
import { edgeRouters } from './edge-router.js';
import { routers, transitRouters } from './transit-router.js';
import { servicePolicies } from './service-policy.js';
import { edgeRouterPolicies } from './edge-router-policy.js';
import { serviceEdgeRouterPolicies } from './service-edge-router-policy.js';
import { postureChecks } from './posture-check.js';
import { externalJwtSigners } from './external-jwt-signer.js';
import { controllerSettings } from './controller-setting.js';
import { controllers } from './controller.js';
import { revocations } from './revocation.js';

export { apiSessions, authPolicies, authenticators, cas, enrollments, identities, identityTypes };
export {
  configTypes,
  configs,
  services,
  edgeRouters,
  routers,
  transitRouters,
  servicePolicies,
  edgeRouterPolicies,
  serviceEdgeRouterPolicies,
  postureChecks,
  externalJwtSigners,
  controllerSettings,
  controllers,
  revocations,
};

export const RESOURCES: readonly ResourceDef[] = [
  identityTypes,
  authPolicies,
  identities,
  authenticators,
  enrollments,
  apiSessions,
  cas,
  // Services, configs, routers, policies and external JWT signers.
  configTypes,
  configs,
  services,
  edgeRouters,
  transitRouters,
  routers,
  servicePolicies,
  edgeRouterPolicies,
  serviceEdgeRouterPolicies,
  externalJwtSigners,

  // Posture checks (their type-specific fields: src/model/posture/types/).
  postureChecks,

  // Per-controller settings (the controllers registry itself is read-only: routes/controllers.ts).
  controllerSettings,
  // Revocations of OIDC tokens (created by POST /revocations, daemon/routes/revocations.ts).
  revocations,
];
