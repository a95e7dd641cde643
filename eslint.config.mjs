// ESLint flat config: typescript-eslint's type-aware recommended rules plus the house rules of STYLE.md that a
// linter can check. Layout is prettier's job (`npm run format:check`), so no rule here is about formatting; the
// import graph between layers is checked by test/layering.test.ts.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'coverage/', 'doclayer-data/', 'test-data/', 'tmp/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        // `typeof import('lmdb')` types a lazy require(); see no-require-imports below.
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/consistent-type-exports': 'error',
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A caught error is `unknown`; passing it on as a rejection is not inventing a non-Error reason.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Node-RED calls a node's constructor with `this`; its API is used through a `node` alias by convention.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['node'] }],
      // Optional and native packages (foundationdb, lmdb) are loaded lazily with require() on purpose, so that
      // using one engine never loads another's native module.
      '@typescript-eslint/no-require-imports': 'off',
      // Engines implement Promise-returning interfaces with async methods that need no await: an async method
      // turns a synchronous throw into a rejection, which callers rely on.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Node's global `Buffer` is a getter on globalThis: optimized code calls it on every use (about 3.5% of a
    // memory-engine list push, counted in instructions; docs/performance.md, "The fifteenth round"). The
    // library imports it from 'node:buffer' instead; a type-only use needs no import.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: "import { Buffer } from 'node:buffer': the global Buffer is a getter that optimized code calls on every use." },
      ],
    },
  },
  {
    // `export =` of a function merged with a namespace is how a CommonJS module (Node-RED loads
    // `require('doclayer/node-red')` as the store factory) also exports types.
    files: ['src/node-red/index.ts'],
    rules: { '@typescript-eslint/no-namespace': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
