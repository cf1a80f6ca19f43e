/**
 * JSON Schema handling for config types and configs: a config type's `schema` must compile, and every
 * config's `data` must satisfy its type's schema (the reference uses a draft-04..07 validator).
 *
 * Compiled validators are cached by schema text, bounded, because config writes are frequent and schemas
 * few; clearing the cache also clears ajv's own registry so it cannot grow without bound.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fieldError } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true });
addFormats(ajv);
// ajv-formats has no `idn-hostname`; the built-in intercept/host types use it for addresses that may also be
// wildcards (`*.example.com`) or CIDRs, which the reference accepts: so it is known and not checked
// (docs/decisions.md, "Built-in config types"), rather than ignored with a console warning on every compile.
ajv.addFormat('idn-hostname', true);

const CACHE_LIMIT = 256;
const cache = new Map<string, ValidateFunction>();

/** Draft-04/06 and 2019/2020 meta URLs are validated with draft-07 rules rather than refused. */
const OTHER_DRAFT = /^https?:\/\/json-schema\.org\/(draft-0[46]|draft\/20(19-09|20-12))\/schema#?$/;

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) return hit;
  const copy: Record<string, unknown> = { ...schema };
  if (typeof copy.$schema === 'string' && OTHER_DRAFT.test(copy.$schema)) delete copy.$schema;
  if (cache.size >= CACHE_LIMIT) {
    cache.clear();
    ajv.removeSchema();
  }
  for (const idKey of ['$id', 'id']) {
    const id = copy[idKey];
    if (typeof id === 'string' && ajv.getSchema(id)) ajv.removeSchema(id);
  }
  const fn = ajv.compile(copy);
  cache.set(key, fn);
  return fn;
}

/** Refuses a config type schema that is not a valid JSON Schema (400 on `schema`). */
export function checkJsonSchema(schema: Record<string, unknown>): void {
  try {
    compile(schema);
  } catch (e) {
    throw fieldError('schema', `not a valid JSON schema: ${(e as Error).message.replace(/^schema is invalid: /, '')}`);
  }
}

function failingField(prefix: string, e: ErrorObject): string {
  const path = e.instancePath
    .replace(/^\//, '')
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') path.push(e.params.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string')
    path.push(e.params.additionalProperty);
  return [prefix, ...path].join('.');
}

function valueAt(data: unknown, instancePath: string): unknown {
  let cur = data;
  for (const seg of instancePath.split('/').filter(Boolean)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return cur;
}

/** Validates `data` against `schema`; a failure is 400 COULD_NOT_VALIDATE naming the failing path (`data.port`). */
export function validateAgainst(schema: Record<string, unknown>, data: unknown, field = 'data'): void {
  const validate = compile(schema);
  if (validate(data)) return;
  const e = validate.errors?.[0];
  if (!e) throw fieldError(field, `${field} does not match the schema`);
  const name = failingField(field, e);
  const value = e.keyword === 'required' ? undefined : valueAt(data, e.instancePath);
  throw fieldError(name, e.message ?? 'is invalid', typeof value === 'object' ? JSON.stringify(value) : value);
}
