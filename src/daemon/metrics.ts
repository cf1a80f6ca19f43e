/**
 * Prometheus metrics of one daemon (docs/decisions.md, "Metrics and health"). Each daemon has its own
 * registry, never prom-client's global one: tests run many daemons in one process. Counts that the store or
 * the access engine already keep are read at scrape time; only requests and authentications are counted as
 * they happen. Labels carry route patterns and fixed words, never ids, names or tokens.
 */
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { accessCacheStats } from '../model/access/engine.js';
import { liveSessionCounts } from '../model/counts.js';
import type { Ctx } from '../model/ctx.js';
import type { Logger } from '../model/ctx.js';
import { replicaFeedStats, type WalStatus } from '../model/store.js';
import { storeAnswers, storeKindOf } from '../model/health.js';
import { DomainError } from '../model/errors.js';
import { newId } from '../model/ids.js';
import { errorBody } from './http/errors.js';
import { baseMeta } from './http/envelope.js';
import type { ConnectionLimits } from './config.js';
import type { DeliveryHooks } from './event-delivery.js';

/** How long `/health` waits for the store before answering 503. */
export const HEALTH_TIMEOUT_MS = 2000;

const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);
const AUTH_METHODS: ReadonlySet<string> = new Set(['password', 'cert', 'ext-jwt']);
const AUTHENTICATE = /^\/edge\/(client|management)\/v1\/authenticate$/;
/** Requests no route matched (404s, bad URLs): one label, whatever their URL. */
const UNMATCHED = '(unmatched)';

export type IntegrityResult = 'ok' | 'failed';

export interface DaemonMetrics {
  registry: Registry;
  /** Counts requests, latencies and authentications of a server (its hooks). */
  instrument(app: FastifyInstance): void;
  /**
   * Records the outcome of a store integrity check: the start-up quick_check, then every data-integrity scan
   * (`findings`: how many it reported; ok means none remained unfixed).
   */
  recordIntegrityCheck(result: IntegrityResult, at?: Date, findings?: number): void;
  /** Counts what event delivery did: events delivered and dropped, batches given up, per sink. */
  eventDelivery: DeliveryHooks;
  /** The Prometheus text exposition and its content type. */
  scrape(): Promise<{ contentType: string; text: string }>;
}

export interface MetricsOptions {
  ctx: Ctx;
  /** The store's database file; its `-wal` file is measured beside it. */
  storeFile: string;
  /** The size of a store that is not a file (PostgreSQL's database), read per scrape instead. */
  storeSize?: () => Promise<number>;
  /** The write-ahead log's checkpointing state, when a background checkpointer runs. */
  wal?: () => WalStatus | undefined;
  /** Commits of the store's shared transactions and the transactions they held. */
  commits?: () => { batches: number; members: number };
  /** How far behind each event sink is, read from the store at scrape time. */
  eventSinkLag?: () => Promise<{ sink: string; events: number; seconds: number }[]>;
}

