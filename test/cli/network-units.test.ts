/**
 * The network-model CLI's pure pieces, in-process: flags of the new nouns, `@name` → `@id` in role lists
 * (against a fake API), the sub-collection table against the controller's listings, and policy-advice verdicts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Api } from '../../src/cli/api.js';
import { deriveFlags, resolveRoles } from '../../src/cli/crud.js';
import { adviceProblems } from '../../src/cli/commands/policy-advice.js';
import { configSpec } from '../../src/cli/entities/config.js';
import { servicePolicySpec } from '../../src/cli/entities/policy.js';
import { edgeRouterSpec } from '../../src/cli/entities/router.js';
import { CliError } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/main.js';
import { RELATIONS } from '../../src/model/relations.js';
import { postureChecks, services } from '../../src/cli/resources.js';
import { relatedRoutes } from '../../src/daemon/routes/related.js';

/** The CLI noun of a collection that relations name. */
const NOUNS: Record<string, string> = {
  identities: 'identity',
  services: 'service',
  'edge-routers': 'edge-router',
  'config-types': 'config-type',
  configs: 'config',
  'service-policies': 'service-policy',
  'edge-router-policies': 'edge-router-policy',
  'service-edge-router-policies': 'service-edge-router-policy',
};
const nounOf = (collection: string): string => NOUNS[collection] ?? collection;

/** An Api answering `GET /services?filter=<field> = "<x>"` from a fixed list of records. */
function fakeApi(records: { id: string; name: string }[]): Api & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    login: {} as Api['login'],
    transport: {} as Api['transport'],
    async call<T>(_method: string, path: string): Promise<T> {
      calls.push(path);
      const filter = new URLSearchParams(path.split('?')[1]).get('filter') ?? '';
      const m = filter.match(/^(\w+) = "(.*)"$/);
      assert.ok(m, filter);
      const data = records.filter((r) => r[m[1] as 'id' | 'name'] === m[2]);
      return { data } as T;
    },
  };
}

describe('network CLI pieces', () => {
  it('derives the flags of the new nouns with their overrides', () => {
    const sp = new Map(deriveFlags(servicePolicySpec).map((f) => [f.path, f]));
    assert.equal(sp.get('serviceRoles')?.roles?.name, 'services');
    assert.equal(sp.get('identityRoles')?.roles?.name, 'identities');
    assert.equal(sp.get('postureCheckRoles')?.short, 'p');
    assert.deepEqual(sp.get('type')?.choices, ['Dial', 'Bind']);
    assert.deepEqual(sp.get('semantic')?.choices, ['AllOf', 'AnyOf']);

    const er = new Map(deriveFlags(edgeRouterSpec).map((f) => [f.path, f]));
    assert.equal(er.get('noTraversal')?.name, 'traversal');
    assert.equal(er.get('noTraversal')?.invert, true);
    assert.equal(er.get('isTunnelerEnabled')?.name, 'tunneler-enabled');
    assert.equal(er.get('appData')?.kind, 'json');

    const config = new Map(deriveFlags(configSpec).map((f) => [f.path, f]));
    assert.equal(config.get('data')?.name, 'data');
    assert.deepEqual(config.get('data')?.fromFile, { name: 'data-file', short: 'f' });
    assert.equal(config.get('configTypeId')?.ref?.name, 'config-types');
  });

  it('resolves @name to @id in role lists, keeping #attr, #all and @id', async () => {
    const api = fakeApi([
      { id: 'S1', name: 'web' },
      { id: 'S2', name: 'db' },
    ]);
    assert.deepEqual(await resolveRoles(api, services, ['#eng', '@web', '@S2', '#all'], '--service-roles'), [
      '#eng',
      '@S1',
      '@S2',
      '#all',
    ]);
    await assert.rejects(
      resolveRoles(api, services, ['@nope'], '--service-roles'),
      (e: unknown) =>
        e instanceof CliError &&
        e.exitCode === 1 &&
        /no service with id or name "nope" \(in --service-roles @nope\)/.test(e.message),
    );
  });

  it('refuses an ambiguous @name', async () => {
    const api = fakeApi([
      { id: 'S1', name: 'twin' },
      { id: 'S2', name: 'twin' },
    ]);
    await assert.rejects(
      resolveRoles(api, services, ['@twin'], '--service-roles'),
      (e: unknown) => e instanceof CliError && /more than one service/.test(e.message),
    );
  });

  it('resolves posture-check roles by name too, now that posture checks are listed', async () => {
    const api = fakeApi([{ id: 'PC1', name: 'pc' }]);
    assert.notEqual(postureChecks.ops.list, undefined);
    assert.deepEqual(await resolveRoles(api, postureChecks, ['@pc', '#os'], '--posture-check-roles'), ['@PC1', '#os']);
    assert.ok(api.calls.length > 0);
  });

  it('has a sub-collection command for every related listing of the controller, and no other', async () => {
    // Both come from the model's table (src/model/relations.ts): the daemon serves one route per entry ...
    const model = RELATIONS.map((r) => `/${r.parent.name}/{id}/${r.segment}`).sort();
    const server = relatedRoutes
      .map((r) => r.path)
      .filter((p) => p.includes('{id}'))
      .sort();
    assert.deepEqual(server, model);
    // ... and the CLI has one sub-command per entry under the parent's noun, listing that path.
    const io = { out() {}, err() {}, env: {} } as unknown as Parameters<typeof buildProgram>[0];
    const program = await buildProgram(io);
    const cli = program.commands.flatMap((noun) =>
      noun.commands
        .filter((c) => RELATIONS.some((r) => r.segment === c.name() && noun.name() === nounOf(r.parent.name)))
        .map((c) => `${noun.name()} ${c.name()}`),
    );
    assert.equal(cli.length, RELATIONS.length, cli.join(', '));
  });

  it('explains what keeps an identity from a service', () => {
    const base = {
      identityId: 'I',
      serviceId: 'S',
      isDialAllowed: true,
      isBindAllowed: false,
      identityRouterCount: 1,
      serviceRouterCount: 1,
      commonRouters: [{ id: 'R', isOnline: true }],
    };
    assert.deepEqual(adviceProblems(base), []);
    assert.deepEqual(adviceProblems({ ...base, isDialAllowed: false }), [
      'no service policy grants the identity Dial or Bind on the service',
    ]);
    assert.deepEqual(adviceProblems({ ...base, commonRouters: [] }), [
      'the identity and the service have no edge router in common',
    ]);
    assert.deepEqual(adviceProblems({ ...base, identityRouterCount: 0, commonRouters: [] }), [
      'no edge router policy gives the identity an edge router',
    ]);
    assert.deepEqual(adviceProblems({ ...base, commonRouters: [{ id: 'R', isOnline: false }] }), [
      'no common edge router is online',
    ]);
  });
});
