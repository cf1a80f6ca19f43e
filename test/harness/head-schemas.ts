/**
 * Response checking against the reference's current spec (test/fixtures/reference/response-schemas-head.json,
 * 0.29.0), for the operations it added after 0.25.6 (schemas.ts checks the rest against 0.25.6), with the same
 * corrections as schemas.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { convert } from './schemas.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const file = fileURLToPath(new URL('../fixtures/reference/response-schemas-head.json', import.meta.url));
const doc = JSON.parse(readFileSync(file, 'utf8'));

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
for (const api of ['client', 'management'] as const) {
  const defs = convert(doc[api].definitions) as Record<string, unknown>;
  if (defs.subTags) defs.subTags = { type: 'object', additionalProperties: true };
  ajv.addSchema({ $id: `head-${api}`, $defs: defs });
}

const cache = new Map<string, ValidateFunction>();

/** Validates a response body against the current spec's schema for that operation and status. */
export function checkHeadResponse(
  api: 'client' | 'management',
  path: string,
  method: string,
  status: number,
  body: unknown,
): string[] {
  const op = doc[api].paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`no operation ${method} ${path} in the current spec`);
  const resp = op.responses[String(status)];
  const schema = resp?.schema ?? resp;
  if (!schema?.$ref) throw new Error(`no schema for ${method} ${path} ${status} in the current spec`);
  const key = `${api} ${method} ${path} ${status}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `head-${api}${(schema.$ref as string).replace('#/definitions/', '#/$defs/')}` });
    cache.set(key, validate);
  }
  return validate(body)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}