export function createMetrics(opts: MetricsOptions): DaemonMetrics {
  const registry = new Registry();
  // Process metrics (CPU, memory, handles, GC) and the event-loop lag, under their usual names.
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'edgectl_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'edgectl_http_request_duration_seconds',
    help: 'Time from the request arriving to the answer being sent, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const authentications = new Counter({
    name: 'edgectl_authentications_total',
    help: 'POST /authenticate answers, by method and result (success, failure, rate_limited)',
    labelNames: ['method', 'result'] as const,
    registers: [registry],
  });
  // Both gauges share one count per scrape (the registry collects all metrics at once). A store that does not
  // answer makes both NaN (a stale or zero count would mislead); the rest of the scrape still answers, and
  // /health says what is wrong.
  let counting: Promise<{ apiSessions: number; sessions: number }> | undefined;
  const sessionCounts = () =>
    (counting ??= liveSessionCounts(opts.ctx)
      .catch(() => ({ apiSessions: NaN, sessions: NaN }))
      .finally(() => (counting = undefined)));
  new Gauge({
    name: 'edgectl_api_sessions',
    help: 'API sessions in the store (expired ones leave at the next sweep); NaN while the store does not answer',
    registers: [registry],
    async collect() {
      this.set((await sessionCounts()).apiSessions);
    },
  });
  new Gauge({
    name: 'edgectl_sessions',
    help: 'Sessions (service dial/bind) in the store; NaN while the store does not answer',
    registers: [registry],
    async collect() {
      this.set((await sessionCounts()).sessions);
    },
  });

  // The access engine counts its own lookups; the counters here follow it by the difference since the last scrape.
  const seen = new Map<string, { hits: number; misses: number }>();
  const cacheDeltas = (cache: string, hits: number, misses: number) => {
    const last = seen.get(cache) ?? { hits: 0, misses: 0 };
    seen.set(cache, { hits, misses });
    return { hits: Math.max(0, hits - last.hits), misses: Math.max(0, misses - last.misses) };
  };
  // Read once per scrape by the first of the three cache metrics: its collect is synchronous, so it runs
  // before the registry reads the other two (collects start in registration order).
  const cacheHits: Counter<'cache'> = new Counter({
    name: 'edgectl_access_cache_hits_total',
    help: 'Access-engine lookups answered from its cache, by cache',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      for (const s of accessCacheStats(opts.ctx)) {
        const d = cacheDeltas(s.cache, s.hits, s.misses);
        cacheHits.inc({ cache: s.cache }, d.hits);
        cacheMisses.inc({ cache: s.cache }, d.misses);
        cacheEntries.set({ cache: s.cache }, s.entries);
      }
    },
  });
  const cacheMisses = new Counter({
    name: 'edgectl_access_cache_misses_total',
    help: 'Access-engine lookups computed from the store, by cache',
    labelNames: ['cache'] as const,
    registers: [registry],
  });
  const cacheEntries = new Gauge({
    name: 'edgectl_access_cache_entries',
    help: 'Entries held by each access-engine cache',
    labelNames: ['cache'] as const,
    registers: [registry],
  });

  // Other replicas' writes (PostgreSQL): the change counters read before requests, and the reads that failed
  // (each failure drops every cache). Followed by the difference since the last scrape.
  const feedSeen = { reads: 0, failures: 0 };
  new Counter({
    name: 'edgectl_store_change_reads_total',
    help: "Reads of other replicas' change counters before requests (shared by the requests waiting); PostgreSQL stores only",
    registers: [registry],
    collect() {
      const now = replicaFeedStats(opts.ctx.db);
      if (!now) return;
      this.inc(Math.max(0, now.reads - feedSeen.reads));
      feedFailures.inc(Math.max(0, now.failures - feedSeen.failures));
      Object.assign(feedSeen, now);
    },
  });
  // Registered after the reads: their collect, which runs first, sets it.
  const feedFailures = new Counter({
    name: 'edgectl_store_change_read_failures_total',
    help: "Reads of other replicas' change counters that failed (every cache dropped); PostgreSQL stores only",
    registers: [registry],
  });

  new Gauge({
    name: 'edgectl_store_size_bytes',
    help: 'Size of the store files: the database and its write-ahead log',
    labelNames: ['file'] as const,
    registers: [registry],
    async collect() {
      if (opts.storeSize) {
        this.set({ file: 'db' }, await opts.storeSize().catch(() => 0));
        return;
      }
      this.set({ file: 'db' }, fileSize(opts.storeFile));
      this.set({ file: 'wal' }, fileSize(`${opts.storeFile}-wal`));
    },
  });
  // The log's checkpointing (src/store/checkpointer.ts), read once per scrape for all five.
  let wal: WalStatus | undefined;
  new Gauge({
    name: 'edgectl_store_wal_checkpoint_lag_frames',
    help: 'Pages of the write-ahead log not yet copied into the database file at the last checkpoint pass',
    registers: [registry],
    collect() {
      wal = opts.wal?.();
      this.set(wal?.lagFrames ?? 0);
    },
  });
  new Gauge({
    name: 'edgectl_store_wal_caught_up_age_seconds',
    help: 'Seconds since a checkpoint last copied the whole write-ahead log into the database file',
    registers: [registry],
    collect() {
      this.set(wal?.caughtUpAt === undefined ? NaN : (Date.now() - wal.caughtUpAt) / 1000);
    },
  });
  /** A counter the store keeps itself, read at scrape time (absent: not reported). */
  const storeCounter = (name: string, help: string, read: () => number | undefined) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        const v = read();
        if (v !== undefined) this.inc(v);
      },
    });
  storeCounter(
    'edgectl_store_wal_written_bytes_total',
    'Bytes appended to the write-ahead log since the controller started',
    () => wal?.writtenBytes,
  );
  storeCounter(
    'edgectl_store_wal_truncations_total',
    'Times the write-ahead log was cut back to zero bytes',
    () => wal?.truncations,
  );
  storeCounter(
    'edgectl_store_write_waits_total',
    'Writes that waited for the write-ahead log to be cut (back-pressure)',
    () => wal?.writerWaits,
  );
  storeCounter(
    'edgectl_store_commits_total',
    'Commits of write transactions (each may hold several)',
    () => opts.commits?.().batches,
  );
  storeCounter(
    'edgectl_store_transactions_total',
    'Write transactions committed or rolled back alone, shared commits included',
    () => opts.commits?.().members,
  );
  const integrityOk = new Gauge({
    name: 'edgectl_store_integrity_ok',
    help: 'Whether the last store integrity check (start-up quick_check, then each data-integrity scan) passed (1) or left problems (0)',
    registers: [registry],
  });
  const integrityFindings = new Gauge({
    name: 'edgectl_store_integrity_findings',
    help: 'How many findings the last data-integrity scan reported (fixed or not)',
    registers: [registry],
  });
  const integrityAt = new Gauge({
    name: 'edgectl_store_integrity_check_timestamp_seconds',
    help: 'When the last store integrity check ran (Unix time)',
    registers: [registry],
  });

  // Event delivery (daemon/event-delivery.ts): counted by the controller that delivers; the lag is read from the
  // store, so every controller reports it. Sink names are the config's (a file path, a webhook URL without
  // credentials or query, or the name given).
  const eventsDelivered = new Counter({
    name: 'edgectl_events_delivered_total',
    help: 'Events written to a sink, by sink (a batch written again after a failure counts again)',
    labelNames: ['sink'] as const,
    registers: [registry],
  });
  const eventsDropped = new Counter({
    name: 'edgectl_events_dropped_total',
    help: 'Events a sink lost, by sink and reason (backlog: behind by more than its backlog; retention, maxEvents: pruned before delivery; undeliverable: in a batch given up)',
    labelNames: ['sink', 'reason'] as const,
    registers: [registry],
  });
  const deadLetters = new Counter({
    name: 'edgectl_event_sink_dead_letters_total',
    help: 'Batches of events a sink was given up on after its retries, by sink',
    labelNames: ['sink'] as const,
    registers: [registry],
  });
  let lagging: Promise<{ sink: string; events: number; seconds: number }[]> | undefined;
  const sinkLag = () =>
    (lagging ??= (opts.eventSinkLag?.() ?? Promise.resolve([]))
      .catch(() => [] as { sink: string; events: number; seconds: number }[])
      .finally(() => (lagging = undefined)));
  new Gauge({
    name: 'edgectl_event_sink_lag_events',
    help: 'Events recorded after the last one a sink was given (whatever its filter), by sink',
    labelNames: ['sink'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const l of await sinkLag()) this.set({ sink: l.sink }, l.events);
    },
  });
  new Gauge({
    name: 'edgectl_event_sink_lag_seconds',
    help: 'Age of the oldest event a sink has not been given yet (0: none), by sink',
    labelNames: ['sink'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const l of await sinkLag()) this.set({ sink: l.sink }, l.seconds);
    },
  });

  const routeOf = (req: FastifyRequest) => req.routeOptions.url ?? UNMATCHED;
  const methodOf = (req: FastifyRequest) => (METHODS.has(req.method) ? req.method : 'OTHER');

  return {
    registry,
    instrument(app) {
      app.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
        const route = routeOf(req);
        const method = methodOf(req);
        requests.inc({ method, route, status: String(reply.statusCode) });
        latency.observe({ method, route }, reply.elapsedTime / 1000);
        if (method === 'POST' && AUTHENTICATE.test(route)) {
          const asked = (req.query as Record<string, unknown> | undefined)?.method;
          authentications.inc({
            method: typeof asked === 'string' && AUTH_METHODS.has(asked) ? asked : 'other',
            result: reply.statusCode === 200 ? 'success' : reply.statusCode === 429 ? 'rate_limited' : 'failure',
          });
        }
      });
    },
    recordIntegrityCheck(result, at = new Date(), findings = 0) {
      integrityOk.set(result === 'ok' ? 1 : 0);
      integrityFindings.set(findings);
      integrityAt.set(at.getTime() / 1000);
    },
    eventDelivery: {
      delivered: (sink, count) => eventsDelivered.inc({ sink }, count),
      dropped: (sink, count, reason) => eventsDropped.inc({ sink, reason }, count),
      deadLettered: (sink) => deadLetters.inc({ sink }),
    },
    async scrape() {
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
  };
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // no -wal file between checkpoints
  }
}

