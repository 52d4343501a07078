// ESLint: JavaScript's and typescript-eslint's recommended rules (without type information, so that a run takes
// seconds on a busy CI machine), formatting left to Prettier (eslint-config-prettier turns ESLint's off).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'release/', 'bench/data/', '**/*.generated.ts', '**/*.as.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      globals: {
        fetch: 'readonly',
        console: 'readonly',
        process: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        WebAssembly: 'readonly',
        globalThis: 'readonly',
        require: 'readonly',
      },
    },
    rules: {
      // Matching ANSI sequences is part of the job (output tests, the live block).
      'no-control-regex': 'off',
      // Unused is an error, except arguments named _ and catch bindings (the TypeScript compiler agrees).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  // Promises checked with type information where bds's own code runs (src/, scripts/, bench/): a promise left
  // floating or handed where a callback's result is ignored loses its error, in code built on abort signals
  // and streams. Only these rules: the rest of the type-checked set would cost more seconds than it finds.
  {
    files: ['src/**/*.ts', 'scripts/**/*.js', 'bench/**/*.js'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  // Tests parse JSON that bds printed: `any` is what JSON.parse gives.
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  // bin/ is CommonJS (bin/package.json): `bds --version` and `--help` answer before Node's ES module loader
  // starts. So is the standalone binary's main script.
  {
    files: ['bin/**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { exports: 'writable', module: 'writable', __filename: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // The benchmark's data generator writes a record as one comma-separated run of byte writes, to read like the line.
  { files: ['bench/generate.js'], rules: { '@typescript-eslint/no-unused-expressions': 'off' } },
);
