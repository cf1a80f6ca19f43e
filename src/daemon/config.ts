/**
 * Daemon configuration: command-line flags win over environment variables, which win over the YAML
 * config file, which wins over the defaults.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from './duration.js';
import { parseAuthRateLimit, type AuthRateLimitConfig } from './auth-limiter.js';

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
  /** Authentication rate limits (`edge.api.rateLimit.auth`, see auth-limiter.ts). */
  authRateLimit: AuthRateLimitConfig;
}

export interface ConfigSources {
  flags: { dataDir?: string; listen?: string; config?: string; logLevel?: string };
  env: NodeJS.ProcessEnv;
}

export const DEFAULTS = {
  dataDir: './edgectl-data',
  listen: '127.0.0.1:1280',
  logLevel: 'info',
  sessionTimeout: '30m',
  enrollmentDuration: '180m',
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function get(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(listen.trim());
  if (!m) throw new Error(`listen address "${listen}" must be HOST:PORT`);
  const port = Number(m[2]);
  if (port < 0 || port > 65535) throw new Error(`listen port ${port} is out of range`);
  return { host: m[1] || '0.0.0.0', port };
}

function durationSetting(name: string, value: unknown, fallback: string, minMs: number): number {
  const ms = parseDuration(value === undefined || value === null ? fallback : String(value));
  if (ms < minMs) throw new Error(`${name} must be at least ${minMs / 1000}s`);
  return ms;
}

export function loadConfig(src: ConfigSources): DaemonConfig {
  const file = src.flags.config ?? src.env.EDGECTL_CONFIG;
  let doc: unknown = {};
  if (file) {
    try {
      doc = parseYaml(readFileSync(file, 'utf8')) ?? {};
    } catch (e) {
      throw new Error(`cannot read config file ${file}: ${(e as Error).message}`);
    }
  }
  const listen = src.flags.listen ?? src.env.EDGECTL_LISTEN ?? (get(doc, 'listen') as string | undefined) ?? DEFAULTS.listen;
  const { host, port } = parseListen(listen);
  const logLevel = String(src.flags.logLevel ?? src.env.EDGECTL_LOG_LEVEL ?? get(doc, 'log.level') ?? DEFAULTS.logLevel);
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`log level "${logLevel}" must be one of ${LOG_LEVELS.join(', ')}`);
  const dataDir = resolve(src.flags.dataDir ?? src.env.EDGECTL_DATA_DIR ?? (get(doc, 'dataDir') as string | undefined) ?? DEFAULTS.dataDir);
  const advertised = (get(doc, 'edge.api.address') as string | undefined) ?? src.env.EDGECTL_ADVERTISE;
  return {
    dataDir,
    host,
    port,
    logLevel,
    advertisedHost: advertised ? parseListen(advertised.includes(':') ? advertised : `${advertised}:${port}`).host : host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host,
    sessionTimeoutMs: durationSetting('edge.api.sessionTimeout', get(doc, 'edge.api.sessionTimeout'), DEFAULTS.sessionTimeout, 1000),
    identityEnrollmentDurationMs: durationSetting('edge.enrollment.edgeIdentity.duration', get(doc, 'edge.enrollment.edgeIdentity.duration'), DEFAULTS.enrollmentDuration, 1000),
    routerEnrollmentDurationMs: durationSetting('edge.enrollment.edgeRouter.duration', get(doc, 'edge.enrollment.edgeRouter.duration'), DEFAULTS.enrollmentDuration, 1000),
    authRateLimit: parseAuthRateLimit(get(doc, 'edge.api.rateLimit.auth')),
  };
}
