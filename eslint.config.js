// Flat config: typescript-eslint's recommended rules over the sources, tests and benchmarks.
// (ESLint 10 no longer bundles @eslint/js; tsc already reports undefined names and unreachable code,
// and `verbatimModuleSyntax` already makes type-only imports say `import type`, as type stripping needs.)
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['node_modules/', 'data/', 'migrations/', 'coverage/'] },
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module' },
    rules: {
      // `const { auth: _auth, ...rest } = opts` drops a field on purpose; `_`-prefixed names are deliberate.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // scripts/check-node.cjs must load on any old Node.js, so it is plain CommonJS.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
