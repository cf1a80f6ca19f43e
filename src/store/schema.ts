/**
 * The store's tables as kysely sees them. GENERATED from the migrations by `scripts/gen-store-schema.ts`:
 * do not edit; rerun the script after adding a migration (a unit test checks it is current).
 *
 * Column types are the stored ones: booleans are 0/1 integers and JSON values are text; the conversions live
 * in `src/store/values.ts`. `Generated<T>` marks a column with a default, optional on insert.
 */
import type { Generated } from 'kysely';

export interface EntityColumns {
  id: string;
  createdAt: string;
  updatedAt: string;
  tags: Generated<string>;
  isSystem: Generated<number>;
}

export interface AccessMarkersTable {
  name: string;
  gen: Generated<number>;
  changedAt: string;
}

export interface AccessTransitionsTable {
  id: number;
  moves: string;
  notes: string;
}

export interface ApiSessionCertsTable extends EntityColumns {
  apiSessionId: string;
  identityId: string;
  subject: string;
  fingerprint: string;
  certificate: string;
  validFrom: string;
  validTo: string;
}

export interface ApiSessionsTable extends EntityColumns {
  tokenHash: string;
  identityId: string;
  authenticatorId: string;
  ipAddress: Generated<string>;
  configTypes: Generated<string>;
  authQueries: Generated<string>;
  isMfaRequired: Generated<number>;
  isMfaComplete: Generated<number>;
  lastActivityAt: string;
  mfaPassedAt: string | null;
  isOidc: Generated<number>;
}

export interface AuthPoliciesTable extends EntityColumns {
  name: string;
  primary: string;
  secondary: string;
}

export interface AuthenticatorsTable extends EntityColumns {
  identityId: string;
  method: string;
  username: string | null;
  passwordHash: string | null;
  failedAttempts: Generated<number>;
  certPem: string | null;
  fingerprint: string | null;
  caId: string | null;
  unverifiedCertPem: string | null;
  unverifiedFingerprint: string | null;
  isExtendRequested: Generated<number>;
  isKeyRollRequested: Generated<number>;
  extendRequestedAt: string | null;
  lastExtendRolledKeys: number | null;
}

export interface CasTable extends EntityColumns {
  name: string;
  certPem: string;
  fingerprint: string;
  isVerified: Generated<number>;
  verificationToken: string;
  isAuthEnabled: Generated<number>;
  isAutoCaEnrollmentEnabled: Generated<number>;
  isOttCaEnrollmentEnabled: Generated<number>;
  identityNameFormat: Generated<string>;
  externalIdClaim: string | null;
}

export interface CasIdentityRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ConfigTypesTable extends EntityColumns {
  name: string;
  schema: Generated<string>;
}

export interface ConfigsTable extends EntityColumns {
  name: string;
  configTypeId: string;
  data: Generated<string>;
}

export interface ControllerSecretsTable {
  name: string;
  ciphertext: string;
  createdAt: string;
  updatedAt: string;
}

export interface ControllerSettingsTable extends EntityColumns {
  controllerId: string;
  oidc: string | null;
}

export interface ControllersTable extends EntityColumns {
  name: string;
  certPem: string;
  fingerprint: string;
  ctrlAddress: string | null;
  apiAddresses: Generated<string>;
  version: string;
  lastJoinedAt: string;
  lastSeenAt: string;
  stoppedAt: string | null;
}

export interface EdgeRouterPoliciesTable extends EntityColumns {
  name: string;
  semantic: Generated<string>;
}

export interface EdgeRouterPoliciesEdgeRouterRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface EdgeRouterPoliciesIdentityRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface EdgeRoutersTable extends EntityColumns {
  name: string;
  cost: Generated<number>;
  noTraversal: Generated<number>;
  isVerified: Generated<number>;
  fingerprint: string | null;
  certPem: string | null;
  unverifiedFingerprint: string | null;
  unverifiedCertPem: string | null;
  isTunnelerEnabled: Generated<number>;
  appData: Generated<string>;
}

export interface EdgeRoutersRoleAttributesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface EnrollmentsTable extends EntityColumns {
  method: string;
  tokenHash: string;
  identityId: string | null;
  expiresAt: string;
  caId: string | null;
  username: string | null;
  jwtTemplate: string;
  edgeRouterId: string | null;
  transitRouterId: string | null;
}

