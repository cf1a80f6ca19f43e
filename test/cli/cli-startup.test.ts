/**
 * CLI start-up stays cheap (docs/design.md, "Cheap definitions"): the CLI imports the model's resource definitions
 * and relation table directly, which are pure data, so a command loads neither the store (Kysely, better-sqlite3)
 * nor the daemon (Fastify), the PKI or TypeBox. These tests keep it so: the static import graph of the CLI's entry,
 * and the modules `edgectl version` and `edgectl identity --help` really load (recorded by a module hook).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { BIN } from '../harness/cli.js';
import { buildProgram, COMMAND_MODULES, commandWord } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Packages a plain CLI command must not load: the store's, the daemon's, the PKI's, and TypeBox. */
const HEAVY = [
  '@sinclair/typebox',
  'kysely',
  'better-sqlite3',
  'fastify',
  '@peculiar/x509',
  'jose',
  'node-forge',
  '@node-rs/argon2',
  'ajv',
  'yaml',
  '@inquirer/prompts',
];

/**
 * Static (non-type) imports and re-exports of a TypeScript module; for the CLI's entry also its dynamic
 * `import('./…')`s, which load the command modules (each then counts as loaded at start-up).
 */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'|^import\s+'([^']+)'/gm;
  for (const m of text.matchAll(re)) out.push((m[1] ?? m[2])!);
  if (file.endsWith(join('src', 'cli', 'main.ts')))
    for (const m of text.matchAll(/\bimport\('(\.[^']+)'\)/g)) out.push(m[1]!);
  return out;
}

/** Every module reachable from `entry` through static imports: local files and package names. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:'))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(entry);
  return { files, packages };
}

/** The module URLs the built CLI loads for `args`. */
async function loadedModules(args: string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-imports-'));
  const log = join(dir, 'imports.txt');
  try {
    await new Promise<void>((done, fail) =>
      execFile(
        process.execPath,
        ['--import', join(ROOT, 'test/harness/record-imports.mjs'), BIN, ...args],
        { cwd: ROOT, env: { ...process.env, RECORD_IMPORTS: log, EDGECTL_CONFIG_DIR: dir }, timeout: 60_000 },
        (err) => (err ? fail(err) : done()),
      ),
    );
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('CLI start-up', () => {
  it('imports no store, daemon or PKI module and no heavy package, statically or from a command module', () => {
    const { files, packages } = importGraph(join(ROOT, 'src/cli/main.ts'));
    const heavy = [...files].map((f) => f.slice(ROOT.length)).filter((f) => /^src\/(store|daemon|pki)\//.test(f));
    assert.deepEqual(heavy, [], 'modules that belong behind a dynamic import()');
    for (const p of HEAVY) assert.equal(packages.has(p), false, `${p} is imported statically by the CLI`);
    // The definitions are what the CLI builds its commands from: imported, not copied.
    assert.ok(files.has(join(ROOT, 'src/model/resources/index.ts')));
    assert.ok(files.has(join(ROOT, 'src/model/relations.ts')));
  });

  for (const args of [['version'], ['identity', 'create', '--help']]) {
    it(`loads no store, daemon, PKI or heavy package for \`edgectl ${args.join(' ')}\``, async () => {
      const urls = await loadedModules(args);
      assert.ok(
        urls.some((u) => u.endsWith('/dist/cli/main.js')),
        'the recorder saw the CLI load',
      );
      // Only the command that runs is loaded: `version` needs no resource definitions at all.
      assert.equal(
        urls.some((u) => u.endsWith('/dist/model/resources/identity.js')),
        args[0] === 'identity',
        'definitions loaded by exactly the commands that use them',
      );
      const ours = urls.filter((u) => /\/dist\/(store|daemon|pki)\//.test(u));
      assert.deepEqual(ours, [], 'store, daemon or PKI modules loaded');
      const packages = HEAVY.filter((p) => urls.some((u) => u.includes(`/node_modules/${p}/`)));
      assert.deepEqual(packages, [], 'heavy packages loaded');
    });
  }

  it('each command module registers exactly the commands it is listed with', async () => {
    const io = { out() {}, err() {}, env: {} } as unknown as CliIo;
    const all: string[] = [];
    for (const m of COMMAND_MODULES) {
      const program = new Command('edgectl');
      (await m.load())(program, io);
      const names = program.commands.map((c) => c.name());
      // Completion is listed under no name: it describes every command, so it always loads them all.
      if (m.names.length > 0) assert.deepEqual(names, [...m.names]);
      all.push(...names);
    }
    assert.equal(new Set(all).size, all.length, 'no command registered twice');
  });

  it('a command line naming one command gets that command exactly as the full program has it', async () => {
    const io = { out() {}, err() {}, env: {} } as unknown as CliIo;
    const tree = (c: Command): unknown => [
      c.name(),
      c.options.map((o) => o.flags).sort(),
      c.commands.map(tree).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ];
    const full = await buildProgram(io);
    for (const top of full.commands) {
      const partial = await buildProgram(io, [top.name()]);
      const mine = partial.commands.find((c) => c.name() === top.name());
      assert.ok(mine, `${top.name()} is registered when named`);
      assert.deepEqual(tree(mine), tree(top), `${top.name()} differs when loaded alone`);
    }
  });

  it('finds the command word after the program options', () => {
    assert.equal(commandWord(['version']), 'version');
    assert.equal(commandWord(['--context', 'prod', 'identity', 'list']), 'identity');
    assert.equal(commandWord(['--context=prod', 'service', 'list']), 'service');
    assert.equal(commandWord(['--help']), undefined);
    assert.equal(commandWord([]), undefined);
  });
});
