/**
 * The controller without a listener, for admin commands run with `--data-dir` against a stopped controller's
 * store: the same app (routes, validation, error envelope) as `serve`, reached with `inject()` as the default
 * admin. No sweeper, listener or metrics run (docs/decisions.md, "Offline CLI").
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { userInfo } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { inspectPostgresStore, inspectStoreFile, migrationNames, newerStore } from '../model/store.js';
import { reconcileTokens } from '../model/services/enrollment/token-reconcile.js';
import { closeDefaultAdminSession, openDefaultAdminSession } from '../model/services/api-session/offline-session.js';
import type { DatabaseOps } from '../model/integrity/run.js';
import type { EventActor } from '../model/ctx.js';
import { loadConfig, type DaemonConfig } from './config.js';
import { buildControllerApp, openControllerCore, type ControllerCore, type CoreOptions } from './controller.js';
import { createLogger } from './log.js';
import { STORE_FILE } from './store-check.js';

/** A refusal the CLI prints as is (exit 1). */
export class OfflineRefused extends Error {}

export interface InjectedResponse {
  status: number;
  contentType: string;
  text: string;
}

export interface OfflineController {
  dataDir: string;
  /** One request below the root (`/edge/management/v1/...`), as the default admin. */
  request(method: string, url: string, payload?: string, headers?: Record<string, string>): Promise<InjectedResponse>;
  close(): Promise<void>;
}

const urlHost = (h: string) => (h.includes(':') ? `[${h}]` : h);

/**
 * Whether `dataDir` holds a store this version can run as it is: present, an edgectl store, written by no newer
 * version, with no migration pending (an offline read never changes the schema; `edgectl db migrate` does).
 */
export function checkOfflineStore(dataDir: string): string {
  const file = join(dataDir, STORE_FILE);
  if (!existsSync(file))
    throw new OfflineRefused(
      `error: no store in ${dataDir} (no ${STORE_FILE}): --data-dir names a controller's data dir`,
    );
  let summary;
  try {
    summary = inspectStoreFile(file, migrationNames);
  } catch (e) {
    throw new OfflineRefused(`error: ${(e as Error).message}; check it with \`edgectl db check-integrity\``);
  }
  if (summary.unknown.length > 0)
    throw new OfflineRefused(
      `error: the store ${file} was written by a newer edgectl (unknown migrations: ${summary.unknown.join(', ')})`,
    );
  if (summary.pending.length > 0)
    throw new OfflineRefused(
      `error: the store ${file} needs migrations (${summary.pending.join(', ')}): run \`edgectl db migrate --data-dir ${dataDir}\` first`,
    );
  return file;
}

/**
 * The same for a PostgreSQL store: reachable, holding an edgectl store (at least one migration applied), none
 * unknown, none pending. Answers the URL with its password hidden.
 */
export async function checkOfflinePostgres(url: string): Promise<string> {
  let s;
  try {
    s = await inspectPostgresStore(url, migrationNames);
  } catch (e) {
    throw new OfflineRefused(`error: ${(e as Error).message}`);
  }
  if (s.applied.length === 0)
    throw new OfflineRefused(
      `error: the PostgreSQL store ${s.location} holds no edgectl store yet: run \`edgectl db migrate --db URL\` or start a controller on it`,
    );
  if (s.unknown.length > 0) throw new OfflineRefused(`error: ${newerStore(s).message}`);
  if (s.pending.length > 0)
    throw new OfflineRefused(
      `error: the PostgreSQL store ${s.location} needs migrations (${s.pending.join(', ')}): run \`edgectl db migrate --db URL\` first`,
    );
  return s.location;
}

/** Says who holds the lock and what to do, instead of the bare lock error. */
export function lockRefusal(e: unknown): Error {
  const message = (e as Error).message ?? String(e);
  if (!/in use by /.test(message)) return e as Error;
  return new OfflineRefused(
    `error: ${message}: a running controller (or another offline command) owns this store; stop it first, or run the command online (without --data-dir)`,
  );
}

/**
 * The data dir and the store an offline command works on, as `serve` would choose them from the same flags,
 * environment and config file: `--db`, else `$EDGECTL_DB_URL`, else `store.url` names a PostgreSQL store,
 * else it is the SQLite file in the data dir.
 */
export function offlineSettings(flags: { dataDir?: string; db?: string }, env: NodeJS.ProcessEnv): DaemonConfig {
  try {
    return loadConfig({ flags: { ...flags, logLevel: 'silent' }, env });
  } catch (e) {
    throw new OfflineRefused(`error: ${(e as Error).message}`);
  }
}

