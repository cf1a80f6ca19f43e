/**
 * The catalogue of wire error codes and the one error type the domain throws.
 *
 * Handlers and services throw {@link DomainError}; the daemon's single error handler turns it into the
 * `{error, meta}` envelope and the CLI turns it into a message and an exit code.
 * parity: codes, statuses and default messages follow docs/reference-notes.md §3.3.
 */

export const ERROR_CATALOGUE = {
  NOT_FOUND: [404, 'The resource requested was not found or is no longer available'],
  UNHANDLED: [500, 'An unhandled error occurred'],
  INVALID_FIELD: [400, 'The field contains an invalid value'],
  ENTITY_CAN_NOT_BE_DELETED: [400, 'The entity requested for delete can not be deleted'],
  ENTITY_CAN_NOT_BE_UPDATED: [400, 'The entity requested for update can not be updated'],
  COULD_NOT_VALIDATE: [400, 'The supplied request contains an invalid document'],
  UNAUTHORIZED: [
    401,
    'The request could not be completed. The session is not authorized or the credentials are invalid',
  ],
  INVALID_FILTER: [400, 'The filter query supplied is invalid'],
  INVALID_PAGINATION: [400, 'The pagination properties provided are invalid'],
  INVALID_SORT_IDENTIFIER: [400, 'The sort order supplied is invalid'],
  METHOD_NOT_ALLOWED: [405, 'The resource requested does not support this HTTP verb'],
  COULD_NOT_PARSE_BODY: [400, 'The body of the request could not be parsed'],
  COULD_NOT_READ_BODY: [500, 'The body of the request could not be read'],
  REQUEST_ENTITY_TOO_LARGE: [413, 'The request body exceeds the maximum accepted size'],
  INVALID_UUID: [400, 'The supplied UUID is invalid'],
  INVALID_CONTENT_TYPE: [400, 'The content type supplied is not acceptable'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'The content type of the request is not supported'],
  UNSUPPORTED_MEDIA: [415, 'No suitable accept media types were detected, supports: application/json'],
  INVALID_AUTH: [401, 'The authentication request failed'],
  INVALID_AUTH_METHOD: [400, 'The supplied authentication method is not valid'],
  ENROLLMENT_EXPIRED: [400, 'The window for this enrollment has expired'],
  ENROLLMENT_IDENTITY_ALREADY_ENROLLED: [
    409,
    'The token supplied for this enrollment already has a matching identity, cannot enroll a new identity',
  ],
  COULD_NOT_PROCESS_CSR: [400, 'The supplied csr could not be processed'],
  ENROLLMENT_CA_NOT_VALID: [400, 'The CA tied to the supplied token is no longer valid'],
  ENROLLMENT_NO_VALID_CAS: [400, 'No CAs are valid for this request'],
  INVALID_ENROLLMENT_TOKEN: [400, 'The supplied token is not valid'],
  INVALID_ENROLLMENT_NOT_ALLOWED: [409, 'The configuration does not allow this enrollment'],
  INVALID_ENROLLMENT_ALREADY_ENROLLED: [410, 'The token provided has already been used to enroll'],
  INVALID_ENROLL_METHOD: [400, 'The supplied enrollment method is not valid'],
  MISSING_OR_INVALID_CSR: [400, 'The supplied enrollment request is missing or contains an invalid CSR'],
  NO_EDGE_ROUTERS_AVAILABLE: [400, 'No edge routers are assigned and online to handle the requested connection'],
  COULD_NOT_PARSE_x509_FROM_DER: [400, 'could not parse x509 from DER'],
  CERT_FAILED_VALIDATION: [400, 'certificate failed to validate against CA'],
  CERT_IN_USE: [409, 'The certificate supplied is already associated with another identity'],
  CA_ALREADY_VERIFIED: [409, 'CA has already been verified'],
  EXPECTED_PEM_CERTIFICATE: [400, "expected PEM block type 'CERTIFICATE'"],
  COULD_NOT_PARSE_DER_BLOCK: [400, "The certificate's DER block could not be parsed"],
  COULD_NOT_PARSE_PEM_BLOCK: [400, "The certificate's PEM block could not be parsed"],
  INVALID_COMMON_NAME: [400, 'The common name of the supplied certificate is invalid'],
  CERTIFICATE_FAILED_VALIDATION: [
    400,
    "The supplied certificate failed to validate against the CA's certificate chain",
  ],
  CERTIFICATE_IS_NOT_CA: [400, 'Leading certificate is not a CA'],
  INVALID_AUTHENTICATOR_PROPERTIES: [400, 'The properties supplied did not match the authenticator method'],
  CAN_NOT_UPDATE_AUTHENTICATOR: [409, 'The authenticator cannot be updated in this fashion'],
  CAN_NOT_UPDATE_ROUTER: [409, 'The router was not added via the Edge API and cannot be updated'],
  MAX_AUTHENTICATOR_METHODS_REACHED: [
    409,
    'The identity already has the maximum authenticators of the specified method',
  ],
  RATE_LIMITED: [
    429,
    'The requested operation is rate limited and the rate limit has been exceeded. Please try again later',
  ],
  TIMEOUT: [503, 'The requested operation took too much time to reply'],
  INVALID_POSTURE: [409, 'Posture response data is missing or wrong'],
  MFA_EXISTS: [409, 'An MFA record already exists, try removing it'],
  MFA_ENROLLMENT_NOT_STARTED: [404, 'MFA enrollment has not be started'],
  MFA_INVALID_TOKEN: [401, 'An invalid token/code was provided'],
  MFA_NOT_ENROLLED: [409, 'The current identity is not enrolled in MFA'],
  'INVALID TOTP CODE': [400, 'The TOTP code is not valid'],
  INVALID_BACKING_TOKEN_TYPE: [400, 'The session is not backed by a token of the type this operation needs'],
  MISSING_CERT_CLAIM: [400, 'The certificate is expected to contain and externalId, which was not found'],
  FAILED_ER_REENROLLMENT: [500, 'the edge router failed to be re-enrolled, see cause'],
  INVALID_CLIENT_CERT: [400, 'The provided client certificate is invalid'],
  INVALID_CERT_PEM: [
    400,
    'the supplied certificate PEM is either invalid or contains the incorrect number of certificates',
  ],
  CAN_NOT_DELETE_REFERENCED_ENTITY: [
    409,
    'the entity cannot be deleted because it is referenced by another entity, see cause',
  ],
  REFERENCED_ENTITY_NOT_FOUND: [400, 'REFERENCED_ENTITY_NOT_FOUND'],
  ENROLLMENT_EXISTS: [409, 'ENROLLMENT_EXISTS'],
  EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID: [
    400,
    "The edge router CSR enrollment must have a common name that matches the edge router's id",
  ],
  // Not in the reference (its store is one bbolt file it always can copy): a snapshot of a PostgreSQL store needs
  // pg_dump on the controller's host (docs/decisions.md, "Database snapshots").
  SNAPSHOT_UNAVAILABLE: [501, 'The store cannot take a snapshot on this controller'],
  SNAPSHOT_FAILED: [503, 'The snapshot could not be taken'],
  SERVER_TOO_MANY_REQUESTS: [
    429,
    'Too many requests to alter state have been issued. Please slow your request rate or try again later.',
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** A field-level cause: which input field failed and why (rendered under `error.cause`). */
export interface FieldCause {
  field: string;
  reason: string;
  value?: unknown;
}

/** A free-form cause (`{code?, message, data?}`), used e.g. for filter parse errors. */
export interface MessageCause {
  code?: string;
  message: string;
  data?: unknown;
}

export type ErrorCause = FieldCause | MessageCause;

export interface DomainErrorOptions {
  message?: string;
  cause?: ErrorCause | null;
  causeMessage?: string;
  urlVars?: Record<string, string>;
  /** Overrides the catalogue status where the reference uses one code with several statuses. */
  status?: number;
  data?: unknown;
  /** For 429s: sent as the `Retry-After` header (seconds). */
  retryAfterSeconds?: number;
  /** What an authentication event says of this refusal (never sent: the wire keeps one answer for all). */
  audit?: AuditNote;
}

/** Why an authentication was refused and whom it concerned, for its event (model/events/auth-events.ts). */
export interface AuditNote {
  reason: string;
  identityId?: string | undefined;
  authenticatorId?: string | undefined;
}

/** The only error type the model throws; it carries its wire code, status and cause. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errorCause: ErrorCause | null | undefined;
  readonly causeMessage: string | undefined;
  readonly urlVars: Record<string, string> | undefined;
  readonly data: unknown;
  readonly retryAfterSeconds: number | undefined;
  readonly audit: AuditNote | undefined;

  constructor(code: ErrorCode, opts: DomainErrorOptions = {}) {
    const [status, message] = ERROR_CATALOGUE[code];
    super(opts.message ?? message);
    this.name = 'DomainError';
    this.code = code;
    this.status = opts.status ?? status;
    this.errorCause = opts.cause;
    this.causeMessage = opts.causeMessage;
    this.urlVars = opts.urlVars;
    this.data = opts.data;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.audit = opts.audit;
  }
}

/** 400 COULD_NOT_VALIDATE naming one field (parity: a field cause turns INVALID_FIELD into COULD_NOT_VALIDATE, §3.1). */
export function fieldError(field: string, reason: string, value?: unknown): DomainError {
  return new DomainError('COULD_NOT_VALIDATE', {
    cause: { field, reason, value },
    causeMessage: `${field}: ${reason}`,
  });
}

export function notFound(id?: string, what?: string): DomainError {
  return new DomainError('NOT_FOUND', {
    urlVars: id !== undefined ? { id } : undefined,
    cause: what && id !== undefined ? { message: `${what} with id ${id} not found` } : null,
  });
}

export function unauthorized(): DomainError {
  return new DomainError('UNAUTHORIZED');
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
