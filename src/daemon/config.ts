/**
 * Daemon configuration: command-line flags win over environment variables, which win over the YAML
 * config file, which wins over the defaults.
 */
import { parseEventsConfig, STREAM_KEYS, type EventsConfig } from './events-config.js';
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { MasterKey, MASTER_KEY_MIN_LENGTH } from '../pki/master-key.js';
import { parseDuration } from './duration.js';
import { AUTH_RATE_LIMIT_KEYS, parseAuthRateLimit, type AuthRateLimitConfig } from './auth-limiter.js';
import { CERT_RATE_LIMIT_KEYS, parseCertRateLimit, type CertRateLimitConfig } from './issuance-limiter.js';
import {
  DEFAULT_POST_LOGOUT_URIS,
  DEFAULT_REDIRECT_URIS,
  type OidcSettings,
} from '../model/services/oidc/oidc-settings.js';

export interface DaemonConfig {
  dataDir: string;
  host: string;
  port: number;
  logLevel: string;
  sessionTimeoutMs: number;
  identityEnrollmentDurationMs: number;
  routerEnrollmentDurationMs: number;
  /** Host clients are told to use (version record, enrollment JWT issuer); defaults to the listen host. */
  advertisedHost: string;
  /** Port clients are told to use, when it differs from the bound one (a proxy or port forward in between). */
  advertisedPort?: number;
  /** Authentication rate limits (`edge.api.rateLimit.auth`, see auth-limiter.ts). */
  authRateLimit: AuthRateLimitConfig;
  /** Rate limits of certificates signed for logged-in callers (`edge.api.rateLimit.certificates`). */
  certRateLimit: CertRateLimitConfig;
  /** Connection and request-time bounds of the listener (docs/decisions.md, "Connections"). */
  limits: ConnectionLimits;
  /** Issuer named in TOTP provisioning URLs (`edge.totp.issuer`). */
  totpIssuer: string;
  /** The OIDC provider's token lifetimes and redirect URIs (`edge.oidc.*`). */
  oidc: OidcSettings;
  /** Browser origins allowed cross-origin access (exact `scheme://host[:port]`); empty: none. */
  corsAllowedOrigins: string[];
  /** Prometheus metrics (docs/decisions.md, "Metrics and health"). */
  metrics: MetricsConfig;
  /** Past this size a write-ahead log that checkpoints do not catch up with is cut (`store.wal.restartSizeMiB`). */
  walRestartBytes: number;
  /**
   * A PostgreSQL database to use instead of the SQLite file in the data dir (`--db`, `EDGECTL_DB_URL`,
   * `store.url`): `postgres://user:password@host:port/database`.
   */
  storeUrl?: string;
  /**
   * The master key the controller secrets in a PostgreSQL store are sealed under (`EDGECTL_MASTER_KEY`,
   * `store.masterKey`, `store.masterKeyFile`); required with `storeUrl`, unused without. Shows as
   * `[master key]` when printed.
   */
  masterKey?: MasterKey;
  /** Recorded events: retention and sinks (`events.*`, events-config.ts). */
  events: EventsConfig;
}

export interface MetricsConfig {
  /** Serve `GET /metrics` on the main HTTPS listener too (default false). */
  enabled: boolean;
  /** A separate plain-HTTP listener for `/metrics` and `/health` (e.g. 127.0.0.1:9464); none by default. */
  listen?: { host: string; port: number };
}

export interface ConnectionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export interface ConfigSources {
  flags: { dataDir?: string; listen?: string; advertise?: string; config?: string; logLevel?: string; db?: string };
  env: NodeJS.ProcessEnv;
}

export const DEFAULTS = {
  dataDir: './edgectl-data',
  listen: '127.0.0.1:1280',
  logLevel: 'info',
  sessionTimeout: '30m',
  enrollmentDuration: '180m',
  maxConnections: 10_000,
  maxConnectionsPerAddress: 500,
  headersTimeout: '10s',
  requestTimeout: '60s',
  totpIssuer: 'edgectl',
  walRestartSizeMiB: 32,
};

