/**
 * The identity an API session acts for, as a request sees it: what the session lookup returns and the principal
 * cache keeps. A module of its own because both the lookup (api-session.ts) and the cache name it.
 */
export interface SessionIdentity {
  id: string;
  name: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  authPolicyId: string;
}
