// Lint rules that encode the layering of docs/design.md. `npm run lint` runs ESLint and the Prettier check.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const layer = (name) => `./src/${name}`;
const FASTIFY = { name: 'fastify', message: 'only src/daemon uses Fastify' };
const COMMANDER = { name: 'commander', message: 'only src/cli uses commander' };
const KYSELY = { name: 'kysely', message: 'only src/store speaks SQL' };
const SQLITE = { name: 'better-sqlite3', message: 'only src/store opens the database' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Dependencies point one way: cli → daemon | model, daemon → model → store; pki is a leaf.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: layer('pki'), from: './src', except: ['./pki'], message: 'src/pki imports nothing of ours.' },
            {
              target: layer('store'),
              from: [layer('model'), layer('daemon'), layer('cli')],
              message: 'src/store is the bottom layer.',
            },
            {
              target: layer('model'),
              from: [layer('daemon'), layer('cli')],
              message: 'src/model knows no HTTP server or CLI.',
            },
            {
              target: layer('daemon'),
              from: [layer('cli'), layer('store')],
              message: 'src/daemon reaches the store through src/model.',
            },
            {
              target: layer('cli'),
              from: [layer('store')],
              message: 'src/cli reaches the store through src/model or src/daemon.',
            },
          ],
        },
      ],
      'no-restricted-imports': ['error', { paths: [FASTIFY, COMMANDER, KYSELY, SQLITE] }],
    },
  },
  {
    files: ['src/daemon/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [COMMANDER, KYSELY, SQLITE] }] },
  },
  { files: ['src/cli/**/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: [KYSELY, SQLITE] }] } },
  { files: ['src/store/**/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: [FASTIFY, COMMANDER] }] } },
  { files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'], rules: { 'no-restricted-imports': 'off' } },
  // API tests handle untyped JSON answers.
  { files: ['test/**/*.ts', 'bench/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
