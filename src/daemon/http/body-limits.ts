/**
 * Bounds on parsed JSON bodies, checked right after parsing and before schema validation: ajv, the store's
 * `JSON.stringify` and the error writer all recurse, so a value nested thousands deep would overflow the
 * stack there. The walk here is iterative and stops at the first violation. Limits: docs/decisions.md
 * ("Input bounds").
 */
import { DomainError, fieldError } from '../../model/errors.js';

/** Deepest nesting of objects and arrays a body may have, counted from the body itself (depth 1). */
export const MAX_JSON_DEPTH = 64;

/**
 * Refuses a body nested deeper than {@link MAX_JSON_DEPTH} with a field error naming the top-level
 * member that holds the deep value; the value itself is never echoed.
 */
export function checkJsonBody(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const stack: { value: object; depth: number; field: string }[] = [{ value: body, depth: 1, field: '(root)' }];
  while (stack.length > 0) {
    const { value, depth, field } = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) throw fieldError(field, `nested deeper than ${MAX_JSON_DEPTH} levels`);
    const top = depth === 1 && !Array.isArray(value);
    for (const [key, child] of Object.entries(value)) {
      if (child !== null && typeof child === 'object')
        stack.push({ value: child, depth: depth + 1, field: top ? key : field });
    }
  }
}

/** Parses a JSON body and checks its bounds: unparsable is 400 COULD_NOT_PARSE_BODY, too deep a field error. */
export function parseJsonBody(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DomainError('COULD_NOT_PARSE_BODY');
  }
  checkJsonBody(parsed);
  return parsed;
}
