import type { DatabaseOps } from '../model/integrity/run.js';
import type { AuthLimiter } from './auth-limiter.js';
import type { IssuanceLimiter } from './issuance-limiter.js';
import type { EventStreams } from './event-stream.js';

/** What the routes need from the running daemon besides the model context. */
export interface DaemonDeps {
  /** The controller's CA bundle (PEM) and the same as base64 PKCS#7 certs-only, for `/.well-known/est/cacerts`. */
  caBundlePem: string;
  caBundlePkcs7: string;
  /** Base URL clients use to reach this controller, e.g. `https://127.0.0.1:1280`. */
  advertisedUrl: string;
  /** This controller's id in the registry, once it is registered (controller-presence.ts). */
  controllerId?: string;
  startedAt: Date;
  version: string;
  /** Rate limits of authentication and self-service password changes. */
  authLimiter: AuthLimiter;
  /** Rate limits of certificates signed for a logged-in caller (API-session certificates, extension). */
  issuanceLimiter: IssuanceLimiter;
  /** The integrity scan and fix, and online snapshots of the store (routes/database.ts). */
  database: DatabaseOps;
  /** The live event streams open on this controller (routes/events.ts), ended when it stops. */
  eventStreams: EventStreams;
}