/**
 * The `/health` answer: 200 `{status:"ok", store:"sqlite"|"postgres"}` while the store answers, 503 with the
 * error envelope (naming the store's engine) otherwise, so a balancer takes the controller out while its
 * database is unreachable.
 */
export async function healthAnswer(ctx: Ctx, requestId: string): Promise<{ status: number; body: unknown }> {
  const store = storeKindOf(ctx);
  if (await storeAnswers(ctx, HEALTH_TIMEOUT_MS))
    return { status: 200, body: { data: { status: 'ok', store }, meta: baseMeta() } };
  const engine = store === 'postgres' ? 'PostgreSQL' : 'SQLite';
  const error = new DomainError('TIMEOUT', { message: `The store (${engine}) is not answering` });
  return { status: error.status, body: errorBody(error, requestId) };
}

/** Serves `/metrics` and `/health` on the main listener's Fastify instance. */
export function registerHealthRoute(app: FastifyInstance, ctx: Ctx): void {
  app.get('/health', async (req, reply) => {
    const answer = await healthAnswer(ctx, String(req.id));
    return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
  });
}

export function registerMetricsRoute(app: FastifyInstance, metrics: DaemonMetrics): void {
  app.get('/metrics', async (_req, reply) => {
    const { contentType, text } = await metrics.scrape();
    return reply.type(contentType).send(text);
  });
}

