/**
 * The `events` section of the config file (docs/events.md): how long recorded events are kept and how many
 * (`events.retention`, `events.maxEvents`), how far a sink may fall behind (`events.backlog`, per sink too), and
 * where they are delivered (`events.sinks`: JSON-lines files, stdout, HTTPS webhooks), each sink with its
 * own filter.
 *
 * ```yaml
 * events:
 *   retention: 30d
 *   maxEvents: 1000000          # the outbox's bound: the oldest go first past it
 *   backlog: 100000             # undelivered events a sink may have before the oldest are dropped
 *   sinks:
 *     - type: file
 *       path: /var/log/edgectl/events.jsonl
 *       namespaces: [entityChange, authentication]   # default: every namespace
 *       types: [authentication.fail, entityChange]   # namespace or namespace.eventType (default: all)
 *       maxSizeMiB: 100                              # rotated past this size (default 100)
 *       maxAge: 24h                                  # and once the file is this old (default: never)
 *       maxFiles: 5                                  # rotated files kept besides the current one (default 5)
 *     - type: stdout
 *     - type: webhook
 *       url: https://siem.example.com/edgectl
 *       secretFile: /etc/edgectl/webhook.secret      # or secret: "…"; signs each batch (HMAC-SHA256)
 *       caFile: /etc/edgectl/siem-ca.pem             # default: the system's roots
 *   stream:                     # the live stream (GET /events/stream): its bounds
 *     maxClients: 32            # streams open at once on this controller; more are refused (429)
 *     bufferKiB: 256            # unsent bytes a stream may have before it waits for its reader
 *     writeTimeout: 10s         # a reader that leaves the buffer full this long is disconnected
 *     heartbeat: 15s            # a comment line on an idle stream this often
 *     pollInterval: 500ms       # how often a caught-up stream looks for new events
 *     batchSize: 100            # events read from the store at a time
 * ```
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDays } from '../model/events/since.js';
import { EVENT_NAMESPACES } from '../model/events/event.js';

/** What every sink has: its cursor's name and its filter. */
export interface SinkBase {
  /** The sink's name: its delivery cursor's key in the store and its metrics label. */
  name: string;
  /** Namespaces delivered (undefined: all). */
  namespaces?: readonly string[];
  /** `namespace` or `namespace.eventType` entries delivered (undefined: all). */
  types?: readonly string[];
  /** Undelivered events it may have before the oldest are dropped. */
  backlog: number;
}

export interface FileSinkConfig extends SinkBase {
  type: 'file';
  path: string;
  maxBytes: number;
  /** Rotated once its file is this old (undefined: by size only). */
  maxAgeMs?: number;
  maxFiles: number;
}

export interface StdoutSinkConfig extends SinkBase {
  type: 'stdout';
}

export interface RetryPolicy {
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** Attempts at one batch before it is given up (dead-lettered); 0: no limit. */
  maxAttempts: number;
  /** How long one batch is retried before it is given up; 0: no limit. */
  maxAgeMs: number;
}

export interface WebhookSinkConfig extends SinkBase {
  type: 'webhook';
  url: string;
  /** The HMAC-SHA256 key of the signature header. Never logged. */
  secret: string;
  /** PEM of the CAs the receiver's certificate must chain to (undefined: Node's default roots). */
  ca?: string;
  batchSize: number;
  timeoutMs: number;
  retry: RetryPolicy;
}

export type SinkConfig = FileSinkConfig | StdoutSinkConfig | WebhookSinkConfig;

/** The live stream's bounds (`events.stream.*`; daemon/event-stream.ts). */
export interface StreamLimits {
  /** Streams open at once per controller; more are refused with 429. */
  maxClients: number;
  /** Unsent bytes a stream may have queued for its reader before it stops reading the store and waits. */
  bufferBytes: number;
  /** How long a reader may leave the buffer over `bufferBytes` before it is disconnected. */
  writeTimeoutMs: number;
  /** A comment line on a stream that sent nothing for this long. */
  heartbeatMs: number;
  /** How often a stream that has caught up reads the store again. */
  pollMs: number;
  /** Events read from the store at a time. */
  batch: number;
}

