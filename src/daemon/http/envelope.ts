/**
 * The `{data, meta}` envelope of every JSON answer. `meta.apiVersion` and `meta.apiEnrollmentVersion`
 * are on every one, success or error (decisions.md, `meta`).
 */
import type { Page } from '../../model/crud.js';
import type { JsonText } from '../../model/json-text.js';

export const API_VERSION = '0.0.1';
export const API_ENROLLMENT_VERSION = '0.0.1';

export const baseMeta = () => ({ apiVersion: API_VERSION, apiEnrollmentVersion: API_ENROLLMENT_VERSION });

const BASE_META_JSON = JSON.stringify(baseMeta());

const envelopes = new WeakMap<JsonText, Buffer>();

/**
 * The envelope of data already encoded (model/json-text.ts), with the base meta and the answer's own: the same
 * bytes as serialised, made once per text (a repeated answer is the same text object, always with the same meta).
 */
export function encodedEnvelope(data: JsonText, meta?: Record<string, unknown>): Buffer {
  let bytes = envelopes.get(data);
  if (!bytes) {
    const metaJson = meta ? JSON.stringify({ ...baseMeta(), ...meta }) : BASE_META_JSON;
    envelopes.set(data, (bytes = Buffer.from(`{"data":${data.text},"meta":${metaJson}}`)));
  }
  return bytes;
}

/** What a route handler returns: the payload, extra meta, and a status other than 200. */
export interface Envelope {
  data: unknown;
  meta?: Record<string, unknown>;
  status?: number;
}

export const ok = (data: unknown): Envelope => ({ data });
export const empty = (): Envelope => ({ data: {} });
export const created = (id: string, collection: string): Envelope => ({
  status: 201,
  data: { id, _links: { self: { href: `./${collection}/${id}` } } },
});
export const listOf = (data: unknown[], page: Pick<Page, 'pagination' | 'filterableFields'>): Envelope => ({
  data,
  meta: { pagination: page.pagination, filterableFields: page.filterableFields },
});

/** Marker for handlers that already wrote a non-JSON answer (PEM, PKCS#7, JWT, PNG). */
export const RAW = Symbol('raw');
