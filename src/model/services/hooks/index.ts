/**
 * The model's behaviour for each resource, by resource name: what the generic CRUD (src/model/crud.ts) runs
 * around a write, a delete and a read (whoever builds a Ctx passes this table as `ctx.hooks`). A resource without an
 * entry is plain data: its definition, its migration and its store queries are all there is to it.
 */
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../../policy/kinds.js';
import type { ResourceHooks } from '../../resource.js';
import { apiSessionHooks } from './api-session.js';
import { authPolicyHooks } from './auth-policy.js';
import { authenticatorHooks } from './authenticator.js';
import { caHooks } from './ca.js';
import { configHooks, configTypeHooks } from './config.js';
import { controllerHooks } from './controller.js';
import { controllerSettingHooks } from '../controller/settings.js';
import { enrollmentHooks } from './enrollment.js';
import { externalJwtSignerHooks } from './external-jwt-signer.js';
import { identityHooks } from './identity.js';
import { policyHooks } from './policy.js';
import { postureCheckHooks } from './posture-check.js';
import { edgeRouterHooks, transitRouterHooks } from './router.js';
import { serviceHooks } from './service.js';
import { sessionHooks } from './session.js';
import { terminatorHooks } from './terminator.js';

export const RESOURCE_HOOKS: Readonly<Record<string, ResourceHooks>> = {
  'api-sessions': apiSessionHooks,
  'auth-policies': authPolicyHooks,
  authenticators: authenticatorHooks,
  cas: caHooks,
  'config-types': configTypeHooks,
  controllers: controllerHooks,
  'controller-settings': controllerSettingHooks,
  configs: configHooks,
  enrollments: enrollmentHooks,
  'external-jwt-signers': externalJwtSignerHooks,
  identities: identityHooks,
  'posture-checks': postureCheckHooks,
  'edge-routers': edgeRouterHooks,
  'transit-routers': transitRouterHooks,
  routers: transitRouterHooks,
  services: serviceHooks,
  sessions: sessionHooks,
  terminators: terminatorHooks,
  'service-policies': policyHooks(SERVICE_POLICY),
  'edge-router-policies': policyHooks(EDGE_ROUTER_POLICY),
  'service-edge-router-policies': policyHooks(SERVICE_EDGE_ROUTER_POLICY),
};