export interface EventCursorsTable {
  name: string;
  seq: Generated<number>;
  updatedAt: string;
}

export interface EventsTable {
  seq: number;
  id: string;
  namespace: string;
  eventType: string;
  timestamp: string;
  actorId: string | null;
  entityType: string | null;
  entityId: string | null;
  body: string;
}

export interface ExternalJwtSignersTable extends EntityColumns {
  name: string;
  issuer: string;
  audience: string;
  enabled: Generated<number>;
  kid: string | null;
  certPem: string | null;
  jwksEndpoint: string | null;
  claimsProperty: Generated<string>;
  useExternalId: Generated<number>;
  externalAuthUrl: string | null;
  fingerprint: string | null;
  commonName: string | null;
  notBefore: string | null;
  notAfter: string | null;
  enrollToCertEnabled: Generated<number>;
  enrollToTokenEnabled: Generated<number>;
  enrollNameClaimsSelector: string | null;
  enrollAttributeClaimsSelector: string | null;
  enrollAuthPolicyId: string | null;
}

export interface IdentitiesTable extends EntityColumns {
  name: string;
  typeId: string;
  isAdmin: Generated<number>;
  isDefaultAdmin: Generated<number>;
  authPolicyId: string;
  externalId: string | null;
  defaultHostingCost: Generated<number>;
  defaultHostingPrecedence: Generated<string>;
  serviceHostingCosts: Generated<string>;
  serviceHostingPrecedences: Generated<string>;
  appData: Generated<string>;
  envInfo: Generated<string>;
  sdkInfo: Generated<string>;
  disabledAt: string | null;
  disabledUntil: string | null;
  traceUntil: string | null;
  traceId: string | null;
  traceChannels: string | null;
}

export interface IdentitiesRoleAttributesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface IdentityServiceConfigsTable {
  identityId: string;
  serviceId: string;
  configTypeId: string;
  configId: string;
}

export interface IdentityTypesTable extends EntityColumns {
  name: string;
}

export interface IntegrityResultsTable {
  id: string;
  details: string;
  updatedAt: string;
}

export interface MfaFailuresTable {
  mfaId: string;
  apiSessionId: string;
  at: string;
}

export interface MfasTable extends EntityColumns {
  identityId: string;
  isVerified: Generated<number>;
  secretSealed: string;
  recoverySalt: string;
  recoveryHashes: Generated<string>;
  recoveryCodesSealed: string | null;
  lastTimeStep: number | null;
  apiSessionId: string | null;
}

export interface OidcAuthRequestsTable {
  idHash: string;
  createdAt: string;
  expiresAt: string;
  clientId: string;
  redirectUri: string;
  scopes: Generated<string>;
  state: string | null;
  nonce: string | null;
  codeChallenge: string;
  codeChallengeMethod: string;
  apiSessionId: string;
  remoteAddress: string;
  method: string | null;
  configTypes: Generated<string>;
  identityId: string | null;
  authenticatorId: string | null;
  amr: Generated<string>;
  authTime: string | null;
  authQueries: Generated<string>;
  sdkInfo: string | null;
  envInfo: string | null;
  codeHash: string | null;
  certFingerprint: string | null;
  csrPem: string | null;
  certImproperChain: Generated<number>;
}

export interface OidcRefreshTokensTable {
  jti: string;
  apiSessionId: string;
  parentJti: string | null;
  clientId: string;
  createdAt: string;
  expiresAt: string;
  rotatedAt: string | null;
}

export interface PostureApiSessionsTable {
  apiSessionId: string;
  identityId: string;
  mfaPassedAt: string | null;
  wokenAt: string | null;
  unlockedAt: string | null;
  sdkNew: Generated<number>;
}

export interface PostureChecksTable extends EntityColumns {
  name: string;
  typeId: string;
  version: Generated<number>;
  details: Generated<string>;
}

export interface PostureChecksRoleAttributesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface PostureFailedRequestsTable {
  identityId: string;
  seq: number;
  request: string;
}

export interface PostureIdentitiesTable {
  identityId: string;
  records: Generated<string>;
  changedAt: string | null;
}

export interface RevocationsTable extends EntityColumns {
  type: string;
  expiresAt: string;
  issuedBefore: string;
}

export interface SchemaMigrationsTable {
  name: string;
  timestamp: string;
}

export interface SearchIndexPendingTable {
  ix: string;
  docid: number;
}

