/**
 * CLI start-up stays cheap: the CLI reads resource metadata from a generated snapshot instead of importing the
 * model's resource definitions (which load TypeBox, Kysely, the store and the PKI, ~0.6 s per command). These
 * tests keep it that way: the snapshot must match the model, and the modules every command loads must not
 * import heavy modules statically (dynamic `import()` inside a command is fine).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { REGENERATE, renderSnapshot, snapshot } from '../../src/cli/resources-gen.js';
import { RESOURCE_META } from '../../src/cli/resources.generated.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Static (non-type) imports and re-exports of a TypeScript module. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'|^import\s+'([^']+)'/gm;
  for (const m of text.matchAll(re)) out.push((m[1] ?? m[2])!);
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

describe('CLI start-up', () => {
  it('has a resource metadata snapshot that matches the model definitions', () => {
    assert.deepEqual(
      JSON.parse(JSON.stringify(RESOURCE_META)),
      JSON.parse(JSON.stringify(snapshot())),
      `src/cli/resources.generated.ts is out of date with src/model/resources: run \`${REGENERATE}\``,
    );
    // The file on disk is exactly what the generator writes (no hand edits).
    assert.equal(
      readFileSync(join(ROOT, 'src/cli/resources.generated.ts'), 'utf8'),
      renderSnapshot(snapshot()),
      `regenerate with \`${REGENERATE}\``,
    );
  });

  it('loads no model, store, daemon or PKI module and no heavy package statically', () => {
    const { files, packages } = importGraph(join(ROOT, 'src/cli/main.ts'));
    const heavy = [...files].map((f) => f.slice(ROOT.length)).filter((f) => /^src\/(model|store|daemon|pki)\//.test(f));
    assert.deepEqual(heavy, [], 'modules that belong behind a dynamic import()');
    for (const p of [
      '@sinclair/typebox',
      'kysely',
      'better-sqlite3',
      '@peculiar/x509',
      'jose',
      'fastify',
      'yaml',
      'node-forge',
      '@inquirer/prompts',
    ]) {
      assert.equal(packages.has(p), false, `${p} is imported statically by the CLI`);
    }
  });
});