export interface EventsConfig {
  retentionMs: number;
  /** The outbox keeps at most this many events (fewer where the sequence has gaps). */
  maxEvents: number;
  sinks: SinkConfig[];
  stream: StreamLimits;
}

export const EVENTS_DEFAULTS = {
  retention: '30d',
  maxEvents: 1_000_000,
  backlog: 100_000,
  maxSizeMiB: 100,
  maxFiles: 5,
  batchSize: 100,
  timeout: '10s',
  retry: { initialBackoff: '1s', maxBackoff: '1m', maxAttempts: 20, maxAge: '1h' },
  stream: {
    maxClients: 32,
    bufferKiB: 256,
    writeTimeout: '10s',
    heartbeat: '15s',
    pollInterval: '500ms',
    batchSize: 100,
  },
};

/** The keys of `events.stream`. */
export const STREAM_KEYS = [
  'maxClients',
  'bufferKiB',
  'writeTimeout',
  'heartbeat',
  'pollInterval',
  'batchSize',
] as const;

/** The sections given to parseEventsConfig, as the config file holds them. */
export interface EventsSection {
  retention?: unknown;
  maxEvents?: unknown;
  backlog?: unknown;
  sinks?: unknown;
  /** `events.stream.*`, by key. */
  stream?: Partial<Record<(typeof STREAM_KEYS)[number], unknown>>;
}

const COMMON_KEYS = ['type', 'name', 'namespaces', 'types', 'backlog'];
const KEYS: Record<SinkConfig['type'], readonly string[]> = {
  file: [...COMMON_KEYS, 'path', 'maxSizeMiB', 'maxFiles', 'maxAge'],
  stdout: COMMON_KEYS,
  webhook: [...COMMON_KEYS, 'url', 'secret', 'secretFile', 'caFile', 'batchSize', 'timeout', 'retry'],
};
const RETRY_KEYS = ['initialBackoff', 'maxBackoff', 'maxAttempts', 'maxAge'];

function intIn(name: string, v: unknown, fallback: number, min: number, max: number): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return v;
}

function durationIn(
  name: string,
  v: unknown,
  fallback: string | undefined,
  minMs: number,
  maxMs = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (v === undefined || v === null) return fallback === undefined ? undefined : parseDays(fallback);
  let ms: number;
  try {
    ms = parseDays(String(v));
  } catch (e) {
    throw new Error(`${name}: ${(e as Error).message} (e.g. 500ms, 30s, 24h, 7d)`);
  }
  if (ms < minMs) throw new Error(`${name} must be at least ${minMs} ms`);
  if (ms > maxMs) throw new Error(`${name} must be at most ${maxMs} ms`);
  return ms;
}

function mappingAt(at: string, raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${at} must be a mapping`);
  return raw as Record<string, unknown>;
}

/** A secret file only its owner may read, as the master key's (a trailing newline is not part of it). */
function secretFromFile(at: string, file: string): string {
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new Error('not a regular file');
    if ((st.mode & 0o077) !== 0)
      throw new Error(`has mode 0${(st.mode & 0o777).toString(8)}, open to other users; make it 0600`);
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${at}.secretFile: ${file}: ${(e as Error).message}`);
  }
  return text.replace(/\r?\n$/, '');
}

