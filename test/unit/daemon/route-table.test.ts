/**
 * The served route table against the reference's operation list (test/fixtures/reference/operations-v0.25.6.tsv):
 * every route we serve that the reference has uses its operationId (or, once the current spec is advertised, the
 * current spec's name for a renamed one) and its success status. And every route's body schema compiles.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalisedPath, referenceOperations, RENAMED_IN_HEAD } from '../../harness/reference-operations.js';
import { SPEC_VERSION } from '../../../src/daemon/openapi.js';
import { allRoutes } from '../../../src/daemon/routes/index.js';
import { API_PREFIX } from '../../../src/daemon/http/route.js';
import { BodyValidators } from '../../../src/daemon/http/validators.js';
import { AJV_OPTIONS } from '../../../src/daemon/server.js';

const norm = normalisedPath;
const renamed = (method: string, path: string, operationId: string): string =>
  SPEC_VERSION === '0.25.6' ? operationId : (RENAMED_IN_HEAD[`${method} ${path}`]?.current ?? operationId);
const reference = new Map(
  referenceOperations('v0.25.6').map((r) => [
    `${r.method} ${norm(r.path!)}`,
    { operationId: renamed(r.method!, r.path!, r.operationId!), success: r.success! },
  ]),
);

test('served operations use the reference operationIds and success statuses', () => {
  const routes = allRoutes(() => ({}));
  let matched = 0;
  const mismatches: string[] = [];
  for (const r of routes) {
    for (const api of r.apis) {
      const key = `${r.method} ${norm(API_PREFIX[api] + r.path)}`;
      const ref = reference.get(key);
      if (!ref) continue;
      matched++;
      // A few reference operations have no operationId in the spec ("(none in spec; …)").
      if (!ref.operationId.startsWith('(') && ref.operationId !== r.operationId)
        mismatches.push(`${key}: ${r.operationId} ≠ ${ref.operationId}`);
      const status = Number(/^(\d{3})/.exec(ref.success)?.[1]);
      if (status && status !== r.success) mismatches.push(`${key}: success ${r.success} ≠ ${status}`);
    }
  }
  assert.deepEqual(mismatches, []);
  assert.ok(matched > 150, `matched ${matched} reference operations`);
});

test('no route is declared twice', () => {
  const seen = new Set<string>();
  for (const r of allRoutes(() => ({}))) {
    for (const api of r.apis) {
      const key = `${r.method} ${API_PREFIX[api]}${r.path}`;
      assert.ok(!seen.has(key), `duplicate ${key}`);
      seen.add(key);
    }
  }
});

test("every route's body schema compiles with the server's Ajv options (a start no longer compiles them)", () => {
  const compile = new BodyValidators().buildValidator({}, { plugins: [], ...AJV_OPTIONS }) as unknown as (route: {
    schema: unknown;
    method: string;
    url: string;
    httpPart: string;
  }) => (data: unknown) => boolean;
  let compiled = 0;
  for (const r of allRoutes(() => ({}))) {
    if (!r.body) continue;
    const validate = compile({ schema: r.body, method: r.method, url: r.path, httpPart: 'body' });
    assert.equal(typeof validate(null), 'boolean', `${r.method} ${r.path}`);
    compiled++;
  }
  assert.ok(compiled > 50, `compiled ${compiled} body schemas`);
});
