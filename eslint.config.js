import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.venv-emulator/**', '.venv-localstack/**', '.localstack/**', '**/cdk.out/**', '.cronfence/**', 'dist/**', '*.tgz'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The pure core and the engine talk to AWS only through ports (lib/core/ports.ts); the in-memory
    // stores implement those ports without AWS, so a unit test (or cronfence/testing) never loads the SDK.
    files: ['lib/core/**/*.ts', 'lib/engine/**/*.ts', 'lib/memory/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@aws-sdk/*'], message: 'The core and engine reach AWS only through ports; adapters live in lib/aws/.' },
            { group: ['**/aws/*', '**/runtime/*', '**/cli/*'], message: 'The core and engine depend on ports, not adapters.' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // A focused or skipped test hides the rest; CI must run everything.
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only' },
        { object: 'it', property: 'skip' },
        { object: 'describe', property: 'only' },
        { object: 'describe', property: 'skip' },
        { object: 'test', property: 'only' },
        { object: 'test', property: 'skip' },
      ],
    },
  },
);
