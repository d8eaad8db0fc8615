// Lint rules for the TypeScript service code. The subgraph's AssemblyScript is
// checked by `graph build`, not here: its types (i32, BigInt from graph-ts) are not TypeScript's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'subgraph/src/',
      'subgraph/generated/',
      'subgraph/build/',
      'data/',
      '**/build/',
      'coverage/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
);
