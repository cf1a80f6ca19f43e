/** Assertions and small helpers shared by the API tests. */
import assert from 'node:assert/strict';

export interface ResponseLike {
  status: number;
  body: any;
  text?: string;
}

/** The error envelope with the given status and code (and cause field, when given). */
export function assertError(res: ResponseLike, status: number, code: string, field?: string): void {
  const shown = res.text ?? JSON.stringify(res.body);
  assert.equal(res.status, status, `status (body ${shown})`);
  assert.equal(res.body?.error?.code, code, `error code (body ${shown})`);
  assert.equal(typeof res.body.error.message, 'string', 'error message');
  assert.equal(typeof res.body.error.requestId, 'string', 'error requestId');
  assert.equal(res.body.meta?.apiVersion, '0.0.1', 'meta.apiVersion on errors');
  if (field !== undefined) assert.equal(res.body.error.cause?.field, field, `cause field (body ${shown})`);
}

/** A field validation error: 400 COULD_NOT_VALIDATE naming `field` unless told otherwise. */
export function assertFieldError(res: ResponseLike, field: string, status = 400, code = 'COULD_NOT_VALIDATE'): void {
  assertError(res, status, code, field);
}

/** A name no other test uses. */
export const unique = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** `filter=<encoded>` for a list URL. */
export const filterParam = (filter: string): string => `filter=${encodeURIComponent(filter)}`;

/** Promises and how many of them have settled so far: shows what finished first without measuring time. */
export function tracked<T>(promises: Promise<T>[]): { settled: number; all: Promise<T[]> } {
  const t = { settled: 0, all: Promise.all(promises) };
  for (const p of promises)
    void p.then(
      () => t.settled++,
      () => t.settled++,
    );
  return t;
}