/** The longest duration any setting accepts: expiries computed from it stay far inside a Date's range. */
export const MAX_DURATION = '8784h';
const MAX_DURATION_MS = 8784 * 3_600_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Every key the config file may hold, as dotted paths to the values the loader reads (a list or a scalar).
 * The loader reads the file only through `get`, typed by this table, so a key cannot be read without being
 * known here, and `checkKeys` refuses anything else (docs/decisions.md, "Serve fails loudly").
 */
export const CONFIG_KEYS = [
  'dataDir',
  'listen',
  'log.level',
  'edge.api.address',
  'edge.api.sessionTimeout',
  'edge.enrollment.edgeIdentity.duration',
  'edge.enrollment.edgeRouter.duration',
  'edge.totp.issuer',
  'edge.oidc.accessTokenDuration',
  'edge.oidc.refreshTokenDuration',
  'edge.oidc.idTokenDuration',
  'edge.oidc.redirectURIs',
  'edge.oidc.postLogoutURIs',
  'edge.oidc.advertise',
  ...AUTH_RATE_LIMIT_KEYS.map((k) => `edge.api.rateLimit.auth.${k}` as const),
  ...CERT_RATE_LIMIT_KEYS.map((k) => `edge.api.rateLimit.certificates.${k}` as const),
  'web.cors.allowedOrigins',
  'limits.maxConnections',
  'limits.maxConnectionsPerAddress',
  'limits.headersTimeout',
  'limits.requestTimeout',
  'metrics.enabled',
  'metrics.listen',
  'store.wal.restartSizeMiB',
  'store.url',
  'store.masterKey',
  'store.masterKeyFile',
  'events.retention',
  'events.maxEvents',
  'events.backlog',
  'events.sinks',
  ...STREAM_KEYS.map((k) => `events.stream.${k}` as const),
] as const;
type ConfigKey = (typeof CONFIG_KEYS)[number] | 'edge.api.rateLimit.auth' | 'edge.api.rateLimit.certificates';

function editDistance(a: string, b: string): number {
  const target = [...b.toLowerCase()];
  // One row of the table at a time: `prev` holds the distances from a's first i characters to b's prefixes.
  let prev = target.map((_, j) => j + 1);
  [...a.toLowerCase()].forEach((ch, i) => {
    let diag = i;
    let left = i + 1;
    prev = prev.map((up, j) => {
      const d = Math.min(up + 1, left + 1, diag + (ch === target[j] ? 0 : 1));
      diag = up;
      left = d;
      return d;
    });
  });
  return prev.at(-1) ?? a.length;
}

/**
 * Refuses keys the loader would not read (a typo such as `lisen:` would otherwise be ignored silently), naming
 * the nearest known key at the same level.
 */
export function checkKeys(doc: unknown, file: string): void {
  const walk = (node: unknown, prefix: string): void => {
    if (node === undefined || node === null) return;
    const where = prefix ? prefix.slice(0, -1) : 'the top level';
    if (typeof node !== 'object' || Array.isArray(node))
      throw new Error(`config file ${file}: ${where} must be a mapping of keys`);
    // The known names one level below `prefix`: leaves, and the parents of deeper keys.
    const known = new Set<string>();
    for (const k of CONFIG_KEYS) {
      if (!k.startsWith(prefix)) continue;
      const rest = k.slice(prefix.length);
      const dot = rest.indexOf('.');
      known.add(dot < 0 ? rest : rest.slice(0, dot));
    }
    for (const [key, value] of Object.entries(node)) {
      const path = prefix + key;
      if (!known.has(key)) {
        const nearest = [...known].sort((a, b) => editDistance(key, a) - editDistance(key, b))[0];
        throw new Error(`config file ${file}: unknown key "${path}" (the nearest known key is "${prefix}${nearest}")`);
      }
      if (!(CONFIG_KEYS as readonly string[]).includes(path)) walk(value, `${path}.`);
    }
  };
  walk(doc, '');
}

