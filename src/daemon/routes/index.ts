/** Every route of every API (both edge APIs and the fabric subset), listed explicitly. */
import { RESOURCES } from '../../model/resources/index.js';
import type { ApiName, RouteDef } from '../http/route.js';
import { apiSessionCertRoutes } from './api-session-certs.js';
import { authRoutes } from './auth.js';
import { authenticatorRoutes } from './authenticator.js';
import { caRoutes } from './ca.js';
import { certExtensionRoutes } from './cert-extension.js';
import { controllerRoutes } from './controllers.js';
import { crudRoutes } from './crud.js';
import { databaseRoutes } from './database.js';
import { currentIdentityRoutes } from './current-identity.js';
import { enrollRoutes } from './enroll.js';
import { enrollKeyRoutes } from './enroll-keys.js';
import { enrollmentRoutes } from './enrollment.js';
import { eventRoutes } from './events.js';
import { externalJwtSignerRoutes } from './external-jwt-signers.js';
import { fabricRoutes } from './fabric.js';
import { identityRoutes } from './identity.js';
import { identityTraceRoutes } from './identity-trace.js';
import { infoRoutes } from './info.js';
import { mfaRoutes } from './mfa.js';
import { relatedRoutes } from './related.js';
import { identityAccessRoutes } from './identity-access.js';
import { isReplacedByAccessRoutes, servicesAccessRoutes } from './services-access.js';
import { sessionRoutes } from './sessions.js';
import { routerEnrollmentRoutes } from './router-enrollment.js';
import { postureRoutes } from './posture.js';
import { revocationRoutes } from './revocations.js';

export function allRoutes(specFor: (api: ApiName) => unknown): RouteDef[] {
  return [
    ...infoRoutes(specFor),
    ...authRoutes,
    ...currentIdentityRoutes,
    ...RESOURCES.flatMap((def) => crudRoutes(def)).filter((r) => !isReplacedByAccessRoutes(r)),
    // The controllers registry (both APIs) and the current spec's operations beyond the 0.25.6 set.
    ...controllerRoutes,
    ...identityRoutes,
    ...relatedRoutes,
    // Access engine: services as identities see them, sessions, policy advice, service configs.
    ...servicesAccessRoutes,
    ...sessionRoutes,
    ...identityAccessRoutes,
    ...enrollmentRoutes,
    ...eventRoutes,
    ...enrollRoutes,
    ...enrollKeyRoutes,
    // Third-party CAs, API-session certificates, certificate extension and re-enrollment.
    ...caRoutes,
    ...apiSessionCertRoutes,
    ...certExtensionRoutes,
    ...authenticatorRoutes,
    ...routerEnrollmentRoutes,
    // External JWT signers: the Client API's login-page listing.
    ...externalJwtSignerRoutes,
    // TOTP MFA on both APIs and its admin removal.
    ...mfaRoutes,
    // Database operations (integrity scan and fix, snapshots) and identity tracing.
    ...databaseRoutes,
    ...identityTraceRoutes,

    // Posture check types, posture responses, posture data and failed service requests.
    ...postureRoutes,

    // Revocations of OIDC tokens (the list and detail are the resource's generic routes).
    ...revocationRoutes,

    // The fabric API's read-only subset: routers from the edge routers, no links or circuits.
    ...fabricRoutes,
  ];
}
