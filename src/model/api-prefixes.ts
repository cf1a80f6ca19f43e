/**
 * The APIs and the path prefix each is served below (parity: docs/reference-notes.md, the reference's
 * `basePath`s). The one list: the daemon registers its routes under these and the CLI sends its requests there.
 * `fabric` is the read-only subset of the reference's fabric management API (docs/decisions.md, "The fabric API").
 */
export type ApiName = 'client' | 'management' | 'fabric';

export const API_PREFIX: Readonly<Record<ApiName, string>> = {
  client: '/edge/client/v1',
  management: '/edge/management/v1',
  fabric: '/fabric/v1',
};

export const MANAGEMENT_PREFIX = API_PREFIX.management;
export const CLIENT_PREFIX = API_PREFIX.client;