export interface ServiceEdgeRouterPoliciesTable extends EntityColumns {
  name: string;
  semantic: Generated<string>;
}

export interface ServiceEdgeRouterPoliciesEdgeRouterRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ServiceEdgeRouterPoliciesServiceRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ServicePoliciesTable extends EntityColumns {
  name: string;
  type: string;
  semantic: Generated<string>;
}

export interface ServicePoliciesIdentityRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ServicePoliciesPostureCheckRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ServicePoliciesServiceRolesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ServicesTable extends EntityColumns {
  name: string;
  terminatorStrategy: Generated<string>;
  encryptionRequired: Generated<number>;
}

export interface ServicesConfigsTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface ServicesRoleAttributesTable {
  ownerId: string;
  value: string;
  position: number;
}

export interface SessionsTable extends EntityColumns {
  tokenHash: string;
  apiSessionId: string;
  identityId: string;
  serviceId: string;
  type: string;
}

export interface TerminatorsTable extends EntityColumns {
  serviceId: string;
  routerId: string;
  binding: string;
  address: string;
  identity: Generated<string>;
  cost: Generated<number>;
  precedence: Generated<string>;
}

export interface TransitRoutersTable extends EntityColumns {
  name: string;
  cost: Generated<number>;
  noTraversal: Generated<number>;
  isVerified: Generated<number>;
  fingerprint: string | null;
  certPem: string | null;
  unverifiedFingerprint: string | null;
  unverifiedCertPem: string | null;
}

export interface Database {
  access_markers: AccessMarkersTable;
  access_transitions: AccessTransitionsTable;
  api_session_certs: ApiSessionCertsTable;
  api_sessions: ApiSessionsTable;
  auth_policies: AuthPoliciesTable;
  authenticators: AuthenticatorsTable;
  cas: CasTable;
  cas_identityRoles: CasIdentityRolesTable;
  config_types: ConfigTypesTable;
  configs: ConfigsTable;
  controller_secrets: ControllerSecretsTable;
  controller_settings: ControllerSettingsTable;
  controllers: ControllersTable;
  edge_router_policies: EdgeRouterPoliciesTable;
  edge_router_policies_edgeRouterRoles: EdgeRouterPoliciesEdgeRouterRolesTable;
  edge_router_policies_identityRoles: EdgeRouterPoliciesIdentityRolesTable;
  edge_routers: EdgeRoutersTable;
  edge_routers_roleAttributes: EdgeRoutersRoleAttributesTable;
  enrollments: EnrollmentsTable;
  event_cursors: EventCursorsTable;
  events: EventsTable;
  external_jwt_signers: ExternalJwtSignersTable;
  identities: IdentitiesTable;
  identities_roleAttributes: IdentitiesRoleAttributesTable;
  identity_service_configs: IdentityServiceConfigsTable;
  identity_types: IdentityTypesTable;
  integrity_results: IntegrityResultsTable;
  mfa_failures: MfaFailuresTable;
  mfas: MfasTable;
  oidc_auth_requests: OidcAuthRequestsTable;
  oidc_refresh_tokens: OidcRefreshTokensTable;
  posture_api_sessions: PostureApiSessionsTable;
  posture_checks: PostureChecksTable;
  posture_checks_roleAttributes: PostureChecksRoleAttributesTable;
  posture_failed_requests: PostureFailedRequestsTable;
  posture_identities: PostureIdentitiesTable;
  revocations: RevocationsTable;
  schema_migrations: SchemaMigrationsTable;
  search_index_pending: SearchIndexPendingTable;
  service_edge_router_policies: ServiceEdgeRouterPoliciesTable;
  service_edge_router_policies_edgeRouterRoles: ServiceEdgeRouterPoliciesEdgeRouterRolesTable;
  service_edge_router_policies_serviceRoles: ServiceEdgeRouterPoliciesServiceRolesTable;
  service_policies: ServicePoliciesTable;
  service_policies_identityRoles: ServicePoliciesIdentityRolesTable;
  service_policies_postureCheckRoles: ServicePoliciesPostureCheckRolesTable;
  service_policies_serviceRoles: ServicePoliciesServiceRolesTable;
  services: ServicesTable;
  services_configs: ServicesConfigsTable;
  services_roleAttributes: ServicesRoleAttributesTable;
  sessions: SessionsTable;
  terminators: TerminatorsTable;
  transit_routers: TransitRoutersTable;
}
