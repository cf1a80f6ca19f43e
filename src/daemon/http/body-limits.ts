/**
 * Checks on request bodies, right after parsing and before schema validation. Depth: ajv, the store's
 * `JSON.stringify` and the error writer all recurse, so a value nested thousands deep would overflow the stack
 * there. Strings: a JSON `\ud800` escape parses to a lone surrogate, which is stored and read back as U+FFFD, so
 * two "different" names would show the same. The walk is iterative, visits each value once and stops at the
 * first violation. Limits: docs/decisions.md ("Input bounds").
 */
import { isUtf8 } from 'node:buffer';
import { DomainError, fieldError } from '../../model/errors.js';

/** Deepest nesting of objects and arrays a body may have, counted from the body itself (depth 1). */
export const MAX_JSON_DEPTH = 64;

/** Longest field name an error gives for a bad string; a longer path is named by its top-level member. */
const MAX_FIELD_CHARS = 256;

const NOT_WELL_FORMED = 'is not a well-formed Unicode string (it holds a lone surrogate)';

interface Node {
  value: object;
  depth: number;
  parent: Node | undefined;
  key: string | number;
}

/** `tags.env`, `roleAttributes.2`; `(root)` for the body itself; the top-level member when the path is long. */
function fieldOf(node: Node, key?: string | number): string {
  const path: (string | number)[] = key === undefined ? [] : [key];
  for (let n: Node | undefined = node; n?.parent; n = n.parent) path.unshift(n.key);
  if (path.length === 0) return '(root)';
  const field = path.join('.');
  if (field.length <= MAX_FIELD_CHARS) return field;
  return String(path[0]).length <= MAX_FIELD_CHARS ? String(path[0]) : '(root)';
}

/** Checks one member of `node`: a string must be well-formed, an object or array is walked later. */
function visit(stack: Node[], node: Node, key: string | number, child: unknown): void {
  if (typeof child === 'string') {
    if (!child.isWellFormed()) throw fieldError(fieldOf(node, key), NOT_WELL_FORMED);
  } else if (child !== null && typeof child === 'object') {
    stack.push({ value: child, depth: node.depth + 1, parent: node, key });
  }
}

/**
 * Refuses a body nested deeper than {@link MAX_JSON_DEPTH} (a field error naming the top-level member that
 * holds the deep value) or holding a string or member name that is not well-formed UTF-16 (a field error
 * naming its path). The value itself is never echoed.
 */
export function checkJsonBody(body: unknown): void {
  if (typeof body === 'string' && !body.isWellFormed()) throw fieldError('(root)', NOT_WELL_FORMED);
  if (body === null || typeof body !== 'object') return;
  const stack: Node[] = [{ value: body, depth: 1, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.depth > MAX_JSON_DEPTH) {
      let top = node;
      while (top.parent?.parent) top = top.parent;
      throw fieldError(Array.isArray(body) ? '(root)' : String(top.key), `nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    if (Array.isArray(node.value)) {
      for (let i = 0; i < node.value.length; i++) visit(stack, node, i, node.value[i]);
      continue;
    }
    const record = node.value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!key.isWellFormed()) throw fieldError(fieldOf(node), `has a member name that ${NOT_WELL_FORMED}`);
      visit(stack, node, key, record[key]);
    }
  }
}

/**
 * A body's bytes as text. JSON text is UTF-8 (RFC 8259), and a PEM or JWT is ASCII: bytes that are not UTF-8
 * would be decoded to U+FFFD and stored altered, so they are refused as an unparsable body instead.
 */
export function utf8Body(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new DomainError('COULD_NOT_PARSE_BODY');
  return bytes.toString('utf8');
}

/** Parses a JSON body and checks it: unparsable is 400 COULD_NOT_PARSE_BODY, too deep or a bad string a field error. */
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