/**
 * The separate plain-HTTP listener (`metrics.listen`): `GET /metrics` and `GET /health`, nothing else. It
 * carries no credentials, so plain HTTP; it should listen on a private address.
 */
export async function startMetricsListener(
  metrics: DaemonMetrics,
  ctx: Ctx,
  log: Logger,
  at: { host: string; port: number },
  limits: ConnectionLimits,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const json = 'application/json; charset=utf-8';
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const requestId = newId(12);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, 405, json, JSON.stringify(errorBody(new DomainError('METHOD_NOT_ALLOWED'), requestId)));
    }
    if (path === '/metrics') {
      const { contentType, text } = await metrics.scrape();
      return send(res, 200, contentType, text);
    }
    if (path === '/health') {
      const answer = await healthAnswer(ctx, requestId);
      return send(res, answer.status, json, JSON.stringify(answer.body));
    }
    send(res, 404, json, JSON.stringify(errorBody(new DomainError('NOT_FOUND'), requestId)));
  };
  const server = createServer(
    { headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs },
    (req, res) => {
      // Requests here have no body worth reading; drain whatever arrives so the connection can answer.
      req.resume();
      handle(req, res).catch((err: unknown) => {
        log.error({ err }, 'metrics listener request failed');
        if (!res.headersSent) send(res, 500, json, JSON.stringify(errorBody(new DomainError('UNHANDLED'), newId(12))));
        else res.destroy();
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : at.port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
