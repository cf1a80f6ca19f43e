/**
 * Paging rules for every list (parity: docs/reference-notes.md §1.5): default limit 10, maximum 500,
 * `limit=-1`/`limit none` capped at 500, offset clamped to 0..100000, non-integers refused.
 */
import { DomainError } from './errors.js';

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 500;
export const MAX_OFFSET = 100000;

function parseInteger(field: 'limit' | 'offset', raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\s*[-+]?\d+\s*$/.test(raw)) {
    throw new DomainError('INVALID_PAGINATION', {
      cause: { field, value: raw, reason: `could not parse ${field}, value is not an integer` },
      causeMessage: `${field}: could not parse ${field}, value is not an integer`,
    });
  }
  return Number(raw);
}

export function clampLimit(n: number | 'none' | undefined): number {
  if (n === 'none' || n === -1) return MAX_LIMIT;
  if (n === undefined || n === 0 || n < -1) return DEFAULT_LIMIT;
  return Math.min(n, MAX_LIMIT);
}

export function clampOffset(n: number | undefined): number {
  if (n === undefined || n < 0) return 0;
  return Math.min(n, MAX_OFFSET);
}

/** Parses the URL's `limit`/`offset` (before the filter's own `limit`/`skip`, which win). */
export function parsePagingParams(limit?: string, offset?: string): { limit?: number; offset?: number } {
  return { limit: parseInteger('limit', limit), offset: parseInteger('offset', offset) };
}