function get(obj: unknown, path: ConfigKey): unknown {
  return path
    .split('.')
    .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(listen.trim());
  if (!m) throw new Error(`listen address "${listen}" must be HOST:PORT`);
  const port = Number(m[2]);
  if (port < 0 || port > 65535) throw new Error(`listen port ${port} is out of range`);
  return { host: m[1] || '0.0.0.0', port };
}

/** An authenticator app shows the issuer next to the account: a short printable name. */
function totpIssuer(v: unknown): string {
  if (v === undefined || v === null) return DEFAULTS.totpIssuer;
  if (typeof v !== 'string' || v.trim() === '' || v.length > 100 || /[\u0000-\u001f:]/.test(v))
    throw new Error('edge.totp.issuer must be a name of 1 to 100 characters without a colon');
  return v.trim();
}

function durationSetting(
  name: string,
  value: unknown,
  fallback: string,
  minMs: number,
  maxMs = MAX_DURATION_MS,
): number {
  const tooLarge = () =>
    new Error(
      `${name} must be at most ${maxMs === MAX_DURATION_MS ? `${MAX_DURATION} (366 days)` : `${maxMs / 1000}s`}`,
    );
  let ms: number;
  try {
    ms = parseDuration(value === undefined || value === null ? fallback : String(value));
  } catch (e) {
    if (/too large/.test((e as Error).message)) throw tooLarge();
    throw new Error(`${name}: ${(e as Error).message}`);
  }
  if (ms < minMs) throw new Error(`${name} must be at least ${minMs / 1000}s`);
  if (ms > maxMs) throw tooLarge();
  return ms;
}

function countSetting(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

// --- connection limits (docs/decisions.md, "Connections") ---
function connectionLimits(doc: unknown): ConnectionLimits {
  const limits: ConnectionLimits = {
    maxConnections: countSetting(
      'limits.maxConnections',
      get(doc, 'limits.maxConnections'),
      DEFAULTS.maxConnections,
      1,
      1_000_000,
    ),
    maxConnectionsPerAddress: countSetting(
      'limits.maxConnectionsPerAddress',
      get(doc, 'limits.maxConnectionsPerAddress'),
      DEFAULTS.maxConnectionsPerAddress,
      1,
      1_000_000,
    ),
    headersTimeoutMs: durationSetting(
      'limits.headersTimeout',
      get(doc, 'limits.headersTimeout'),
      DEFAULTS.headersTimeout,
      1000,
      600_000,
    ),
    requestTimeoutMs: durationSetting(
      'limits.requestTimeout',
      get(doc, 'limits.requestTimeout'),
      DEFAULTS.requestTimeout,
      1000,
      3_600_000,
    ),
  };
  if (limits.requestTimeoutMs < limits.headersTimeoutMs)
    throw new Error('limits.requestTimeout must be at least limits.headersTimeout');
  return limits;
}

// --- CORS (docs/decisions.md, "CORS") ---
/** A list of redirect URI patterns (`*` matches any characters); the reference's defaults when absent. */
function uriPatterns(name: string, value: unknown, fallback: readonly string[]): string[] {
  if (value === undefined || value === null) return [...fallback];
  if (!Array.isArray(value) || value.length === 0 || value.length > 100)
    throw new Error(`${name} must be a list of 1 to 100 URIs`);
  return value.map((v) => {
    const text = typeof v === 'string' ? v.trim() : '';
    if (!/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(text) || text.length > 2048)
      throw new Error(`${name}: "${String(v)}" is not a URI like https://host:*/auth/callback`);
    return text;
  });
}

/** `edge.oidc.*`: the lifetimes (the reference's floors: 1 min, refresh at least access + 1 min) and URIs. */
function oidcSettings(doc: unknown): OidcSettings {
  const accessTokenMs = durationSetting(
    'edge.oidc.accessTokenDuration',
    get(doc, 'edge.oidc.accessTokenDuration'),
    '30m',
    60_000,
  );
  const refreshTokenMs = durationSetting(
    'edge.oidc.refreshTokenDuration',
    get(doc, 'edge.oidc.refreshTokenDuration'),
    '24h',
    60_000,
  );
  if (refreshTokenMs < accessTokenMs + 60_000)
    throw new Error('edge.oidc.refreshTokenDuration must be at least edge.oidc.accessTokenDuration plus 1m');
  return {
    accessTokenMs,
    refreshTokenMs,
    idTokenMs: durationSetting('edge.oidc.idTokenDuration', get(doc, 'edge.oidc.idTokenDuration'), '30m', 60_000),
    redirectUris: uriPatterns('edge.oidc.redirectURIs', get(doc, 'edge.oidc.redirectURIs'), DEFAULT_REDIRECT_URIS),
    postLogoutUris: uriPatterns(
      'edge.oidc.postLogoutURIs',
      get(doc, 'edge.oidc.postLogoutURIs'),
      DEFAULT_POST_LOGOUT_URIS,
    ),
    advertise: advertiseSetting(get(doc, 'edge.oidc.advertise')),
  };
}

/** `edge.oidc.advertise`: `false` keeps OIDC out of `/version` (clients then log in the legacy way). */
function advertiseSetting(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'boolean') throw new Error('edge.oidc.advertise must be true or false');
  return value;
}

