/**
 * The controller's PKI: its CAs and server certificate on disk, signing of client / router / API-session
 * certificates from CSRs, certificate parsing and chain verification, the PKCS#7 CA bundle, enrollment JWTs, and
 * key + CSR generation for the CLI.
 *
 * A leaf module: no HTTP, no database, no imports from other `src` folders. Errors are {@link PkiError}s whose
 * `reason` callers map to wire error codes.
 */
export { PkiError, isPkiError } from './errors.js';
export type { PkiErrorReason } from './errors.js';

export { decodePemBlocks, decodeFirstPemBlock, decodePemBlocksOfType, encodePem, joinPem } from './pem.js';
export type { PemBlock } from './pem.js';

export { certificateFingerprint, fingerprintDer } from './fingerprint.js';

export {
  CERTIFICATE_PEM_TYPES,
  certificateCoversHost,
  isWithinValidity,
  normalizeHost,
  parseCertificate,
  parseCertificateDer,
  parseCertificates,
} from './certificate.js';
export type { CertificateInput, ParsedCertificate, SubjectAltNames } from './certificate.js';

export {
  KEY_TYPES,
  assertAcceptableKey,
  describeKey,
  generateKeyPair,
  jwsAlgorithmFor,
  keyLabel,
  keysMatch,
  parsePrivateKeyPem,
  privateKeyToPem,
} from './keys.js';
export type { GeneratedKeyPair, JwsAlgorithm, KeyDescription, KeyType } from './keys.js';

export { isIssuedBy, verifyChain } from './verify.js';
export type { ChainVerification, VerifyChainOptions } from './verify.js';

export {
  PKCS7_MIME_TYPE,
  base64Lines,
  caBundlePkcs7Base64,
  certsOnlyPkcs7Der,
  parsePkcs7Certificates,
} from './pkcs7.js';

export { CSR_PEM_TYPES, generateKeyAndCsr, parseAndVerifyCsr, parseCsr, verifyCsrSignature } from './csr.js';
export { MAX_CSR_BYTES, MAX_CSR_SANS, countRequestedSans } from './csr-bounds.js';
export type { GenerateKeyAndCsrOptions, KeyAndCsr, ParsedCsr } from './csr.js';

export {
  CertificateAuthority,
  ExtendedKeyUsage,
  KeyUsage,
  createSelfSignedCa,
  randomSerialNumber,
} from './authority.js';
export type { DistinguishedName, IssueParams, SanRequest } from './authority.js';

export {
  CLIENT_CERT_VALIDITY_MS,
  CLOCK_SKEW_MS,
  DEFAULT_TRUST_DOMAIN,
  SESSION_CERT_VALIDITY_MS,
  issueControllerServerCertificate,
  signClientCsr,
  signServerCsr,
  signSessionCsr,
  spiffeId,
} from './sign.js';
export type {
  ClientCertificateOptions,
  IssuedCertificate,
  ServerCertificateOptions,
  SessionCertificateOptions,
  SubjectKind,
} from './sign.js';

export { signEnrollmentJwt, verifyEnrollmentJwt } from './jwt.js';
export { certificateJwk, jwsSignature, type PublicJwk } from './enrollment-keys.js';
export { controllerJwk, controllerJwtKey, signControllerJwt, verifyControllerJwt } from './jwt.js';
export type {
  ControllerJwtKey,
  EnrollmentClaims,
  EnrollmentJwtInput,
  EnrollmentMethod,
  JwtSigner,
  VerifyEnrollmentJwtOptions,
} from './jwt.js';

export {
  ControllerPki,
  DEFAULT_SERVER_HOSTS,
  INTERMEDIATE_RENEW_BEFORE_MS,
  INTERMEDIATE_VALIDITY_MS,
  PKI_FILES,
  ROOT_VALIDITY_MS,
  SERVER_RENEW_BEFORE_MS,
  SERVER_VALIDITY_MS,
  PKI_ITEMS,
  PkiMemory,
  isKeyItem,
  loadOrCreateControllerPki,
  loadOrCreateControllerPkiIn,
  serverHostsFor,
  writeCaBundle,
} from './ca.js';
export type { ControllerPkiChanges, ControllerPkiOptions, PkiItem, PkiStorage } from './ca.js';

export { MASTER_KEY_MIN_LENGTH, MasterKey, SealError, newSalt, saltOf, seal, unseal } from './master-key.js';
export type { ScryptParams } from './master-key.js';
