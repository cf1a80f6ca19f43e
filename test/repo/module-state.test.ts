/**
 * No module of src/ keeps mutable state of its own: every cache, counter, queue and listener belongs to the
 * runtime of an open store (src/store/runtime.ts) or to an object its caller holds, so two stores in one process
 * never share anything and nothing outlives the store that filled it. A top-level `let`/`var`, or a top-level
 * `const` holding a new object (a Map, a Set, a class instance) is mutable state unless typed `Readonly…`; the few justified ones are
 * listed below with their reason, and an entry that no longer matches anything fails too (the list stays true).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [relative(root, p)] : [];
  });

/** `file: name` → why it may stay. */
const JUSTIFIED: Record<string, string> = {
  'src/store/runtime.ts: runtimes': 'the registry that finds a store’s runtime from its executor (weakly held)',
  'src/store/lock.ts: held': 'the lock files this process holds: a property of the process, not of a store',
  'src/store/checkpointer.ts: db': 'the worker thread’s own connection (the module is a worker entry point)',
  'src/store/file-integrity.ts: db': 'the worker thread’s own connection (the module is a worker entry point)',
  'src/store/crud.ts: storedByProps': 'memo of a resource definition’s stored properties, keyed by the definition',
  'src/store/schema-objects.ts: references':
    'what the migrations create (in an empty SQLite database, or on a PostgreSQL server), keyed by the migrations, the kind, the server’s environment and the applied list (depends only on its key; bounded)',
  'src/model/ids.ts: next': 'position in a pool of random bytes (entropy, not data)',
  'src/model/password.ts: dummyHashes': 'memo of constants: the hash compared against for unknown users, per cost',
  'src/model/json-schema.ts: ajv': 'the compiler of JSON schemas; its registry follows the cache below',
  'src/model/json-schema.ts: cache': 'compiled validators by schema text (depends only on its key; bounded)',
  'src/model/ca/trust.ts: parsed': 'parsed certificates by PEM text (depends only on its key; bounded)',
  'src/model/access/engine.ts: keys': 'memo of a policy id list’s joined key, keyed by the (immutable) list',
  'src/model/services/session/session-routers.ts: sessionRouterLists':
    'memo of a rendering, keyed by the (immutable) objects it is rendered from',
  'src/model/services/ext-jwt/ext-jwt-secondary.ts: evidence': 'side data of one request, keyed by its body object',
  'src/daemon/http/route.ts: principals': 'side data of one request, keyed by the request',
  'src/daemon/http/envelope.ts: envelopes': 'memo of an encoding, keyed by the (immutable) text it encodes',
};

const TOP_LET = /^(?:export )?(?:let|var) ([A-Za-z_$][\w$]*)/;
const TOP_NEW = /^(?:export )?const ([A-Za-z_$][\w$]*)(?:\s*:\s*([^=]+))?\s*=\s*new ([A-Za-z_$][\w$.]*)/;
/** Constructors whose instances are values, not state; a map or set typed `Readonly…` is a constant table. */
const VALUES: ReadonlySet<string> = new Set(['RegExp', 'TextEncoder', 'TextDecoder', 'URL']);
const isValue = (m: RegExpExecArray): boolean => VALUES.has(m[3]!) || /^Readonly/.test(m[2] ?? '');

function findings(): string[] {
  const out: string[] = [];
  for (const file of walk(join(root, 'src'))) {
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
      const name =
        TOP_LET.exec(line)?.[1] ??
        (() => {
          const m = TOP_NEW.exec(line);
          return m && !isValue(m) ? m[1] : undefined;
        })();
      if (name) out.push(`${file}: ${name}`);
    }
  }
  return out;
}

test('src/ keeps no module-level mutable state beyond the justified exceptions', () => {
  const found = findings();
  assert.deepEqual(
    found.filter((f) => !(f in JUSTIFIED)),
    [],
    'move this state into the store runtime (defineCache/storeCache in src/store/runtime.ts) or the caller',
  );
  assert.deepEqual(
    Object.keys(JUSTIFIED).filter((j) => !found.includes(j)),
    [],
    'these exceptions no longer exist: drop them from the list',
  );
});

test('the detector sees top-level let, var and new objects, and leaves values and locals alone', () => {
  const sample = [
    'let a = 1;',
    'export var b;',
    'const c = new Map<string, number>();',
    'export const d: Foo = new Thing();',
    'const E = new RegExp("x");',
    '  let f = 2;',
    'const g = Object.freeze({});',
    'const H: ReadonlySet<string> = new Set(["x"]);',
  ];
  const names = sample.flatMap((line) => {
    const name = TOP_LET.exec(line)?.[1] ?? TOP_NEW.exec(line)?.[1];
    const m = TOP_NEW.exec(line);
    return name && !(m && isValue(m)) ? [name] : [];
  });
  assert.deepEqual(names, ['a', 'b', 'c', 'd']);
});
