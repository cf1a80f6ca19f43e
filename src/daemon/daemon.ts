/**
 * Starting and stopping the controller: data dir, lock, PKI, store, default admin, HTTPS listener and the
 * background sweeper of idle API sessions (run by one controller at a time among those sharing a store).
 * `edgectl serve` and the tests both go through `startDaemon`.
 */
import { writeFileSync, chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import type { Ctx, Logger } from '../model/ctx.js';
import type { PasswordCost } from '../model/password.js';
import { sweepExpiredApiSessions } from '../model/services/api-session/api-session.js';
import { sweepExpiredSessionCerts } from '../model/services/api-session/api-session-certs.js';
import { sweepOidcState } from '../model/services/oidc/revocations.js';
import { createDefaultAdmin, hasDefaultAdmin } from '../model/services/identity/default-admin.js';
import { reconcileTokens } from '../model/services/enrollment/token-reconcile.js';
import type { DaemonConfig } from './config.js';
import { buildControllerApp, openControllerCore } from './controller.js';
import { createLogger } from './log.js';
import { listenerTrustRefresher } from './listener-trust.js';
import { databaseBytes, onTablesChanged, type OpenedStore } from '../model/store.js';
import type { ControllerPki } from '../pki/ca.js';
import { STORE_FILE } from './store-check.js';
import { prepareDataDir } from './data-dir.js';
import { probeListen } from './listen-probe.js';
import { createMetrics, startMetricsListener } from './metrics.js';
import { PeriodicWork } from './periodic.js';
import { controllerSelf, loadOrCreateControllerId, startControllerPresence } from './controller-presence.js';
import { forgetOldControllers } from '../model/services/controller/registry.js';
import { controllerEvent, databaseEvent, recordOwnEvent } from '../model/events/system-events.js';
import { EventDelivery } from './event-delivery.js';
import type { BodyValidators } from './http/validators.js';

export interface AdminCredentials {
  username: string;
  password: string;
}

export interface DaemonOptions {
  /** Asked only when the store has no default admin; undefined means "generate one and write it to a file". */
  adminCredentials?: () => Promise<AdminCredentials | undefined>;
  /** Where logs go (default stdout). */
  logStream?: NodeJS.WritableStream;
  now?: () => Date;
  /** false: no periodic sweep nor event delivery (tests with a frozen clock sweep through `sweepNow`). Default true. */
  backgroundSweep?: boolean;
  /** A last look at every response before it is sent (server.ts). */
  onSend?: onSendHookHandler;
  /** Where the stdout event sink writes (default process.stdout). */
  eventStdout?: NodeJS.WritableStream;
  /** Argon2id's cost for new password hashes (`Settings.passwordCost`); tests only, production's when absent. */
  passwordCost?: PasswordCost;
  /** Compiled body validators shared with other controllers of the process (the tests'); its own when absent. */
  bodyValidators?: BodyValidators;
}

export interface RunningDaemon {
  url: string;
  port: number;
  app: FastifyInstance;
  ctx: Ctx;
  pki: ControllerPki;
  store: OpenedStore;
  log: Logger;
  /** This controller's id in the controllers registry (`GET /controllers`). */
  controllerId: string;
  /** Its heartbeat, now (tests drive time with an injected clock). */
  controllerBeat(): Promise<void>;
  /** The separate metrics listener's URL (`metrics.listen`), if any. */
  metricsUrl?: string;
  /**
   * Runs the background sweep once, now, and delivers events to the sinks (tests drive expiry with an injected
   * clock instead of waiting), if this controller runs the periodic work (./periodic.ts): whether it ran.
   */
  sweepNow(): Promise<boolean>;
  close(): Promise<void>;
}

export const ADMIN_FILE = 'default-admin.json';
export const DB_FILE = STORE_FILE;

/** How often sinks are given what is new (besides each sweep). */
const DELIVERY_EVERY_MS = 1000;

const urlHost = (h: string) => (h.includes(':') ? `[${h}]` : h);

function strongPassword(): string {
  // 24 characters from a mixed alphabet: satisfies any rule set of the default auth policy.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  const bytes = randomBytes(22);
  return (
    'Aa1!' +
    [...bytes]
      .map((b) => alphabet[b % alphabet.length])
      .join('')
      .slice(0, 20)
  );
}

export async function startDaemon(cfg: DaemonConfig, opts: DaemonOptions = {}): Promise<RunningDaemon> {
  // Checked before anything is written, so a failed start leaves no half-made data dir behind.
  await probeListen(cfg.host, cfg.port);
  prepareDataDir(cfg.dataDir);
  const log = createLogger(cfg.logLevel, opts.logStream);
  // Lock, PKI, token key, checked store, context: shared with the offline CLI (controller.ts).
  const core = await openControllerCore(cfg, {
    log,
    now: opts.now,
    passwordCost: opts.passwordCost,
    prepare: async (ctx) => {
      if (await hasDefaultAdmin(ctx)) return;
      let creds = await opts.adminCredentials?.();
      let file: string | undefined;
      if (!creds) {
        creds = { username: 'admin', password: strongPassword() };
        // Written before the admin exists, so its password is never lost to a crash in between.
        file = join(cfg.dataDir, ADMIN_FILE);
        writeFileSync(file, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
        chmodSync(file, 0o600);
      }
      if ((await createDefaultAdmin(ctx, creds.username, creds.password)) === undefined) {
        // Another controller on the same store created it meanwhile: these credentials were never used.
        if (file) rmSync(file, { force: true });
        log.info('the default admin was created by another controller sharing the store');
        return;
      }
      if (file)
        log.warn({ file }, 'default admin created; its credentials are in this file (readable by the owner only)');
      log.info({ username: creds.username }, 'default admin created');
    },
  });
  try {
    const { ctx, pki, tls } = core;
    // One controller of those sharing the store runs the periodic work (sweeps, event delivery); the others take
    // over within a round if it stops.
    const periodic = new PeriodicWork(core.store, log);
    // Metrics exist only when served somewhere (docs/decisions.md, "Metrics and health").
    const metrics =
      cfg.metrics.enabled || cfg.metrics.listen
        ? createMetrics({
            ctx,
            storeFile: join(cfg.dataDir, DB_FILE),
            ...(core.store.kind === 'postgres' && { storeSize: () => databaseBytes(ctx.db) }),
            wal: () => core.store.wal(),
            commits: () => core.store.commits(),
            eventSinkLag: (): ReturnType<EventDelivery['lag']> => delivery.lag(),
          })
        : undefined;
    const delivery: EventDelivery = new EventDelivery(cfg.events, {
      ctx,
      log,
      lead: () => periodic.lead(),
      ...(metrics && { hooks: metrics.eventDelivery }),
      ...(opts.eventStdout && { stdout: opts.eventStdout }),
    });
    core.onIntegrityScan((ok, findings, at) => metrics?.recordIntegrityCheck(ok ? 'ok' : 'failed', at, findings));
    // openStore({ verify: true }) ran quick_check just now: the first integrity result.
    metrics?.recordIntegrityCheck('ok');
    const app = buildControllerApp(cfg, core, {
      logger: log,
      metrics,
      serveMetrics: cfg.metrics.enabled,
      onSend: opts.onSend,
      bodyValidators: opts.bodyValidators,
    });
    const refreshTrust = listenerTrustRefresher(app.server as unknown as TlsServer, tls, pki.caBundlePem, ctx, log);
    core.onTrustChanged(refreshTrust);
    // Once the write has committed, wherever it was made: the listener re-reads the verified CAs.
    onTablesChanged(ctx.db, ['cas'], refreshTrust);
    await app.listen({ host: cfg.host, port: cfg.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : cfg.port;
    const url = `https://${urlHost(cfg.advertisedHost)}:${cfg.advertisedPort ?? port}`;
    // The advertised URL is only known once the port is bound (port 0 in tests).
    core.setAdvertisedUrl(url);
    // Records whose tokens the key cannot show again (migrated clear tokens, a replaced key) are re-keyed or
    // ended. After listen because re-signed JWTs name the advertised URL; its transaction holds the store's
    // only connection, so requests that touch the store wait for it.
    const reconciled = await reconcileTokens(ctx).catch(async (e: unknown) => {
      await app.close();
      throw e;
    });
    if (reconciled.enrollmentsRekeyed + reconciled.apiSessionsEnded + reconciled.sessionsEnded > 0) {
      log.warn(
        reconciled,
        'stored tokens did not match the token key: enrollments re-keyed (new tokens and JWTs), API sessions ended',
      );
    }
    // This controller in the registry (`GET /controllers`), refreshed by its heartbeat on every replica.
    const presence = await startControllerPresence(
      ctx,
      controllerSelf(loadOrCreateControllerId(cfg.dataDir), url, core.deps.version, port),
      log,
    ).catch(async (e: unknown) => {
      await app.close();
      throw e;
    });
    // The OIDC login reads this controller's settings (its redirect and post-logout URIs) by its id.
    core.deps.controllerId = presence.id;
    let metricsListener: Awaited<ReturnType<typeof startMetricsListener>> | undefined;
    if (metrics && cfg.metrics.listen) {
      metricsListener = await startMetricsListener(metrics, ctx, log, cfg.metrics.listen, cfg.limits).catch(
        async (e: unknown) => {
          await presence.close();
          await app.close();
          throw new Error(
            `metrics.listen: cannot listen on ${cfg.metrics.listen!.host}:${cfg.metrics.listen!.port}: ${(e as Error).message}`,
          );
        },
      );
    }
    const metricsUrl = metricsListener && `http://${urlHost(cfg.metrics.listen!.host)}:${metricsListener.port}`;
    if (metricsUrl) log.info({ url: metricsUrl }, 'metrics listening');
    log.info({ url, listen: `${urlHost(cfg.host)}:${port}` }, 'edgectl controller listening');
    const self = { controller_id: presence.id, url, version: core.deps.version, store: core.store.kind };
    await recordStartEvents(ctx, log, self, core.store.applied);

    const sweepEvery = Math.min(5000, Math.max(250, Math.floor(cfg.sessionTimeoutMs / 4)));
    /** `deliver`: events to the sinks too (tests' sweepNow); the background sweeps leave that to the delivery loop. */
    const sweepOnce = async (deliver: boolean): Promise<boolean> => {
      if (!(await periodic.lead())) return false;
      const sessions = await sweepExpiredApiSessions(ctx);
      if (sessions > 0) log.debug({ removed: sessions }, 'expired API sessions removed');
      const certs = await sweepExpiredSessionCerts(ctx);
      if (certs > 0) log.debug({ removed: certs }, 'expired API-session certificates removed');
      const oidc = await sweepOidcState(ctx);
      if (oidc > 0) log.debug({ removed: oidc }, 'expired OIDC requests, refresh tokens and revocations removed');
      const gone = await forgetOldControllers(ctx);
      if (gone > 0) log.info({ removed: gone }, 'controllers unseen for a week forgotten');
      // Events: delivered by this controller alone (it runs the periodic work), then pruned past retention and
      // the outbox's bound. In the background delivery runs every second on its own (event-delivery.ts), so a
      // slow sink never holds up the sweeps.
      if (deliver) await delivery.deliver();
      const pruned = await delivery.prune();
      if (pruned > 0) log.debug({ removed: pruned }, 'events past their retention or the outbox bound removed');
      return true;
    };
    let sweeping = false;
    const sweeper = setInterval(() => {
      if (sweeping || opts.backgroundSweep === false) return;
      sweeping = true;
      sweepOnce(false)
        .catch((err) => log.error({ err }, 'API session sweep failed'))
        .finally(() => (sweeping = false));
    }, sweepEvery);
    sweeper.unref();
    if (opts.backgroundSweep !== false) delivery.start(DELIVERY_EVERY_MS);

    let closing: Promise<void> | undefined;
    return {
      url,
      port,
      app,
      ctx,
      pki,
      store: core.store,
      log,
      ...(metricsUrl ? { metricsUrl } : {}),
      controllerId: presence.id,
      controllerBeat: () => presence.beat(),
      sweepNow: () => sweepOnce(true),
      close() {
        closing ??= (async () => {
          clearInterval(sweeper);
          await delivery.close();
          await periodic.close();
          await presence.close();
          await metricsListener?.close();
          // Live event streams never end on their own: ended first, so the listener can close.
          core.deps.eventStreams.closeAll();
          await app.close();
          // After the last request, before the store closes; never holds the stop up (recordStopEvent).
          await recordStopEvent(ctx, log, self);
          await core.close();
          log.info('edgectl controller stopped');
          log.flush?.();
        })();
        return closing;
      },
    };
  } catch (e) {
    await core.close();
    throw e;
  }
}

/**
 * The controller's `started` event, once it listens (and the online `migrate` event of the migrations this start
 * applied). One that cannot be written is logged: the controller serves anyway.
 */
async function recordStartEvents(
  ctx: Ctx,
  log: Logger,
  self: Record<string, unknown>,
  applied: readonly string[],
): Promise<void> {
  try {
    if (applied.length > 0) await recordOwnEvent(ctx, databaseEvent('migrate', undefined, { applied: [...applied] }));
    await recordOwnEvent(ctx, controllerEvent('started', self));
  } catch (err) {
    log.warn({ err }, 'the controller start could not be recorded as an event');
  }
}

/** How long a stop waits for its event to be written before it closes the store anyway. */
const STOP_EVENT_WAIT_MS = 2000;

/**
 * The controller's `stopped` event, written before the store closes. A store that does not answer (a PostgreSQL
 * server gone) must not hold the stop: after STOP_EVENT_WAIT_MS the stop goes on without it, logged.
 */
async function recordStopEvent(ctx: Ctx, log: Logger, self: Record<string, unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const written = recordOwnEvent(ctx, controllerEvent('stopped', self)).then(
    () => true,
    (err: unknown) => {
      log.warn({ err }, 'the controller stop could not be recorded as an event');
      return true;
    },
  );
  const waited = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), STOP_EVENT_WAIT_MS);
    timer.unref();
  });
  if (!(await Promise.race([written, waited])))
    log.warn('the controller stop was not recorded in time; stopping anyway');
  clearTimeout(timer);
}
