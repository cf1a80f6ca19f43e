/** Every resource definition, listed explicitly (no runtime discovery, so bundling keeps working). */
import type { ResourceDef } from '../resource.js';
import { apiSessions } from './api-session.js';
import { authPolicies } from './auth-policy.js';
import { authenticators } from './authenticator.js';
import { identities } from './identity.js';
import { identityTypes } from './identity-type.js';

export { apiSessions, authPolicies, authenticators, identities, identityTypes };

export const RESOURCES: readonly ResourceDef[] = [identityTypes, authPolicies, identities, authenticators, apiSessions];