/** The URL without credentials or query, for names and logs (a query may carry a receiver's token). */
export function safeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function filterOf(at: string, r: Record<string, unknown>): Pick<SinkBase, 'namespaces' | 'types'> {
  const out: Pick<SinkBase, 'namespaces' | 'types'> = {};
  if (r.namespaces !== undefined) {
    if (!Array.isArray(r.namespaces) || r.namespaces.some((n) => !EVENT_NAMESPACES.includes(n as never)))
      throw new Error(`${at}.namespaces must list some of ${EVENT_NAMESPACES.join(', ')}`);
    out.namespaces = r.namespaces as string[];
  }
  if (r.types !== undefined) {
    const ok = (t: unknown) =>
      typeof t === 'string' &&
      /^[A-Za-z]+(\.[A-Za-z]+)?$/.test(t) &&
      EVENT_NAMESPACES.includes(t.split('.')[0] as never);
    if (!Array.isArray(r.types) || r.types.length === 0 || !r.types.every(ok))
      throw new Error(
        `${at}.types must list namespaces or namespace.eventType entries (e.g. authentication.fail) of ${EVENT_NAMESPACES.join(', ')}`,
      );
    out.types = r.types as string[];
  }
  return out;
}

function retryOf(at: string, raw: unknown): RetryPolicy {
  const d = EVENTS_DEFAULTS.retry;
  const r = raw === undefined || raw === null ? {} : mappingAt(`${at}.retry`, raw);
  for (const k of Object.keys(r)) if (!RETRY_KEYS.includes(k)) throw new Error(`${at}.retry: unknown key "${k}"`);
  const policy = {
    initialBackoffMs: durationIn(`${at}.retry.initialBackoff`, r.initialBackoff, d.initialBackoff, 10)!,
    maxBackoffMs: durationIn(`${at}.retry.maxBackoff`, r.maxBackoff, d.maxBackoff, 10)!,
    maxAttempts: intIn(`${at}.retry.maxAttempts`, r.maxAttempts, d.maxAttempts, 0, 1_000_000),
    maxAgeMs: r.maxAge === 0 || r.maxAge === '0' ? 0 : durationIn(`${at}.retry.maxAge`, r.maxAge, d.maxAge, 1000)!,
  };
  if (policy.maxBackoffMs < policy.initialBackoffMs)
    throw new Error(`${at}.retry.maxBackoff must be at least its initialBackoff`);
  return policy;
}

/** `events.stream.*`: the live stream's bounds, each within a range that keeps a stream cheap and alive. */
function streamLimitsOf(raw: EventsSection['stream']): StreamLimits {
  const d = EVENTS_DEFAULTS.stream;
  const r = raw ?? {};
  return {
    maxClients: intIn('events.stream.maxClients', r.maxClients, d.maxClients, 1, 10_000),
    bufferBytes: intIn('events.stream.bufferKiB', r.bufferKiB, d.bufferKiB, 16, 65_536) * 1024,
    writeTimeoutMs: durationIn('events.stream.writeTimeout', r.writeTimeout, d.writeTimeout, 100, 600_000)!,
    heartbeatMs: durationIn('events.stream.heartbeat', r.heartbeat, d.heartbeat, 1000, 3_600_000)!,
    pollMs: durationIn('events.stream.pollInterval', r.pollInterval, d.pollInterval, 50, 60_000)!,
    batch: intIn('events.stream.batchSize', r.batchSize, d.batchSize, 1, 10_000),
  };
}

