/**
 * The CLI's pure pieces, in-process (no server): flags derived from resource definitions, the results line,
 * error formatting, controller URL normalisation, and usage exit codes through `run(argv, io)`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { formatApiError } from '../../src/cli/api.js';
import { deriveFlags } from '../../src/cli/crud.js';
import { authPolicySpec } from '../../src/cli/entities/auth-policy.js';
import { identitySpec } from '../../src/cli/entities/identity.js';
import type { CliIo } from '../../src/cli/io.js';
import { run } from '../../src/cli/main.js';
import { cell, resultsLine } from '../../src/cli/output.js';
import { zitiString } from '../../src/cli/resolve.js';
import { normaliseControllerUrl } from '../../src/cli/transport/http.js';

function memoryIo(env: NodeJS.ProcessEnv = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, isTTY: false };
}

describe('CLI flags derived from resource definitions', () => {
  it('gives every writable identity prop a flag, with the entity overrides applied', () => {
    const byPath = new Map(deriveFlags(identitySpec).map((f) => [f.path, f]));
    assert.equal(byPath.get('isAdmin')?.name, 'admin');
    assert.equal(byPath.get('isAdmin')?.kind, 'bool');
    assert.equal(byPath.get('roleAttributes')?.kind, 'list');
    assert.deepEqual(byPath.get('type')?.choices, ['User', 'Device', 'Service', 'Router']);
    assert.equal(byPath.get('authPolicyId')?.name, 'auth-policy');
    assert.equal(byPath.get('defaultHostingCost')?.kind, 'int');
    assert.equal(byPath.has('isDefaultAdmin'), false, 'read-only props get no flag');
    assert.equal(byPath.get('enrollment')?.modes.has('patch'), false, 'create-only props are not on update');
  });

  it('names the leaves of nested auth-policy objects below their prop', () => {
    const names = deriveFlags(authPolicySpec).map((f) => f.name);
    for (const n of ['primary', 'secondary', 'updb-min-password-length', 'cert-allowed', 'ext-jwt-allowed-signers', 'require-totp']) {
      assert.ok(names.includes(n), `--${n} exists`);
    }
    assert.equal(names.includes('updb'), false, 'intermediate objects get no flag of their own');
  });
});

describe('CLI output and errors', () => {
  it('writes the results line from the pagination', () => {
    assert.equal(resultsLine(0, { limit: 10, offset: 0, totalCount: 0 }), 'results: none');
    assert.equal(resultsLine(1, { limit: 10, offset: 0, totalCount: 1 }), 'results: 1-1 of 1');
    assert.equal(resultsLine(10, { limit: 10, offset: 20, totalCount: 42 }), 'results: 21-30 of 42');
  });

  it('shows references to other records as name (id) and lists comma-separated', () => {
    assert.equal(cell({ _links: {}, entity: 'auth-policies', id: 'default', name: 'Default' }), 'Default (default)');
    assert.equal(cell(['a', 'b']), 'a,b');
    assert.equal(cell(null), '');
  });

  it('formats error envelopes as error: CODE: message (cause)', () => {
    const field = { error: { code: 'COULD_NOT_VALIDATE', message: 'invalid', cause: { field: 'name', reason: 'name is required' } } };
    assert.equal(formatApiError(400, field), 'error: COULD_NOT_VALIDATE: invalid (field name: name is required)');
    const msg = { error: { code: 'NOT_FOUND', message: 'not found', cause: { message: 'identity with id x not found' } } };
    assert.equal(formatApiError(404, msg), 'error: NOT_FOUND: not found (identity with id x not found)');
    assert.equal(formatApiError(502, 'Bad Gateway'), 'error: HTTP 502: Bad Gateway');
  });

  it('quotes ZitiQL strings', () => {
    assert.equal(zitiString('a"b\\c'), '"a\\"b\\\\c"');
  });

  it('normalises controller addresses to https://host:port', () => {
    assert.equal(normaliseControllerUrl('127.0.0.1:1280'), 'https://127.0.0.1:1280');
    assert.equal(normaliseControllerUrl('https://ctrl.example:443/edge/management/v1/'), 'https://ctrl.example');
    assert.throws(() => normaliseControllerUrl('http://ctrl:1280'), /only reachable over https/);
  });
});

describe('CLI exit codes in-process', () => {
  it('exits 2 for usage errors and 1 when not logged in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgectl-cli-unit-'));
    try {
      assert.equal(await run(['identity', 'bogus-verb'], memoryIo({ EDGECTL_CONFIG_DIR: dir })), 2);
      assert.equal(await run(['identity', 'list', '--offset', 'x'], memoryIo({ EDGECTL_CONFIG_DIR: dir })), 2);
      const io = memoryIo({ EDGECTL_CONFIG_DIR: dir });
      assert.equal(await run(['auth-policy', 'list'], io), 1);
      assert.match(io.stderr.join(''), /not logged in/);
      assert.equal(await run(['--help'], memoryIo()), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
