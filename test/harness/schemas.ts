/**
 * Response checking against the reference's response schemas (test/fixtures/reference/response-schemas-v0.25.6.json),
 * with the corrections the reference README lists (undeclared required fields, wrong references).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const file = fileURLToPath(new URL('../fixtures/reference/response-schemas-v0.25.6.json', import.meta.url));
const doc = JSON.parse(readFileSync(file, 'utf8'));

/** Required fields the spec lists without declaring them (reference README, "Known mistakes"). */
const UNDECLARED_REQUIRED = new Set([
  'cachedUpdatedAt',
  'details',
  'description',
  'os',
  'version',
  'arch',
  'buildDate',
  'revision',
]);

export function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (k.startsWith('x-') || k === 'example' || k === 'discriminator') continue;
    if (k === 'format' && v === 'uri') continue; // hrefs are relative ("./identities/x")
    if (k === '$ref' && typeof v === 'string') out.$ref = v.replace('#/definitions/', '#/$defs/');
    else if (k === 'required' && Array.isArray(v)) {
      const declared = src.properties as Record<string, unknown> | undefined;
      out.required = v.filter((r: string) => !UNDECLARED_REQUIRED.has(r) || (declared && r in declared));
    } else out[k] = convert(v);
  }
  if (src['x-nullable'] === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
for (const api of ['client', 'management'] as const) {
  const defs = convert(doc[api].definitions) as Record<string, unknown>;
  // `subTags` (tags, appData) says `additionalProperties: {type: object}`, which go-swagger turns into
  // `interface{}`: the reference accepts and returns any JSON value there (strings, booleans, numbers).
  if (defs.subTags) defs.subTags = { type: 'object', additionalProperties: true };
  // Same for a service's `config` (map of config-type name → config data): declared as
  // map<string, map<string, object>>, served as `map[string]map[string]interface{}`, so the members of a
  // config's data are any JSON value (a port number, a host name), as the config type's schema allows.
  const serviceConfig = (
    defs.serviceDetail as { allOf?: { properties?: Record<string, { additionalProperties?: unknown }> }[] } | undefined
  )?.allOf?.find((s) => s.properties?.config)?.properties?.config;
  if (serviceConfig) serviceConfig.additionalProperties = { type: 'object', additionalProperties: true };
  // The controller's own MFA auth query names the provider `svc` (docs/decisions.md, "Partial sessions").
  const providers = defs.mfaProviders as { enum?: string[] } | undefined;
  if (providers?.enum) providers.enum = [...providers.enum, 'svc'];
  ajv.addSchema({ $id: api, $defs: defs });
}

const cache = new Map<string, ValidateFunction>();

/** Validates a response body against the reference's schema for that operation and status. */
export function checkResponse(
  api: 'client' | 'management',
  path: string,
  method: string,
  status: number,
  body: unknown,
): string[] {
  const op = doc[api].paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`no reference operation ${method} ${path}`);
  const resp = op.responses[String(status)];
  const schema = resp?.schema ?? resp;
  if (!schema) throw new Error(`no reference schema for ${method} ${path} ${status}`);
  const key = `${api} ${method} ${path} ${status}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `${api}${(schema.$ref as string).replace('#/definitions/', '#/$defs/')}` });
    cache.set(key, validate);
  }
  return validate(body)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}
