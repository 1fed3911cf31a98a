// Lint rules: the recommended sets of ESLint and typescript-eslint, nothing exotic.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'bench/results/', 'web/dist/', 'web/src/api/schema.d.ts', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The console runs in the browser.
  { files: ['web/**/*.{ts,tsx}'], languageOptions: { globals: globals.browser } },
  // Tests build and mutate arbitrary JSON on purpose.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
)