/** The stopped controller's core on `dir`, with the settings `serve` would read from the environment. */
async function openOfflineCore(
  dir: string,
  env: NodeJS.ProcessEnv,
  opts: Pick<CoreOptions, 'schemaDifferencesAllowed'> & { db?: string } = {},
): Promise<{ dataDir: string; cfg: DaemonConfig; core: ControllerCore; log: Logger }> {
  const dataDir = resolve(dir);
  const { db, ...coreOpts } = opts;
  const cfg = offlineSettings({ dataDir, ...(db !== undefined && { db }) }, env);
  // A PostgreSQL store's controller still keeps its PKI in its data dir: it must be one already.
  if (cfg.storeUrl && !existsSync(dataDir))
    throw new OfflineRefused(`error: there is no data dir ${dataDir}: --data-dir names a controller's data dir`);
  const storeUrl = cfg.storeUrl;
  const log = createLogger('silent');
  try {
    return {
      dataDir,
      cfg,
      log,
      core: await openControllerCore(cfg, {
        log,
        locked: async () => {
          if (storeUrl) await checkOfflinePostgres(storeUrl);
          else checkOfflineStore(dataDir);
        },
        ...coreOpts,
      }),
    };
  } catch (e) {
    throw lockRefusal(e);
  }
}

export interface OfflineIntegrity {
  /** The stopped controller's own database operations (the scan and fix of the Management API). */
  database: DatabaseOps;
  /** Where the store is: its file, or its database's URL with the password hidden. */
  location: string;
  /** Who runs it, for its event: the offline CLI and the operating-system user. */
  actor: EventActor;
  close(): Promise<void>;
}

/** The author of the offline CLI's own operations, as their events name it. */
export function offlineActor(): EventActor {
  let osUser = 'unknown';
  try {
    osUser = userInfo().username;
  } catch {
    // No user entry for this uid (a container): named as unknown.
  }
  return { source: { type: 'offline', osUser } };
}

/**
 * The data-integrity scan of a stopped controller's store, in-process, holding the data dir's lock. Unlike the
 * other offline commands it neither builds the app nor opens a session: nothing is written before the scan, so
 * a foreign trigger in the store runs on nothing, and the store is opened even when its schema objects differ
 * from the migrations (the scan reports them, the fix removes or recreates them first).
 */
export async function openOfflineIntegrity(
  dir: string,
  env: NodeJS.ProcessEnv,
  db?: string,
): Promise<OfflineIntegrity> {
  const { core } = await openOfflineCore(dir, env, { schemaDifferencesAllowed: true, ...(db !== undefined && { db }) });
  return {
    database: core.deps.database,
    location: core.store.location,
    actor: offlineActor(),
    close: () => core.close(),
  };
}

/**
 * Opens the controller on `dataDir` for in-process requests: the data dir's lock for as long as it is open, the
 * PKI, token key and store with the start-up checks, the settings `serve` would read from the environment
 * (`$EDGECTL_CONFIG`, `$EDGECTL_ADVERTISE`…: the advertised URL is the issuer of enrollment JWTs).
 */
export async function openOfflineController(dir: string, env: NodeJS.ProcessEnv): Promise<OfflineController> {
  const { dataDir, cfg, core, log } = await openOfflineCore(dir, env);
  let app: FastifyInstance | undefined;
  let sessionId: string | undefined;
  try {
    core.setAdvertisedUrl(`https://${urlHost(cfg.advertisedHost)}:${cfg.advertisedPort ?? cfg.port}`);
    // As at a controller's start: stored tokens the key cannot show again are re-keyed or ended.
    await reconcileTokens(core.ctx);
    const session = await openDefaultAdminSession(core.ctx);
    sessionId = session.id;
    const built = buildControllerApp(cfg, core, { logger: log, eventSource: 'offline' });
    app = built;
    await built.ready();
    let closing: Promise<void> | undefined;
    return {
      dataDir,
      async request(method, url, payload, headers = {}) {
        const res = await built.inject({
          method: method as 'GET',
          url,
          payload,
          headers: { 'zt-session': session.token, ...headers },
        });
        return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: res.body };
      },
      close() {
        closing ??= (async () => {
          try {
            await closeDefaultAdminSession(core.ctx, session.id);
            await built.close();
          } finally {
            await core.close();
          }
        })();
        return closing;
      },
    };
  } catch (e) {
    if (sessionId) await closeDefaultAdminSession(core.ctx, sessionId).catch(() => {});
    await app?.close().catch(() => {});
    await core.close();
    throw e;
  }
}