function corsOrigins(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error('web.cors.allowedOrigins must be a list of origins');
  return value.map((v) => {
    const text = String(v).trim();
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      /* reported below */
    }
    // Browsers send the serialised origin; only an exact origin (no path, no wildcard) can match it.
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== text.replace(/\/$/, '')) {
      throw new Error(`web.cors.allowedOrigins: "${text}" is not an origin like https://console.example.net[:port]`);
    }
    return url.origin;
  });
}

/** Whether `host` is the unspecified address of IPv4 or IPv6 (listening on every interface). */
export function isUnspecifiedHost(host: string): boolean {
  return host === '0.0.0.0' || (isIP(host) === 6 && /^[0:]+$/.test(host));
}

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * The address clients are given (enrollment JWTs, the version record) and the server certificate names. A
 * wildcard listen address names no host a remote device could use, so one must then be given
 * (docs/decisions.md, "Serve fails loudly").
 */
function advertisedAddress(
  listenHost: string,
  value: string | undefined,
): { advertisedHost: string; advertisedPort?: number } {
  if (value === undefined || String(value).trim() === '') {
    if (isUnspecifiedHost(listenHost)) {
      throw new Error(
        `listening on ${listenHost} (every interface) needs the address clients should use: ` +
          'set --advertise HOST[:PORT], EDGECTL_ADVERTISE or edge.api.address in the config file',
      );
    }
    return { advertisedHost: listenHost };
  }
  const text = String(value).trim();
  // HOST, HOST:PORT, an IPv6 literal (bare or bracketed), or [IPv6]:PORT.
  const m =
    /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? (isIP(text) === 6 ? [text, text] : /^([^:]+)(?::(\d+))?$/.exec(text));
  const host = m?.[1];
  const port = m?.[2] === undefined ? undefined : Number(m[2]);
  if (!host || !(isIP(host) || HOST_NAME.test(host)) || (port !== undefined && (port < 1 || port > 65535))) {
    throw new Error(
      `advertised address "${text}" must be HOST or HOST:PORT (a DNS name or an IP address, port 1-65535)`,
    );
  }
  if (isUnspecifiedHost(host))
    throw new Error(`advertised address "${text}" must be a host clients can reach, not ${host}`);
  return port === undefined ? { advertisedHost: host } : { advertisedHost: host, advertisedPort: port };
}

// --- metrics (docs/decisions.md, "Metrics and health") ---
function metricsConfig(doc: unknown): MetricsConfig {
  const enabled = get(doc, 'metrics.enabled');
  if (enabled !== undefined && enabled !== null && typeof enabled !== 'boolean')
    throw new Error('metrics.enabled must be true or false');
  const listen = get(doc, 'metrics.listen');
  if (listen !== undefined && listen !== null && typeof listen !== 'string')
    throw new Error('metrics.listen must be HOST:PORT');
  let parsed: MetricsConfig['listen'];
  try {
    parsed = listen ? parseListen(listen) : undefined;
  } catch (e) {
    throw new Error(`metrics.listen: ${(e as Error).message}`);
  }
  return { enabled: enabled === true, ...(parsed ? { listen: parsed } : {}) };
}

