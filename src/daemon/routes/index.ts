/** Every route of both APIs, listed explicitly. */
import { RESOURCES } from '../../model/resources/index.js';
import type { ApiName, RouteDef } from '../http/route.js';
import { authRoutes } from './auth.js';
import { crudRoutes } from './crud.js';
import { currentIdentityRoutes } from './current-identity.js';
import { enrollRoutes } from './enroll.js';
import { enrollmentRoutes } from './enrollment.js';
import { identityRoutes } from './identity.js';
import { infoRoutes } from './info.js';
import { relatedRoutes } from './related.js';

export function allRoutes(specFor: (api: ApiName) => unknown): RouteDef[] {
  return [
    ...infoRoutes(specFor),
    ...authRoutes,
    ...currentIdentityRoutes,
    ...RESOURCES.flatMap((def) => crudRoutes(def)),
    ...identityRoutes,
    ...relatedRoutes,
    ...enrollmentRoutes,
    ...enrollRoutes,
  ];
}
