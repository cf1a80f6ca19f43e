/**
 * Response checking against the reference's response schemas: the current spec of both edge APIs
 * (test/fixtures/reference/response-schemas-head.json) and the fabric subset edgectl serves
 * (response-schemas-fabric.json), with the corrections the reference README lists (undeclared required fields,
 * wrong references).
 *
 * `responseViolations` is what the harness's transports run on every response they receive (test/harness/http.ts):
 * a response below an API's base path is checked against the operation's schema for its status, an error status
 * the operation does not list against the error envelope, so a schema violation fails the test that received it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { onSendHookHandler } from 'fastify';

export type SchemaApi = 'client' | 'management' | 'fabric';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const load = (name: string) =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/reference/${name}`, import.meta.url)), 'utf8'));
interface Operation {
  responses: Record<string, { $ref?: string; schema?: { $ref?: string } }>;
}
interface ApiDoc {
  basePath: string;
  definitions: Record<string, unknown>;
  paths: Record<string, Record<string, Operation>>;
}
const doc: Record<SchemaApi, ApiDoc> = {
  ...load('response-schemas-head.json'),
  ...load('response-schemas-fabric.json'),
};

/** Required fields the spec lists without declaring them (reference README, "Known mistakes"). */
const UNDECLARED_REQUIRED = new Set(['cachedUpdatedAt', 'details', 'os', 'version', 'arch', 'buildDate', 'revision']);

/** Wrong response references in the spec (reference README, "Known mistakes"): `api method path status` → definition. */
const CORRECTED: Record<string, string> = {
  'management GET /edge-routers/{id}/service-edge-router-policies 200': 'listServiceEdgeRouterPoliciesEnvelope',
  'client POST /authenticate/mfa 401': 'apiErrorEnvelope',
  'management POST /authenticate/mfa 401': 'apiErrorEnvelope',
};

/** Answers whose body form is the implementation's choice (reference README): not checked. */
const FREE_FORM = new Set(['client GET /specs/{id}/spec 200', 'management GET /specs/{id}/spec 200']);

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

// The schemas are fixed data: checking them against the meta-schema in every test process would only cost CPU
// (a malformed one still fails to compile).
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
// A required, non-nullable `url` that a record does not have (a signer's `externalAuthUrl`) is sent as `""`
// (docs/decisions.md, "External JWT signers"): the format holds for every URL that is there.
ajv.addFormat('url', { type: 'string', validate: (s: string) => s === '' || URL.canParse(s) });
for (const api of Object.keys(doc) as SchemaApi[]) {
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

function validatorFor(api: SchemaApi, definition: string): ValidateFunction {
  const key = `${api} ${definition}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `${api}#/$defs/${definition}` });
    cache.set(key, validate);
  }
  return validate;
}

const errorsOf = (validate: ValidateFunction, body: unknown): string[] =>
  validate(body)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);

/** The definition the spec names for an operation's status (corrected), or undefined when it lists none. */
function definitionFor(api: SchemaApi, path: string, method: string, status: number): string | undefined {
  const corrected = CORRECTED[`${api} ${method} ${path} ${status}`];
  if (corrected) return corrected;
  const resp = doc[api].paths[path]?.[method.toLowerCase()]?.responses[String(status)];
  const ref = resp?.schema?.$ref ?? resp?.$ref;
  return ref?.replace('#/definitions/', '');
}

/** Validates a response body against the reference's schema for that operation and status. */
export function checkResponse(api: SchemaApi, path: string, method: string, status: number, body: unknown): string[] {
  if (!doc[api].paths[path]?.[method.toLowerCase()]) throw new Error(`no reference operation ${method} ${path}`);
  const definition = definitionFor(api, path, method, status);
  if (!definition) throw new Error(`no reference schema for ${method} ${path} ${status}`);
  return errorsOf(validatorFor(api, definition), body);
}

