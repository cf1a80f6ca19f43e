/**
 * The `events` section of the config file (README, "Events"): how long recorded events are kept
 * (`events.retention`, default 30 days) and where they are delivered (`events.sinks`: JSON-lines files).
 *
 * ```yaml
 * events:
 *   retention: 30d
 *   sinks:
 *     - type: file
 *       path: /var/log/edgectl/events.jsonl
 *       namespaces: [entityChange, authentication]   # default: every namespace
 *       maxSizeMiB: 100                              # rotated past this size (default 100)
 *       maxFiles: 5                                  # rotated files kept besides the current one (default 5)
 * ```
 */
import { resolve } from 'node:path';
import { parseDays } from '../model/events/since.js';

export interface FileSinkConfig {
  type: 'file';
  /** The sink's name in the store's delivery cursors: `file:<absolute path>`. */
  name: string;
  path: string;
  /** Namespaces delivered (undefined: all). */
  namespaces?: readonly string[];
  maxBytes: number;
  maxFiles: number;
}

export interface EventsConfig {
  retentionMs: number;
  sinks: FileSinkConfig[];
}

export const EVENTS_DEFAULTS = { retention: '30d', maxSizeMiB: 100, maxFiles: 5 };

const NAMESPACES: readonly string[] = ['entityChange', 'apiSession', 'authentication'];
const SINK_KEYS: readonly string[] = ['type', 'path', 'namespaces', 'maxSizeMiB', 'maxFiles'];

function intIn(name: string, v: unknown, fallback: number, min: number, max: number): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return v;
}

/** Reads `events.retention` and `events.sinks` (relative paths from `baseDir`); throws naming the bad setting. */
export function parseEventsConfig(retention: unknown, sinks: unknown, baseDir: string): EventsConfig {
  let retentionMs: number;
  try {
    retentionMs = parseDays(
      retention === undefined || retention === null ? EVENTS_DEFAULTS.retention : String(retention),
    );
  } catch (e) {
    throw new Error(`events.retention: ${(e as Error).message} (e.g. 30d, 720h)`);
  }
  if (retentionMs < 60_000) throw new Error('events.retention must be at least 1m');
  if (sinks !== undefined && sinks !== null && !Array.isArray(sinks))
    throw new Error('events.sinks must be a list of sinks');
  const out: FileSinkConfig[] = [];
  for (const [i, raw] of ((sinks as unknown[] | null | undefined) ?? []).entries()) {
    const at = `events.sinks[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${at} must be a mapping`);
    const r = raw as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!SINK_KEYS.includes(k)) throw new Error(`${at}: unknown key "${k}"`);
    if (r.type !== 'file') throw new Error(`${at}.type must be "file" (the only sink served yet)`);
    if (typeof r.path !== 'string' || r.path.trim() === '') throw new Error(`${at}.path must be a file path`);
    let namespaces: string[] | undefined;
    if (r.namespaces !== undefined) {
      if (!Array.isArray(r.namespaces) || r.namespaces.some((n) => !NAMESPACES.includes(n as string)))
        throw new Error(`${at}.namespaces must list some of ${NAMESPACES.join(', ')}`);
      namespaces = r.namespaces as string[];
    }
    const path = resolve(baseDir, r.path);
    if (out.some((s) => s.path === path)) throw new Error(`${at}.path: another sink writes ${path}`);
    out.push({
      type: 'file',
      name: `file:${path}`,
      path,
      ...(namespaces && { namespaces }),
      maxBytes: intIn(`${at}.maxSizeMiB`, r.maxSizeMiB, EVENTS_DEFAULTS.maxSizeMiB, 1, 100_000) * 1024 * 1024,
      maxFiles: intIn(`${at}.maxFiles`, r.maxFiles, EVENTS_DEFAULTS.maxFiles, 0, 1000),
    });
  }
  return { retentionMs, sinks: out };
}
