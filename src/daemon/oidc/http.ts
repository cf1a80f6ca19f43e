/**
 * What the OIDC provider's endpoints share on the wire (docs/reference-notes.md §14.1, §6, §8): parameters from the query, a form
 * or a JSON body; the issuer a request is served under; and the error shapes of each kind of endpoint, which
 * are not the REST APIs' envelope.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../model/errors.js';
import { AuthorizeRedirect, AuthorizeRefusal, OAuthError } from '../../model/services/oidc/oidc-errors.js';

/** Which error shape a route answers with. */
export type OidcErrorShape = 'login' | 'oauth' | 'authorize';

/** One value per name (the first of repeated ones) and the repeated values of every name. */
export interface OidcParams {
  one: Record<string, string | undefined>;
  all(name: string): string[];
}

/** A form body, parsed (repeated names become arrays). */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = /^application\/([\w.+-]+\+)?json$/;

/** The media type of the request's body ('' when none is named). */
export const mediaType = (req: FastifyRequest): string =>
  (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** Refuses a body that is neither a form nor JSON (415 UNSUPPORTED_MEDIA_TYPE, §14.4). */
export function requireFormOrJson(req: FastifyRequest): void {
  const type = mediaType(req);
  if (req.body === undefined || type === '' || type === FORM || JSON_TYPE.test(type)) return;
  throw new DomainError('UNSUPPORTED_MEDIA_TYPE');
}

/**
 * The request's parameters: the body's (form or JSON object) over the query's, as Go's form parsing merges
 * them (BrowZer sends the token request in the query with an empty JSON body, §14.6).
 */
export function oidcParams(req: FastifyRequest): OidcParams {
  const query = (req.query ?? {}) as Record<string, string | string[] | undefined>;
  const body =
    req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  const values = (name: string): string[] => {
    const fromBody = body[name];
    const b = Array.isArray(fromBody) ? fromBody : fromBody === undefined || fromBody === null ? [] : [fromBody];
    const q = query[name];
    const fromQuery = q === undefined ? [] : Array.isArray(q) ? q : [q];
    return [...b.filter((v): v is string => typeof v === 'string'), ...fromQuery];
  };
  const names = new Set([...Object.keys(body), ...Object.keys(query)]);
  const one: Record<string, string | undefined> = {};
  for (const n of names) one[n] = values(n)[0];
  return { one, all: values };
}

/** The body as an object (JSON or form), for the fields the login endpoints read (§14.4). */
export const bodyObject = (req: FastifyRequest): Record<string, unknown> =>
  req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};

/** A redirect (302) to `location`. */
export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).header('location', location).header('cache-control', 'no-store').send();
}

/** Writes an OIDC endpoint's error in its shape; answers false for an error it does not know (a 500). */
export function sendOidcError(err: unknown, shape: OidcErrorShape, reply: FastifyReply): boolean {
  if (err instanceof AuthorizeRedirect) {
    redirect(reply, err.location);
    return true;
  }
  if (err instanceof AuthorizeRefusal) {
    void reply.code(400).type('text/plain; charset=utf-8').send(err.message);
    return true;
  }
  if (err instanceof OAuthError) {
    void reply
      .code(err.status)
      .header('cache-control', 'no-store')
      .type('application/json')
      .send({ error: err.error, error_description: err.description });
    return true;
  }
  const domain = err instanceof DomainError ? err : fastifyBodyError(err);
  if (!domain) return false;
  if (shape === 'oauth' && domain.status === 429) {
    // A CSR on a refresh or exchange beyond the signing limits (the token itself was not used up).
    if (domain.retryAfterSeconds !== undefined) reply.header('retry-after', String(domain.retryAfterSeconds));
    void reply
      .code(429)
      .header('cache-control', 'no-store')
      .type('application/json')
      .send({ error: 'slow_down', error_description: domain.message });
    return true;
  }
  if (shape === 'oauth') {
    void reply
      .code(domain.status >= 500 ? 500 : 400)
      .type('application/json')
      .send({ error: domain.status >= 500 ? 'server_error' : 'invalid_request', error_description: domain.message });
    return true;
  }
  if (domain.retryAfterSeconds !== undefined) reply.header('retry-after', String(domain.retryAfterSeconds));
  // parity: the login endpoints answer a bare API error, not the `{error, meta}` envelope (§14.4).
  void reply
    .code(domain.status)
    .type('application/json')
    .send({
      code: domain.code,
      message: domain.message,
      ...(domain.errorCause !== undefined && domain.errorCause !== null && { cause: domain.errorCause }),
    });
  return true;
}

/** Body-reading failures of Fastify as the codes the APIs use. */
function fastifyBodyError(err: unknown): DomainError | undefined {
  const code = (err as { code?: string })?.code;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('REQUEST_ENTITY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('COULD_NOT_PARSE_BODY');
  }
  if (err instanceof SyntaxError) return new DomainError('COULD_NOT_PARSE_BODY');
  return undefined;
}
