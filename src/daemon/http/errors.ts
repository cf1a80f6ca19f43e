/**
 * The only writer of the error envelope. Domain errors keep their code and status; validation, parser,
 * size and database failures are mapped to the reference's codes; anything else is a 500 UNHANDLED that
 * is logged with its requestId and leaks nothing of its internals.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ERROR_CATALOGUE, type ErrorCause, type ErrorCode } from '../../model/errors.js';
import { constraintError } from '../../model/constraints.js';
import { baseMeta } from './envelope.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/primary/updb/maxAttempts` → `primary.updb.maxAttempts`; a missing property names itself. */
function fieldOf(e: AjvError): string {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') {
    return path ? `${path}.${e.params.missingProperty}` : e.params.missingProperty;
  }
  return path || '(root)';
}

function valueAt(body: unknown, instancePath: string): unknown {
  let cur: unknown = body;
  for (const seg of instancePath.split('/').filter(Boolean)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function validationError(err: FastifyError, body: unknown): DomainError {
  const errors = (err.validation ?? []) as unknown as AjvError[];
  // A union (nullable) failure reports every branch; the most specific error is the first non-union one.
  const first = errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'type') ?? errors[0];
  if (!first) return new DomainError('COULD_NOT_VALIDATE');
  const field = fieldOf(first);
  const reason = first.keyword === 'required' ? `${field} is required` : `${field}: ${first.message ?? 'is invalid'}`;
  const value = first.keyword === 'required' ? undefined : valueAt(body, first.instancePath);
  return new DomainError('COULD_NOT_VALIDATE', {
    cause: { field, reason, value: field.toLowerCase().includes('password') ? '******' : value },
    causeMessage: 'schema validation failed',
  });
}

/** Maps anything thrown while serving a request to a DomainError (or null for an unexpected failure). */
export function toDomainError(err: unknown, body?: unknown): DomainError | null {
  if (err instanceof DomainError) return err;
  const fe = err as FastifyError;
  if (fe?.validation) return validationError(fe, body);
  switch (fe?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('REQUEST_ENTITY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('INVALID_CONTENT_TYPE', {
        message: `${ERROR_CATALOGUE.INVALID_CONTENT_TYPE[1]}`,
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('COULD_NOT_PARSE_BODY');
  }
  if (fe instanceof SyntaxError || (fe as { type?: string })?.type === 'entity.parse.failed')
    return new DomainError('COULD_NOT_PARSE_BODY');
  // A filter can be valid and still too deep for the database's expression limit.
  if (
    /Expression tree is too large|too many terms in compound SELECT|parser stack overflow/.test(
      (fe as Error)?.message ?? '',
    )
  ) {
    return new DomainError('INVALID_FILTER', {
      cause: { code: 'UNHANDLED', message: 'the filter is nested too deeply' },
      causeMessage: 'the filter is nested too deeply',
    });
  }
  return constraintError(err);
}

/** The longest rejected value a field cause echoes; anything larger (or not serialisable) is left out. */
export const MAX_ECHOED_VALUE_CHARS = 256;

function echoable(value: unknown): boolean {
  if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') return true;
  if (typeof value === 'string') return value.length <= MAX_ECHOED_VALUE_CHARS;
  try {
    const text = JSON.stringify(value);
    return text !== undefined && text.length <= MAX_ECHOED_VALUE_CHARS;
  } catch {
    return false;
  }
}

/** A field cause whose rejected value is small enough to echo; a large one is omitted, never sent back. */
function boundedCause(cause: ErrorCause | null): ErrorCause | null {
  if (!cause || !('value' in cause) || echoable(cause.value)) return cause;
  const { value: _omitted, ...rest } = cause;
  return rest;
}

export function errorBody(e: DomainError, requestId: string): Record<string, unknown> {
  const error: Record<string, unknown> = {
    code: e.code,
    message: e.message,
    requestId,
    args: { urlVars: e.urlVars ?? {} },
    causeMessage: e.causeMessage ?? '',
  };
  // The contract's `cause` is an object: none is left out rather than sent as null.
  if (e.errorCause !== undefined && e.errorCause !== null) error.cause = boundedCause(e.errorCause);
  if (e.data !== undefined) error.data = e.data;
  return { error, meta: baseMeta() };
}

export function sendError(reply: FastifyReply, e: DomainError): void {
  if (e.retryAfterSeconds !== undefined) reply.header('retry-after', String(e.retryAfterSeconds));
  void reply
    .code(e.status)
    .type('application/json; charset=utf-8')
    .send(errorBody(e, String(reply.request.id)));
}

export function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  let e = toDomainError(err, req.body);
  if (!e) {
    req.log.error({ err, requestId: req.id }, 'unhandled error');
    e = new DomainError('UNHANDLED');
  }
  if (e.urlVars === undefined && req.params && typeof req.params === 'object' && Object.keys(req.params).length > 0) {
    e = new DomainError(e.code as ErrorCode, {
      message: e.message,
      cause: e.errorCause,
      causeMessage: e.causeMessage,
      status: e.status,
      data: e.data,
      retryAfterSeconds: e.retryAfterSeconds,
      urlVars: req.params as Record<string, string>,
    });
  }
  sendError(reply, e);
}
