// Lint rules that encode the layering of docs/design.md. `npm run lint` runs ESLint and the Prettier check.
// Import cycles are checked by test/unit/store/layering.test.ts (the import plugins' resolvers need native
// packages the registry mirror here does not carry for every platform, which breaks `npm ci`).
import tseslint from 'typescript-eslint';

const FASTIFY = { name: 'fastify', message: 'only src/daemon uses Fastify' };
const COMMANDER = { name: 'commander', message: 'only src/cli uses commander' };
const KYSELY = { name: 'kysely', message: 'only src/store speaks SQL' };
const SQLITE = { name: 'better-sqlite3', message: 'only src/store opens the database' };

/** A relative import that climbs out of its layer into one of `layers` (the layers' sub-folders never reuse their names). */
const into = (layers, message) => ({ regex: `^(\\.\\./)+(${layers.join('|')})/`, message });

/** Dependencies point one way: cli → daemon | model, daemon → model → store; pki is a leaf. */
const restrict = (paths, patterns) => ({ 'no-restricted-imports': ['error', { paths, patterns }] });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['src/pki/**/*.ts'],
    rules: restrict(
      [FASTIFY, COMMANDER, KYSELY, SQLITE],
      [{ regex: '^\\.\\./', message: 'src/pki imports nothing of ours' }],
    ),
  },
  {
    files: ['src/store/**/*.ts'],
    rules: restrict([FASTIFY, COMMANDER], [into(['model', 'daemon', 'cli'], 'src/store is the bottom layer')]),
  },
  {
    files: ['src/model/**/*.ts'],
    rules: restrict(
      [FASTIFY, COMMANDER, KYSELY, SQLITE],
      [into(['daemon', 'cli'], 'src/model knows no HTTP server or CLI')],
    ),
  },
  {
    files: ['src/daemon/**/*.ts'],
    rules: restrict(
      [COMMANDER, KYSELY, SQLITE],
      [into(['cli', 'store'], 'src/daemon reaches the store through src/model')],
    ),
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: restrict([KYSELY, SQLITE], [into(['store'], 'src/cli reaches the store through src/model or src/daemon')]),
  },
  // API tests handle untyped JSON answers.
  { files: ['test/**/*.ts', 'bench/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
