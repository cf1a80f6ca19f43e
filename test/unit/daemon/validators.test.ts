/**
 * Body validators (src/daemon/http/validators.ts): Fastify's Ajv compiler, compiling a schema on its first use and
 * once per set of validators (a server's own, or the one the test servers share) for each option set and schema text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyValidators } from '../../../src/daemon/http/validators.js';
import { AJV_OPTIONS } from '../../../src/daemon/server.js';

interface Validator {
  (data: unknown, dataCxt?: unknown): boolean;
  errors?: { keyword: string; instancePath: string }[] | null;
  schemaEnv: unknown;
}
type Compile = (route: { schema: unknown; method: string; url: string; httpPart: string }) => Validator;

const compilerWith = (options: object, set = new BodyValidators()): Compile =>
  set.buildValidator({}, { plugins: [], ...options }) as unknown as Compile;
/** The keyword and path of each error of the validator's last run. */
const failures = (v: Validator) => (v.errors ?? []).map((e) => [e.keyword, e.instancePath]);
const route = (schema: unknown) => ({ schema, method: 'POST', url: '/things', httpPart: 'body' });
const thing = () => ({
  type: 'object',
  properties: { name: { type: 'string', format: 'uuid' }, n: { type: 'integer' } },
  required: ['name'],
});

test('a schema is compiled on the first validation, not when the route is set up', () => {
  const validate = compilerWith(AJV_OPTIONS)(route({ type: 'no-such-type' }));
  assert.throws(() => validate({}), /schema is invalid/);
});

test('answers as Ajv does: true, or false with the errors on the validator', () => {
  const validate = compilerWith(AJV_OPTIONS)(route(thing()));
  assert.equal(validate({ name: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', n: 3 }), true);
  assert.equal(validate.errors, null);
  assert.equal(validate({ name: 'not-a-uuid' }), false, 'formats are checked');
  assert.deepEqual(failures(validate), [['format', '/name']]);
  assert.equal(validate({ name: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', n: '3' }), false, 'no coercion');
  assert.deepEqual(failures(validate), [['type', '/n']]);
});

test('equal schemas share one compiled validator within a set; sets share nothing, and options keep theirs', () => {
  const set = new BodyValidators();
  const server = compilerWith(AJV_OPTIONS, set);
  const a = server(route(thing()));
  const b = server(route(thing()));
  assert.equal(a.schemaEnv, b.schemaEnv, 'compiled once per set');
  // Another server built with the same set (the test servers of one process) takes the compiled validator.
  const again = compilerWith(AJV_OPTIONS, set)(route(thing()));
  assert.equal(again.schemaEnv, a.schemaEnv, 'shared by the servers of one set');
  const other = compilerWith(AJV_OPTIONS)(route(thing()));
  assert.notEqual(other.schemaEnv, a.schemaEnv, 'nothing is shared between sets');
  const coercing = compilerWith(
    { customOptions: { ...AJV_OPTIONS.customOptions, coerceTypes: true } },
    set,
  )(route(thing()));
  assert.equal(
    coercing({ name: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', n: '3' }),
    true,
    'other options, other compiler',
  );
  assert.notEqual(coercing.schemaEnv, a.schemaEnv);
  assert.equal(a({ name: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', n: '3' }), false);
});
