#!/usr/bin/env node
// Builds the one-file `edgectl` executable (README.md, "The one-file binary"; docs/decisions.md, "The one-file
// binary"): esbuild bundles the CLI into one CommonJS script, Node makes it a single-executable-application blob
// with the native addons as assets, and postject injects the blob into a copy of the running `node`.
// Usage: node scripts/build-binary.mjs [--out FILE]   (default dist/edgectl)
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = join(ROOT, 'scripts', 'sea', 'entry.ts');
const NATIVE = join(ROOT, 'scripts', 'sea', 'native-addon.ts');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function parseArgs(argv) {
  let out = join(ROOT, 'dist', 'edgectl');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out = resolve(argv[++i]);
    else throw new Error(`usage: build-binary.mjs [--out FILE] (unexpected ${argv[i]})`);
  }
  return { out };
}

/**
 * Every `.node` file the bundle reaches becomes a SEA asset, and the module that required it becomes a call
 * to the loader of scripts/sea/native-addon.ts. better-sqlite3 finds its addon through `bindings` (which walks
 * the disk from its caller's path), so `bindings` is replaced by a lookup of the one addon it may name.
 */
function nativeAddons(assets) {
  const keyOf = (file) => {
    const key = `native/${basename(file)}`;
    if (assets[key] && assets[key] !== file)
      throw new Error(`two native addons named ${basename(file)}: ${assets[key]} and ${file}`);
    assets[key] = file;
    return key;
  };
  const sqlite = require.resolve('better-sqlite3/build/Release/better_sqlite3.node');
  const load = (key) => `module.exports = require(${JSON.stringify(NATIVE)}).loadNativeAsset(${JSON.stringify(key)});`;
  return {
    name: 'edgectl-native-addons',
    setup(b) {
      b.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'edgectl-native' }));
      b.onLoad({ filter: /^bindings$/, namespace: 'edgectl-native' }, () => ({
        contents: [
          `const { loadNativeAsset } = require(${JSON.stringify(NATIVE)});`,
          'module.exports = (name) => {',
          `  if (String(name).replace(/\\.node$/, '') !== 'better_sqlite3') throw new Error('no embedded addon ' + name);`,
          `  return loadNativeAsset(${JSON.stringify(keyOf(sqlite))});`,
          '};',
        ].join('\n'),
        resolveDir: ROOT,
        loader: 'js',
      }));
      b.onLoad({ filter: /\.node$/, namespace: 'file' }, (args) => ({
        contents: load(keyOf(args.path)),
        resolveDir: ROOT,
        loader: 'js',
      }));
    },
  };
}

/**
 * In the binary `require` loads built-in modules only (and warns on anything else), so nothing may be left to
 * resolve at run time. The dependencies' optional requires that do not resolve here (another platform's addon
 * package, an optional peer) become modules that throw MODULE_NOT_FOUND, which is what their try blocks expect.
 */
function noRuntimeRequires(missing) {
  const builtin = new Set(builtinModules);
  return {
    name: 'edgectl-no-runtime-requires',
    setup(b) {
      // Package names and addon files only (relative JS imports inside a package are there), and only from
      // dependencies: an import of ours that does not resolve is esbuild's own build error.
      b.onResolve({ filter: /^[^./]|\.node$/ }, async (args) => {
        if (args.pluginData?.inner || args.kind === 'entry-point' || args.namespace !== 'file') return undefined;
        if (args.path.startsWith('node:') || builtin.has(args.path)) return undefined;
        if (!relative(ROOT, args.importer).split(sep).includes('node_modules')) return undefined;
        const r = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { inner: true },
        });
        if (r.errors.length === 0) return undefined;
        missing.push(`${args.path} (${relative(ROOT, args.importer)})`);
        return { path: args.path, namespace: 'edgectl-missing' };
      });
      b.onLoad({ filter: /.*/, namespace: 'edgectl-missing' }, (args) => ({
        contents: `const e = new Error(${JSON.stringify(`Cannot find module '${args.path}' (not in the binary)`)}); e.code = 'MODULE_NOT_FOUND'; throw e;`,
        loader: 'js',
      }));
    },
  };
}

async function bundle(work) {
  const assets = {};
  const missing = [];
  const outfile = join(work, 'edgectl.cjs');
  const result = await build({
    entryPoints: [ENTRY],
    outfile,
    bundle: true,
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    format: 'cjs',
    // Stack traces and `err.name` checks keep their names.
    keepNames: true,
    legalComments: 'none',
    // Nothing in the bundle may look for files beside itself: ESM `import.meta.url` means the executable.
    define: { 'import.meta.url': '__edgectlImportMetaUrl' },
    banner: { js: 'var __edgectlImportMetaUrl = require("node:url").pathToFileURL(process.execPath).href;' },
    plugins: [nativeAddons(assets), noRuntimeRequires(missing)],
    logLevel: 'error',
    metafile: true,
  });
  if (result.warnings.length > 0) {
    throw new Error(
      `esbuild warnings:\n${result.warnings.map((w) => `${w.location?.file ?? ''}: ${w.text}`).join('\n')}`,
    );
  }
  if (process.env.EDGECTL_BUILD_VERBOSE) console.log(`left out (optional, absent here):\n  ${missing.join('\n  ')}`);
  if (!assets['native/better_sqlite3.node']) throw new Error('the SQLite addon was not reached by the bundle');
  return { outfile, assets };
}

async function main() {
  if (process.platform !== 'linux') throw new Error('the one-file binary is built on and for Linux only');
  const { out } = parseArgs(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'edgectl-sea-'));
  try {
    const started = Date.now();
    const step = (what) =>
      process.env.EDGECTL_BUILD_VERBOSE && console.log(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
    const { outfile, assets } = await bundle(work);
    step('bundled');
    const blob = join(work, 'sea-prep.blob');
    const config = {
      main: outfile,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      assets,
    };
    writeFileSync(join(work, 'sea-config.json'), JSON.stringify(config, null, 2));
    try {
      execFileSync(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], { stdio: 'pipe' });
    } catch (e) {
      throw new Error(`blob generation failed: ${e.stderr ?? e.message}`);
    }

    step('blob written');
    // Built beside the target and renamed into place, so a half-written executable is never at `out`.
    mkdirSync(dirname(out), { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    copyFileSync(process.execPath, tmp);
    chmodSync(tmp, 0o755);
    // postject's CLI in a child: its ELF parser reports harmless notes on stderr, shown only if it fails.
    const postject = join(dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
    try {
      execFileSync(process.execPath, [postject, tmp, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE], {
        stdio: 'pipe',
      });
    } catch (e) {
      rmSync(tmp, { force: true });
      throw new Error(`postject failed: ${e.stderr ?? e.message}`);
    }
    step('blob injected');
    renameSync(tmp, out);
    const mb = (statSync(out).size / 1024 / 1024).toFixed(1);
    console.log(
      `built ${out} (${mb} MiB, Node ${process.version}, ${Object.keys(assets).length} native addons) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`build-binary: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