/** Reads the `events` section (relative paths from `baseDir`); throws naming the bad setting. */
export function parseEventsConfig(section: EventsSection, baseDir: string): EventsConfig {
  let retentionMs: number;
  try {
    retentionMs = parseDays(
      section.retention === undefined || section.retention === null
        ? EVENTS_DEFAULTS.retention
        : String(section.retention),
    );
  } catch (e) {
    throw new Error(`events.retention: ${(e as Error).message} (e.g. 30d, 720h)`);
  }
  if (retentionMs < 60_000) throw new Error('events.retention must be at least 1m');
  const maxEvents = intIn('events.maxEvents', section.maxEvents, EVENTS_DEFAULTS.maxEvents, 10, 1_000_000_000);
  const backlog = intIn('events.backlog', section.backlog, Math.min(EVENTS_DEFAULTS.backlog, maxEvents), 1, maxEvents);
  const sinks = section.sinks;
  if (sinks !== undefined && sinks !== null && !Array.isArray(sinks))
    throw new Error('events.sinks must be a list of sinks');
  const out: SinkConfig[] = [];
  for (const [i, raw] of ((sinks as unknown[] | null | undefined) ?? []).entries()) {
    const at = `events.sinks[${i}]`;
    const r = mappingAt(at, raw);
    const type = r.type as SinkConfig['type'];
    if (!Object.hasOwn(KEYS, String(type))) throw new Error(`${at}.type must be one of file, stdout, webhook`);
    for (const k of Object.keys(r)) if (!KEYS[type].includes(k)) throw new Error(`${at}: unknown key "${k}"`);
    if (r.name !== undefined && (typeof r.name !== 'string' || !/^[\w.:/@-]{1,200}$/.test(r.name)))
      throw new Error(`${at}.name must be 1-200 letters, digits or . _ : / @ -`);
    const base = {
      ...filterOf(at, r),
      // More than the outbox keeps would never bind.
      backlog: intIn(`${at}.backlog`, r.backlog, backlog, 1, maxEvents),
    };
    let sink: SinkConfig;
    if (type === 'file') {
      if (typeof r.path !== 'string' || r.path.trim() === '') throw new Error(`${at}.path must be a file path`);
      const path = resolve(baseDir, r.path);
      if (out.some((s) => s.type === 'file' && s.path === path))
        throw new Error(`${at}.path: another sink writes ${path}`);
      const maxAgeMs = durationIn(`${at}.maxAge`, r.maxAge, undefined, 1000);
      sink = {
        type,
        name: `file:${path}`,
        path,
        ...base,
        maxBytes: intIn(`${at}.maxSizeMiB`, r.maxSizeMiB, EVENTS_DEFAULTS.maxSizeMiB, 1, 100_000) * 1024 * 1024,
        ...(maxAgeMs !== undefined && { maxAgeMs }),
        maxFiles: intIn(`${at}.maxFiles`, r.maxFiles, EVENTS_DEFAULTS.maxFiles, 0, 1000),
      };
    } else if (type === 'stdout') {
      if (out.some((s) => s.type === 'stdout')) throw new Error(`${at}: only one stdout sink`);
      sink = { type, name: 'stdout', ...base };
    } else {
      let url: URL;
      try {
        url = new URL(String(r.url));
      } catch {
        throw new Error(`${at}.url must be an https:// URL`);
      }
      if (url.protocol !== 'https:') throw new Error(`${at}.url must be an https:// URL (events name who did what)`);
      if ((r.secret === undefined) === (r.secretFile === undefined))
        throw new Error(`${at}: give the signing key as secret or secretFile (one of them)`);
      const secret =
        r.secret !== undefined ? String(r.secret) : secretFromFile(at, resolve(baseDir, String(r.secretFile)));
      if (secret.length < 16) throw new Error(`${at}: the signing secret must be at least 16 characters`);
      let ca: string | undefined;
      if (r.caFile !== undefined) {
        const file = resolve(baseDir, String(r.caFile));
        try {
          ca = readFileSync(file, 'utf8');
        } catch (e) {
          throw new Error(`${at}.caFile: ${file}: ${(e as Error).message}`);
        }
        if (!ca.includes('-----BEGIN CERTIFICATE-----'))
          throw new Error(`${at}.caFile: ${file} holds no PEM certificate`);
      }
      sink = {
        type,
        name: `webhook:${safeUrl(url)}`,
        url: url.href,
        secret,
        ...(ca !== undefined && { ca }),
        ...base,
        batchSize: intIn(`${at}.batchSize`, r.batchSize, EVENTS_DEFAULTS.batchSize, 1, 10_000),
        timeoutMs: durationIn(`${at}.timeout`, r.timeout, EVENTS_DEFAULTS.timeout, 100)!,
        retry: retryOf(at, r.retry),
      };
    }
    if (typeof r.name === 'string') sink.name = r.name;
    if (out.some((s) => s.name === sink.name)) throw new Error(`${at}: another sink is named "${sink.name}"`);
    out.push(sink);
  }
  return { retentionMs, maxEvents, sinks: out, stream: streamLimitsOf(section.stream) };
}
