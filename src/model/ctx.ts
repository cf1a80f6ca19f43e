/**
 * The context every model service takes explicitly: store handle, clock, settings and logger.
 * No singletons: the daemon builds one Ctx per server, the offline CLI one per command, tests their own.
 */
import type { Executor } from '../store/db.js';
import type { PkiCapability } from './pki.js';
import type { TokenMinter } from './tokens.js';
import type { ExtJwtState } from './services/ext-jwt/ext-jwt-keys.js';

export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

export interface Settings {
  /** API session idle timeout in milliseconds (edge.api.sessionTimeout). */
  sessionTimeoutMs: number;
  /** Enrollment durations in milliseconds (edge.enrollment.*.duration). */
  identityEnrollmentDurationMs: number;
  routerEnrollmentDurationMs: number;
  /** Issuer named in TOTP provisioning URLs (edge.totp.issuer; default `edgectl`). */
  totpIssuer?: string;
}

export interface Ctx {
  db: Executor;
  now(): Date;
  settings: Settings;
  log: Logger;
  /** Signing and verification by the controller's PKI; absent where no PKI is loaded (see model/pki.ts). */
  pki?: PkiCapability;
  /** Derives the API-session, session and enrollment tokens the store keeps only as hashes (model/tokens.ts). */
  tokens: TokenMinter;
  /** JWKS keys and recently verified external JWTs; absent where nothing verifies them (ext-jwt-keys.ts). */
  extJwt?: ExtJwtState;
}

/** The same context bound to another executor (used to run a service inside a transaction). */
export const withDb = (ctx: Ctx, db: Executor): Ctx => ({ ...ctx, db });

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/** ISO-8601 UTC with milliseconds: the one timestamp format of the store and the wire. */
export const iso = (d: Date): string => d.toISOString();
