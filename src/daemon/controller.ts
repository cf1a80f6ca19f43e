/**
 * What `edgectl serve` and the offline CLI (`--data-dir`) share: the locked data dir, the PKI, the token key, the
 * store opened with the start-up checks, the model context and the Fastify app with every route. The daemon
 * then listens and starts its sweepers; the offline CLI only injects requests (docs/decisions.md, "Offline CLI").
 *
 * Where the PKI and the token key live depends on the store: files in the data dir beside a SQLite store; in a
 * PostgreSQL store, sealed under the master key, shared by every controller on that database
 * (model/controller-secrets.ts; docs/decisions.md, "Shared controller secrets").
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import { loadOrCreateControllerPki, PKI_FILES, writeCaBundle, type ControllerPki } from '../pki/ca.js';
import { acquireLock, checkSchemaObjects, knownMigrations, openStore, type OpenedStore } from '../model/store.js';
import type { Ctx } from '../model/ctx.js';
import type { PasswordCost } from '../model/password.js';
import { tokenMinter } from '../model/tokens.js';
import { loadOrCreateSharedSecrets } from '../model/controller-secrets.js';
import { loadOrCreateTokenKey, TOKEN_KEY_FILE } from './token-key.js';
import { MISSING_MASTER_KEY, type DaemonConfig } from './config.js';
import { buildServer, type TlsMaterial } from './server.js';
import type { BodyValidators } from './http/validators.js';
import { listenerCaPem } from './listener-trust.js';
import { pkiCapability } from './pki-capability.js';
import type { DaemonDeps } from './deps.js';
import { EventStreams } from './event-stream.js';
import { AuthLimiter } from './auth-limiter.js';
import { IssuanceLimiter } from './issuance-limiter.js';
import { STORE_FILE } from './store-check.js';
import type { DaemonMetrics } from './metrics.js';
import { VERSION } from '../version.js';
import { DatabaseOps } from '../model/integrity/run.js';
import { ExtJwtState } from '../model/services/ext-jwt/ext-jwt-keys.js';
import { RESOURCE_HOOKS } from '../model/services/hooks/index.js';

export interface ControllerCore {
  pki: ControllerPki;
  store: OpenedStore;
  ctx: Ctx;
  deps: DaemonDeps;
  tls: TlsMaterial;
  /** Sets the URL clients are given (JWT issuer, `/version`); the daemon knows it once its port is bound. */
  setAdvertisedUrl(url: string): void;
  /** What runs when the trusted CAs change (the daemon refreshes its listener's trust). */
  onTrustChanged(fn: () => void): void;
  /** Told after each completed integrity scan (the daemon feeds its metrics). */
  onIntegrityScan(fn: (ok: boolean, findings: number, at: Date) => void): void;
  /** Closes the store and releases the data dir's lock. */
  close(): Promise<void>;
}

/** How often the background checkpointer looks at the write-ahead log (src/store/checkpointer.ts). */
const CHECKPOINT_INTERVAL_MS = 1000;

export interface CoreOptions {
  log: PinoLogger;
  now?: () => Date;
  /** Runs once the lock is held, before anything in the data dir is read or written (the offline CLI's checks). */
  locked?: () => void | Promise<void>;
  /** Runs once the store is open and the context exists, before anything else (e.g. the default admin). */
  prepare?: (ctx: Ctx) => Promise<void>;
  /**
   * Opens a store whose schema objects differ from what its migrations create, which a start refuses: only
   * for the offline data-integrity scan, which reports them and whose fix repairs them before anything else.
   */
  schemaDifferencesAllowed?: boolean;
  /** Argon2id's cost for new password hashes (`Settings.passwordCost`); tests only, production's when absent. */
  passwordCost?: PasswordCost;
}

interface Secrets {
  pki: ControllerPki;
  tokenKey: { key: Buffer; created: boolean };
}

const serverHosts = (cfg: DaemonConfig): string[] => [cfg.host, cfg.advertisedHost];

/** The PKI and the token key of a controller of its own: files in its data dir. */
async function fileSecrets(cfg: DaemonConfig, log: PinoLogger): Promise<Secrets> {
  if (cfg.masterKey !== undefined)
    log.info('a master key was given, but the store is SQLite: the PKI and the token key stay in the data dir');
  const pki = await loadOrCreateControllerPki(join(cfg.dataDir, 'pki'), { hosts: serverHosts(cfg) });
  return { pki, tokenKey: loadOrCreateTokenKey(cfg.dataDir) };
}

/** The PKI and the token key shared by the controllers of a PostgreSQL store, created by the first one. */
async function storeSecrets(cfg: DaemonConfig, store: OpenedStore, log: PinoLogger): Promise<Secrets> {
  const shared = await loadOrCreateSharedSecrets(store.db, cfg.masterKey!, {
    hosts: serverHosts(cfg),
    where: `the PostgreSQL store ${store.location}`,
  });
  const pkiDir = join(cfg.dataDir, 'pki');
  // The CA bundle is public: kept in the data dir as beside a SQLite store, for operators' `curl --cacert`.
  writeCaBundle(pkiDir, shared.pki.caBundlePem);
  if (existsSync(join(pkiDir, PKI_FILES.rootKey)) || existsSync(join(cfg.dataDir, TOKEN_KEY_FILE)))
    log.warn(
      { dir: cfg.dataDir },
      'the data dir holds a PKI or token key of its own, which a PostgreSQL store does not use: the controller ' +
        'uses the ones in the database (`edgectl pki export` and `edgectl pki import` move them there)',
    );
  return { pki: shared.pki, tokenKey: { key: shared.tokenKey, created: shared.tokenKeyCreated } };
}