/** Each API's path templates as patterns, literal paths before templated ones (`/enroll/ott` before `/enroll/{x}`). */
const templates = (Object.keys(doc) as SchemaApi[]).map((api) => ({
  api,
  base: doc[api].basePath,
  paths: Object.keys(doc[api].paths)
    .map((p) => ({
      path: p,
      params: (p.match(/\{/g) ?? []).length,
      re: new RegExp(`^${p.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
    }))
    .sort((a, b) => a.params - b.params),
}));

/** The API and path template a request path falls under; undefined outside every API's base path. */
export function operationOf(pathname: string): { api: SchemaApi; path: string | undefined } | undefined {
  const clean = pathname.replace(/\/{2,}/g, '/');
  // The root `/version` answers what the Client API's does (the reference serves both).
  if (clean === '/version' || clean === '/version/') return { api: 'client', path: '/version' };
  for (const t of templates) {
    if (clean !== t.base && !clean.startsWith(`${t.base}/`)) continue;
    const rest = clean.slice(t.base.length).replace(/(.)\/+$/, '$1') || '/';
    return { api: t.api, path: t.paths.find((p) => p.re.test(rest))?.path };
  }
  return undefined;
}

/**
 * What is wrong with one response as the schemas see it: the operation's schema for its status; an error
 * status the operation does not list (or any error on a path no operation has), the error envelope; a success
 * status it does not list (or any success on a path of edgectl's own), the `{data, meta}` envelope. A status the
 * spec does not list is not itself a violation, and bodies that are not JSON (PEM, PKCS#7, JWT, PNG) are the
 * operation's `produces`, not checked here.
 */
export function responseViolations(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  body: unknown,
): string[] {
  if (method === 'HEAD' || method === 'OPTIONS') return [];
  const found = operationOf(new URL(url, 'https://x').pathname);
  if (!found) return [];
  if (!/json/.test(contentType ?? '')) return [];
  if (typeof body === 'string') return ['the body is not JSON'];
  const { api, path } = found;
  if (path && FREE_FORM.has(`${api} ${method} ${path} ${status}`)) return [];
  const definition = path ? definitionFor(api, path, method, status) : undefined;
  if (definition) return errorsOf(validatorFor(api, definition), body);
  return errorsOf(status >= 400 ? validatorFor(api, 'apiErrorEnvelope') : envelopeValidator(api), body);
}

/** Any success envelope: `data` and the API's `meta` (for a status or path the spec does not list). */
function envelopeValidator(api: SchemaApi): ValidateFunction {
  const key = `${api} (envelope)`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile({
      type: 'object',
      required: ['meta', 'data'],
      properties: { meta: { $ref: `${api}#/$defs/meta` } },
    });
    cache.set(key, validate);
  }
  return validate;
}

/**
 * The test servers' last look at every response (DaemonOptions.onSend): one that breaks its schema is replaced by
 * a 500 `RESPONSE_SCHEMA_VIOLATION` naming the violations, so whatever client sent the request (a transport of
 * the harness, the CLI, a reference client) fails its test there.
 */
export const schemaGuard: onSendHookHandler = async (req, reply, payload) => {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  const contentType = reply.getHeader('content-type');
  const text = payload.toString();
  let body: unknown = text;
  try {
    body = text === '' ? text : JSON.parse(text);
  } catch {
    // not JSON: responseViolations says so when the content type claims JSON
  }
  const violations = responseViolations(
    req.method,
    req.url,
    reply.statusCode,
    typeof contentType === 'string' ? contentType : undefined,
    body,
  );
  if (violations.length === 0) return payload;
  const message = `${req.method} ${req.url} answered ${reply.statusCode} against the response schema: ${violations.join('; ')}`;
  process.stderr.write(`${message}\n`);
  reply.code(500);
  return JSON.stringify({
    error: { code: 'RESPONSE_SCHEMA_VIOLATION', message, requestId: '', args: { urlVars: {} }, causeMessage: '' },
    meta: { apiVersion: '0.0.0', apiEnrollmentVersion: '0.0.0' },
  });
};
