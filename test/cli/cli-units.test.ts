/**
 * The CLI's pure pieces, in-process (no server): flags derived from resource definitions, the results line,
 * error formatting, controller URL normalisation, usage exit codes through `run(argv, io)`, enrollment JWT
 * decoding, identity files and JWT files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { formatApiError } from '../../src/cli/api.js';
import { deriveFlags } from '../../src/cli/crud.js';
import { authPolicySpec } from '../../src/cli/entities/auth-policy.js';
import { identitySpec } from '../../src/cli/entities/identity.js';
import { decodeEnrollmentJwt } from '../../src/cli/commands/enroll.js';
import { readIdentityFile, renderIdentityFile, writePrivateFile } from '../../src/cli/identity-file.js';
import type { CliError, CliIo } from '../../src/cli/io.js';
import { emitJwts } from '../../src/cli/jwt-output.js';
import { run } from '../../src/cli/main.js';
import { cell, resultsLine } from '../../src/cli/output.js';
import { zitiString } from '../../src/cli/resolve.js';
import { normaliseControllerUrl } from '../../src/cli/transport/http.js';

function memoryIo(env: NodeJS.ProcessEnv = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, stdin: [], isTTY: false };
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
    for (const n of [
      'primary',
      'secondary',
      'updb-min-password-length',
      'cert-allowed',
      'ext-jwt-allowed-signers',
      'require-totp',
    ]) {
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
    const field = {
      error: { code: 'COULD_NOT_VALIDATE', message: 'invalid', cause: { field: 'name', reason: 'name is required' } },
    };
    assert.equal(formatApiError(400, field), 'error: COULD_NOT_VALIDATE: invalid (field name: name is required)');
    const msg = {
      error: { code: 'NOT_FOUND', message: 'not found', cause: { message: 'identity with id x not found' } },
    };
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

describe('CLI help', () => {
  it("wraps help to io's terminal width, else to 80 columns", async () => {
    const widest = async (columns?: number) => {
      const io = { ...memoryIo(), columns };
      assert.equal(await run(['service', 'create', '--help'], io), 0);
      const options = io.stdout
        .join('')
        .split('\n\n')
        .find((s) => s.startsWith('Options:'));
      assert.ok(options, 'the help lists options');
      return Math.max(...options.split('\n').map((l) => l.length));
    };
    assert.ok((await widest()) <= 80, 'no terminal: 80 columns');
    const wide = await widest(120);
    assert.ok(wide > 80 && wide <= 120, `a 120-column terminal: lines up to ${wide}`);
  });
});

describe('CLI enrollment pieces', () => {
  it('decodes an enrollment JWT without verifying it, and refuses what is not one (exit 2)', () => {
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwt = `${part({ alg: 'ES256' })}.${part({ em: 'ott', iss: 'https://ctrl:1280', sub: 'id1', jti: 'tok', exp: 42 })}.c2ln`;
    const claims = decodeEnrollmentJwt(jwt, 'x.jwt');
    assert.deepEqual(
      { em: claims.em, iss: claims.iss, sub: claims.sub, jti: claims.jti, exp: claims.exp },
      { em: 'ott', iss: 'https://ctrl:1280', sub: 'id1', jti: 'tok', exp: 42 },
    );
    assert.throws(
      () => decodeEnrollmentJwt('abc', 'x.jwt'),
      (e: CliError) => e.exitCode === 2 && /does not hold a JWT/.test(e.message),
    );
    assert.throws(() => decodeEnrollmentJwt(`${part({})}.${part({ em: 'ott' })}.x`, 'x.jwt'), /not an enrollment JWT/);
  });

  it('writes identity files 0600 in the SDK shape and reads pem:, file:// and relative-path members', () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgectl-idfile-'));
    try {
      const file = join(dir, 'id.json');
      writePrivateFile(
        file,
        renderIdentityFile({ url: 'https://ctrl:1280', key: 'KEY-PEM', cert: 'CERT-PEM', ca: 'CA-PEM' }),
        true,
      );
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const json = JSON.parse(readFileSync(file, 'utf8'));
      assert.deepEqual(json, {
        ztAPI: 'https://ctrl:1280',
        id: { key: 'pem:KEY-PEM', cert: 'pem:CERT-PEM', ca: 'pem:CA-PEM' },
      });
      assert.deepEqual(readIdentityFile(file), {
        url: 'https://ctrl:1280',
        key: 'KEY-PEM',
        cert: 'CERT-PEM',
        ca: 'CA-PEM',
      });
      assert.throws(() => writePrivateFile(file, 'x', true), /EEXIST/, 'exclusive writes never replace a file');

      writeFileSync(join(dir, 'key.pem'), 'K');
      writeFileSync(join(dir, 'cert.pem'), 'C');
      const other = join(dir, 'paths.json');
      writeFileSync(
        other,
        JSON.stringify({ ztAPI: 'https://c', id: { key: 'key.pem', cert: pathToFileURL(join(dir, 'cert.pem')).href } }),
      );
      assert.deepEqual(readIdentityFile(other), { url: 'https://c', key: 'K', cert: 'C' });
      writeFileSync(other, '{"id": {}}');
      assert.throws(
        () => readIdentityFile(other),
        (e: CliError) => e.exitCode === 2 && /not an identity file/.test(e.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes one JWT to --jwt-out and several next to it, named by method', () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgectl-jwts-'));
    try {
      const io = memoryIo();
      emitJwts(
        io,
        [
          { method: 'ott', jwt: 'J1' },
          { method: 'updb', jwt: 'J2' },
        ],
        join(dir, 'alice.jwt'),
      );
      assert.equal(readFileSync(join(dir, 'alice.ott.jwt'), 'utf8'), 'J1\n');
      assert.equal(readFileSync(join(dir, 'alice.updb.jwt'), 'utf8'), 'J2\n');
      assert.equal(statSync(join(dir, 'alice.ott.jwt')).mode & 0o777, 0o600);
      emitJwts(io, [{ method: 'ott', jwt: 'J3' }], join(dir, 'bob.jwt'));
      assert.equal(readFileSync(join(dir, 'bob.jwt'), 'utf8'), 'J3\n');
      const printed = memoryIo();
      emitJwts(printed, [{ method: 'ott', jwt: 'J4', expiresAt: '2030-01-01T00:00:00.000Z' }], undefined);
      assert.deepEqual(printed.stdout, ['ott enrollment JWT (expires 2030-01-01T00:00:00.000Z):', 'J4']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
