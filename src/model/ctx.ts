/**
 * The context every model service takes explicitly: store handle, clock, settings, logger, and the behaviour of
 * each resource (its hooks, by resource name). No singletons: the daemon builds one Ctx per server, the offline
 * CLI one per command, tests their own. The hooks' interface is here because hooks take a Ctx and the Ctx carries
 * them: one module, so neither imports the other.
 */
import type { Executor } from '../store/db.js';
import { copyOf, type Input, type Row, type WriteMode } from './row.js';
import type { PasswordCost } from './password.js';
import type { PkiCapability } from './pki.js';
import type { TokenMinter } from './tokens.js';
import type { ExtJwtState } from './services/ext-jwt/ext-jwt-keys.js';
import type { OidcSettings } from './services/oidc/oidc-settings.js';

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
  /** The OIDC provider's token lifetimes and redirect URIs (edge.oidc.*); defaults when absent. */
  oidc?: OidcSettings;
  /**
   * Argon2id's cost for new password hashes (password.ts): PASSWORD_COST when absent. No configuration sets it;
   * the test servers pass a cheap one, so their thousands of logins and new passwords do not spend a core on it.
   */
  passwordCost?: PasswordCost;
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
  /**
   * The hooks of each resource, by resource name (the model's table is services/hooks/index.ts). Carried here
   * rather than imported by the generic CRUD because the hooks use the generic CRUD themselves.
   */
  hooks: HookTable;
  /**
   * Who asks for the work and from where, for the events it records (model/events/): set per request on the
   * writing routes, and by the offline CLI; absent for the controller's own work.
   */
  actor?: EventActor;
}

/** The author and source of a change, as its event names them (parity: the reference's entityChange `metadata`). */
export interface EventActor {
  /** The identity acting, and its API session; absent when nobody authenticated (a login, an enrollment). */
  author?: { type: 'identity'; id: string; name: string; apiSessionId: string };
  source: {
    /** `rest`: the controller's HTTP APIs; `offline`: the offline CLI on a stopped controller's store. */
    type: 'rest' | 'offline';
    /** The API the request came in on (`management`, `client`). */
    api?: string;
    auth?: 'edge';
    remoteAddr?: string;
    method?: string;
    /** The operating-system user running the offline CLI. */
    osUser?: string;
  };
}

/**
 * What the generic CRUD runs around a resource's writes, deletes and reads (resource-hooks.ts finds them). `R`
 * is the resource's record (`hooksFor` binds it to the definition); decorated rows carry more fields besides.
 */
export interface ResourceHooks<R extends Row = Row> {
  /**
   * Validates and completes the input of a write before it is stored; may throw DomainError.
   * `existing` is the stored row (rendered props) for update/patch.
   */
  prepare?(ctx: Ctx, input: Input, mode: WriteMode, existing?: R, pre?: Row): Promise<Input> | Input;
  /**
   * Work that must not run inside the write's transaction (Argon2id hashing), done on the request body before
   * the transaction opens; its result reaches `prepare` as `pre`. `id` is the record's for update/patch.
   */
  beforeTx?(ctx: Ctx, body: Input, mode: WriteMode, id?: string): Promise<Row | undefined>;
  /** Runs in the write's transaction after the row is stored. */
  afterWrite?(ctx: Ctx, id: string, mode: WriteMode, input: Input, existing?: R): Promise<void> | void;
  /**
   * `afterWrite` never changes the row it follows nor its sets, so a create's event is built from the values
   * inserted instead of reading the row again (src/model/crud.ts).
   */
  afterWriteKeepsRow?: boolean;
  /** Runs in the delete's transaction before the row is removed; may throw to refuse. */
  beforeDelete?(ctx: Ctx, row: R): Promise<void> | void;
  /** Runs once the row is gone (after the delete's transaction when it opened one): in-memory state to forget. */
  afterDelete?(ctx: Ctx, row: R): void;
  /** Extra wire fields for detail/list records, computed from a page of rows at once. */
  decorate?(ctx: Ctx, rows: (R & Row)[]): Promise<void> | void;
  /**
   * Opts the resource's list pages into being kept rendered until the next store write (rendered-pages.ts):
   * only for a resource whose records (with their decorations) depend on the store and the clock alone.
   * Answers, for a page of decorated rows, the earliest time (ms) at which the clock alone changes one of
   * them (Infinity: never).
   */
  pagesValidUntil?(rows: (R & Row)[], now: Date): number;
}

/** Resource hooks by resource name; a resource without an entry is plain data. */
export type HookTable = Readonly<Record<string, ResourceHooks>>;

/** The same context bound to another executor (used to run a service inside a transaction). */
export const withDb = (ctx: Ctx, db: Executor): Ctx => {
  const out = copyOf(ctx);
  out.db = db;
  return out;
};

/** The same context carrying the actor of a writing request. */
export const withActor = (ctx: Ctx, actor: EventActor): Ctx => {
  const out = copyOf(ctx);
  out.actor = actor;
  return out;
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/** ISO-8601 UTC with milliseconds: the one timestamp format of the store and the wire. */
export const iso = (d: Date): string => d.toISOString();
