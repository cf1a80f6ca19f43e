/**
 * The scopes of the sub-listings that are not about policies (a service's configs, a config type's configs,
 * a service's terminators, an identity's authenticators and enrollments). Routes hand them to `listEntities` without
 * looking inside; their SQL is the store's (`src/store/scopes.ts`). Policy scopes are in policy/scopes.ts.
 */
export {
  authenticatorsOfIdentity,
  configsOfService,
  configsOfType,
  enrollmentsOfIdentity,
  servicesOfConfig,
  terminatorsOfService,
  type Scope,
} from '../store/scopes.js';