/** The store URL: unset or empty means the SQLite file in the data dir; anything else must be PostgreSQL's. */
function storeUrlSetting(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !/^postgres(ql)?:\/\/[^\s]+$/i.test(v))
    throw new Error('store.url (--db, EDGECTL_DB_URL) must be a postgres:// URL (postgres://user@host:port/database)');
  return v;
}

/** The ways to give the master key, as every message about a missing or unusable one names them. */
export const MASTER_KEY_SOURCES =
  `EDGECTL_MASTER_KEY (at least ${MASTER_KEY_MIN_LENGTH} characters), store.masterKey in the config file, ` +
  'or store.masterKeyFile in the config file (a file of mode 0600 holding the key)';

/** The start refusal of a PostgreSQL store without a master key. */
export const MISSING_MASTER_KEY =
  'a PostgreSQL store (--db, EDGECTL_DB_URL, store.url) keeps the controller PKI and token key in the database, ' +
  `sealed under a master key every controller on it is given; give it with ${MASTER_KEY_SOURCES}`;

function masterKeyOf(text: string, source: string): MasterKey {
  try {
    return new MasterKey(text);
  } catch (e) {
    // The message says what is wrong with the key, never what it is.
    throw new Error(`${source}: ${(e as Error).message}`);
  }
}

/** Reads a master key file, which only its owner may read or write; one trailing newline is not part of the key. */
function masterKeyFromFile(file: string): MasterKey {
  const path = resolve(file);
  let mode: number;
  let text: string;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    mode = st.mode & 0o777;
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`store.masterKeyFile: cannot read ${path}: ${(e as Error).message}`);
  }
  if ((mode & 0o077) !== 0)
    throw new Error(
      `store.masterKeyFile: ${path} has mode 0${mode.toString(8)}, open to other users; make it 0600 (chmod 600 ${path})`,
    );
  return masterKeyOf(text.replace(/\r?\n$/, ''), `store.masterKeyFile ${path}`);
}

/**
 * The master key, from `EDGECTL_MASTER_KEY`, else `store.masterKey`, else `store.masterKeyFile` of the config
 * document; undefined when none is given. Exported for the `pki` commands, which read it as `serve` does.
 */
export function masterKeySetting(env: NodeJS.ProcessEnv, doc: unknown): MasterKey | undefined {
  const fromEnv = env.EDGECTL_MASTER_KEY;
  if (fromEnv !== undefined && fromEnv !== '') return masterKeyOf(fromEnv, 'EDGECTL_MASTER_KEY');
  const inline = get(doc, 'store.masterKey');
  const file = get(doc, 'store.masterKeyFile');
  if (inline !== undefined && inline !== null && file !== undefined && file !== null)
    throw new Error('give store.masterKey or store.masterKeyFile in the config file, not both');
  if (inline !== undefined && inline !== null) {
    if (typeof inline !== 'string') throw new Error('store.masterKey must be a string');
    return masterKeyOf(inline, 'store.masterKey');
  }
  if (file !== undefined && file !== null) {
    if (typeof file !== 'string' || file === '') throw new Error('store.masterKeyFile must be a file name');
    return masterKeyFromFile(file);
  }
  return undefined;
}

/** Reads and checks the YAML config file, if one is named (`--config`, `EDGECTL_CONFIG`); `{}` without one. */
export function readConfigFile(file: string | undefined): unknown {
  if (!file) return {};
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8')) ?? {};
  } catch (e) {
    throw new Error(`cannot read config file ${file}: ${(e as Error).message}`);
  }
  checkKeys(doc, file);
  return doc;
}

/**
 * The store settings alone, as `serve` reads them (flags, then environment, then the config file): for the
 * commands that work on a store without running a controller (`pki import`, `pki export`).
 */
