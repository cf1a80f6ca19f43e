/**
 * The resource definitions the CLI has commands for: the model's own. They are pure data (their behaviour lives in
 * the model's services), so importing them costs the CLI's start-up little (docs/design.md, "Cheap definitions").
 */
export {
  apiSessions,
  authenticators,
  authPolicies,
  cas,
  configs,
  configTypes,
  controllers,
  controllerSettings,
  edgeRouterPolicies,
  edgeRouters,
  enrollments,
  externalJwtSigners,
  identities,
  postureChecks,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
  transitRouters,
} from '../model/resources/index.js';
