/**
 * The reference's operation lists (test/fixtures/reference/operations-*.tsv): one row per operation, its
 * columns by name, and paths normalised so a served route and a listed operation compare (`{id}` → `{}`).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const normalisedPath = (p: string): string => p.replace(/\{[^}]+\}/g, '{}').replace(/\/+$/, '') || '/';

/** The rows of `operations-<version>.tsv`, each a record of its columns. */
export function referenceOperations(version: 'v0.25.6' | 'head'): Record<string, string>[] {
  const tsv = readFileSync(
    fileURLToPath(new URL(`../fixtures/reference/operations-${version}.tsv`, import.meta.url)),
    'utf8',
  );
  const [header, ...rows] = tsv
    .trim()
    .split('\n')
    .map((l) => l.split('\t'));
  return rows.map((r) => Object.fromEntries(header!.map((name, i) => [name, r[i] ?? ''])));
}

/**
 * operationIds the current spec (0.29.0) renamed, by `METHOD path` as the TSVs spell it: a route is served with
 * the name of the spec version it advertises (`SPEC_VERSION`), and checked against the other list's spelling here.
 */
export const RENAMED_IN_HEAD: Record<string, { old: string; current: string; why: string }> = {
  'POST /edge/client/v1/enroll/updb': {
    old: 'ernollUpdb',
    current: 'enrollUpdb',
    why: "0.25.6's misspelling, corrected in 0.29.0",
  },
};