export function storeSettings(src: { flags: { config?: string; db?: string }; env: NodeJS.ProcessEnv }): {
  storeUrl?: string;
  masterKey?: MasterKey;
} {
  const doc = readConfigFile(src.flags.config ?? src.env.EDGECTL_CONFIG);
  const storeUrl = storeUrlSetting(src.flags.db ?? src.env.EDGECTL_DB_URL ?? get(doc, 'store.url'));
  const masterKey = masterKeySetting(src.env, doc);
  return { ...(storeUrl !== undefined && { storeUrl }), ...(masterKey !== undefined && { masterKey }) };
}

export function loadConfig(src: ConfigSources): DaemonConfig {
  const doc = readConfigFile(src.flags.config ?? src.env.EDGECTL_CONFIG);
  const listen =
    src.flags.listen ?? src.env.EDGECTL_LISTEN ?? (get(doc, 'listen') as string | undefined) ?? DEFAULTS.listen;
  const { host, port } = parseListen(listen);
  const logLevel = String(
    src.flags.logLevel ?? src.env.EDGECTL_LOG_LEVEL ?? get(doc, 'log.level') ?? DEFAULTS.logLevel,
  );
  if (!LOG_LEVELS.includes(logLevel))
    throw new Error(`log level "${logLevel}" must be one of ${LOG_LEVELS.join(', ')}`);
  const dataDir = resolve(
    src.flags.dataDir ?? src.env.EDGECTL_DATA_DIR ?? (get(doc, 'dataDir') as string | undefined) ?? DEFAULTS.dataDir,
  );
  const advertised = advertisedAddress(
    host,
    src.flags.advertise ?? src.env.EDGECTL_ADVERTISE ?? (get(doc, 'edge.api.address') as string | undefined),
  );
  const storeUrl = storeUrlSetting(src.flags.db ?? src.env.EDGECTL_DB_URL ?? get(doc, 'store.url'));
  const masterKey = masterKeySetting(src.env, doc);
  if (storeUrl !== undefined && masterKey === undefined) throw new Error(MISSING_MASTER_KEY);
  return {
    dataDir,
    host,
    port,
    logLevel,
    ...advertised,
    ...(storeUrl !== undefined && { storeUrl }),
    ...(masterKey !== undefined && { masterKey }),
    sessionTimeoutMs: durationSetting(
      'edge.api.sessionTimeout',
      get(doc, 'edge.api.sessionTimeout'),
      DEFAULTS.sessionTimeout,
      1000,
    ),
    identityEnrollmentDurationMs: durationSetting(
      'edge.enrollment.edgeIdentity.duration',
      get(doc, 'edge.enrollment.edgeIdentity.duration'),
      DEFAULTS.enrollmentDuration,
      1000,
    ),
    routerEnrollmentDurationMs: durationSetting(
      'edge.enrollment.edgeRouter.duration',
      get(doc, 'edge.enrollment.edgeRouter.duration'),
      DEFAULTS.enrollmentDuration,
      1000,
    ),
    authRateLimit: parseAuthRateLimit(get(doc, 'edge.api.rateLimit.auth')),
    certRateLimit: parseCertRateLimit(get(doc, 'edge.api.rateLimit.certificates')),
    totpIssuer: totpIssuer(get(doc, 'edge.totp.issuer')),
    oidc: oidcSettings(doc),
    limits: connectionLimits(doc),
    corsAllowedOrigins: corsOrigins(get(doc, 'web.cors.allowedOrigins')),
    metrics: metricsConfig(doc),
    // Relative sink paths are in the data dir.
    events: parseEventsConfig(
      {
        retention: get(doc, 'events.retention'),
        maxEvents: get(doc, 'events.maxEvents'),
        backlog: get(doc, 'events.backlog'),
        sinks: get(doc, 'events.sinks'),
        stream: Object.fromEntries(STREAM_KEYS.map((k) => [k, get(doc, `events.stream.${k}`)])),
      },
      dataDir,
    ),
    walRestartBytes:
      countSetting(
        'store.wal.restartSizeMiB',
        get(doc, 'store.wal.restartSizeMiB'),
        DEFAULTS.walRestartSizeMiB,
        1,
        1024,
      ) *
      1024 *
      1024,
  };
}
