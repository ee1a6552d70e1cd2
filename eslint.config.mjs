// ESLint for src, test, bench and the root scripts (`npm run lint`). Formatting is Prettier's
// job: eslint-config-prettier, last, turns off every rule that would fight it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['dist/', 'node_modules/', 'neo4j/target/', '.mnemograph/', 'bench/results/', 'bench/cache/', 'coverage/', 'studio/dist/', 'scratch/'],
  },
  js.configs.recommended,
  // Type-aware: the promise rules below need the checker. The type-checked recommended set,
  // not `strictTypeChecked`: strict adds ~600 findings on sound code, 363 of them the `!` that
  // noUncheckedIndexedAccess asks for and 160 numbers in template strings.
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    // import-x follows only files with these extensions, parsed by the TypeScript parser;
    // node's resolution with .ts added finds our extensionless relative imports.
    settings: {
      'import-x/extensions': ['.ts', '.js', '.cjs', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.d.ts', '.js', '.json', '.node'] })],
    },
    rules: {
      // A promise nobody awaits loses its error (an unhandled rejection kills the process).
      // `void p` marks the ones that are fire-and-forget on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a void callback is expected (express handlers, http servers,
      // event emitters, timers): its rejection goes nowhere.
      '@typescript-eslint/no-misused-promises': 'error',
      // Value-level cycles, in the editor. It skips `import type` edges, which the
      // issue counts too: `npm run cycles` (madge, type imports included) is the full check.
      'import-x/no-cycle': 'error',
      'import-x/no-self-import': 'error',
      // tsc reports unused locals and parameters already (noUnusedLocals, noUnusedParameters,
      // with its `_` convention); a second report under other rules is noise.
      '@typescript-eslint/no-unused-vars': 'off',
      // In-memory implementations of async contracts (working memory, the rules extractor, test
      // doubles) and sync probes passed to async pollers are async without awaiting: all 23 of its findings.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read untyped JSON (response bodies, the OpenAPI document, pg rows) and assert on
    // it: the assertion is the check, so `any` there is the point, not a leak.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The root scripts are plain CommonJS run by node: no type information, node's globals.
    files: ['**/*.js', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', exports: 'writable', __dirname: 'readonly', __filename: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The studio's build script runs in node.
    files: ['studio/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', performance: 'readonly' } },
  },
  prettier,
);