/**
 * Takes the data dir's lock, then loads the PKI and the token key and opens the store with the start-up checks
 * (`verify`: quick_check, migrations, tables and columns; then every schema object against the migrations).
 * Everything opened is closed again if a later step fails.
 */
export async function openControllerCore(cfg: DaemonConfig, opts: CoreOptions): Promise<ControllerCore> {
  const { log } = opts;
  const release = acquireLock(cfg.dataDir, join(cfg.dataDir, STORE_FILE));
  let store: OpenedStore | undefined;
  try {
    await opts.locked?.();
    // Beside a SQLite store, from the data dir before the store opens (as ever); a PostgreSQL store holds them.
    const fromFiles = cfg.storeUrl === undefined ? await fileSecrets(cfg, log) : undefined;
    // Checked before the database is touched (loadConfig checks it too; a config made in code may not have).
    if (cfg.storeUrl !== undefined && cfg.masterKey === undefined) throw new Error(MISSING_MASTER_KEY);
    store = await openStore(cfg.storeUrl ?? join(cfg.dataDir, STORE_FILE), {
      verify: true,
      backgroundCheckpoints: true,
      checkpointLimits: { restartBytes: cfg.walRestartBytes, intervalMs: CHECKPOINT_INTERVAL_MS },
    });
    // One line per start that migrated (with replicas starting together, exactly one of them does).
    if (store.applied.length > 0)
      log.info({ store: store.location, migrations: store.applied }, `store migrated: ${store.applied.length} applied`);
    const { pki, tokenKey } = fromFiles ?? (await storeSecrets(cfg, store, log));
    log.info({ where: pki.dir, changes: pki.changes }, 'controller PKI ready');
    if (tokenKey.created) log.info('token key created');
    // Before the controller writes anything: a foreign trigger would run with its first write.
    if (!opts.schemaDifferencesAllowed && store.kind === 'sqlite')
      await checkSchemaObjects(store.raw, join(cfg.dataDir, STORE_FILE), knownMigrations);
    let advertisedUrl = '';
    let trustChanged: () => void = () => {};
    let scanDone: (ok: boolean, findings: number, at: Date) => void = () => {};
    const ctx: Ctx = {
      db: store.db,
      now: opts.now ?? (() => new Date()),
      settings: {
        sessionTimeoutMs: cfg.sessionTimeoutMs,
        identityEnrollmentDurationMs: cfg.identityEnrollmentDurationMs,
        routerEnrollmentDurationMs: cfg.routerEnrollmentDurationMs,
        totpIssuer: cfg.totpIssuer,
        oidc: cfg.oidc,
        ...(opts.passwordCost && { passwordCost: opts.passwordCost }),
      },
      log,
      pki: pkiCapability(
        pki,
        () => advertisedUrl,
        () => trustChanged(),
      ),
      tokens: tokenMinter(tokenKey.key),
      extJwt: new ExtJwtState(),
      hooks: RESOURCE_HOOKS,
    };
    await opts.prepare?.(ctx);
    const deps: DaemonDeps = {
      caBundlePem: pki.caBundlePem,
      caBundlePkcs7: pki.caBundlePkcs7Base64(),
      advertisedUrl: '',
      startedAt: new Date(),
      version: VERSION,
      authLimiter: new AuthLimiter(cfg.authRateLimit),
      issuanceLimiter: new IssuanceLimiter(cfg.certRateLimit),
      eventStreams: new EventStreams(cfg.events.stream),
      database: new DatabaseOps({
        ctx,
        store,
        file: join(cfg.dataDir, STORE_FILE),
        onScanDone: (ok, findings, at) => scanDone(ok, findings, at),
      }),
    };
    const tls = { key: pki.serverKeyPem, cert: pki.serverCertChainPem, ca: await listenerCaPem(ctx, pki.caBundlePem) };
    const opened = store;
    let closing: Promise<void> | undefined;
    return {
      pki,
      store: opened,
      ctx,
      deps,
      tls,
      setAdvertisedUrl(url) {
        advertisedUrl = url;
        deps.advertisedUrl = url;
      },
      onTrustChanged(fn) {
        trustChanged = fn;
      },
      onIntegrityScan(fn) {
        scanDone = fn;
      },
      close() {
        closing ??= (async () => {
          trustChanged = () => {};
          try {
            deps.eventStreams.closeAll();
            // A background integrity scan still running finishes before its store closes.
            await deps.database.idle().catch(() => {});
            await opened.close();
          } finally {
            release();
          }
        })();
        return closing;
      },
    };
  } catch (e) {
    await store?.close();
    release();
    throw e;
  }
}

export interface AppOptions {
  logger: PinoLogger;
  metrics?: DaemonMetrics;
  serveMetrics?: boolean;
  eventSource?: 'rest' | 'offline';
  onSend?: onSendHookHandler;
  bodyValidators?: BodyValidators;
}

/** The Fastify app with the whole route table, validation and error envelope; it does not listen. */
export function buildControllerApp(cfg: DaemonConfig, core: ControllerCore, opts: AppOptions): FastifyInstance {
  return buildServer({
    ctx: core.ctx,
    deps: core.deps,
    tls: core.tls,
    logger: opts.logger,
    limits: cfg.limits,
    corsAllowedOrigins: cfg.corsAllowedOrigins,
    metrics: opts.metrics,
    serveMetrics: opts.serveMetrics,
    eventSource: opts.eventSource,
    onSend: opts.onSend,
    bodyValidators: opts.bodyValidators,
  }).app;
}
