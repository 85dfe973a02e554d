// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first. A folder may import its own files and the layers listed in
 * its `may` set, nothing else: data flows one way (adapters and the CLI build invocations, the
 * runner decides, the ledger stores; reports, replay, console and telemetry read the ledger).
 * The console and telemetry folders are readers that only the CLI imports.
 */
const LAYERS = {
  domain: [],
  runtimes: ['domain'],
  // The runner declares what it records into (runner/recorder.ts); every ledger engine implements it.
  runner: ['domain', 'runtimes'],
  ledger: ['domain', 'runtimes', 'runner'],
  reports: ['domain', 'runtimes', 'runner', 'ledger'],
  replay: ['domain', 'runtimes', 'runner', 'ledger'],
  adapters: ['domain', 'runtimes', 'runner', 'ledger', 'config'],
  config: ['domain', 'runtimes'],
  demo: ['domain', 'runtimes'],
  console: ['domain', 'runtimes', 'runner', 'ledger', 'reports', 'replay'],
  telemetry: ['domain', 'runtimes', 'runner', 'ledger', 'reports'],
  // ship reads the local ledger and writes the central one (docs/ship.md); only the CLI starts it.
  ship: ['domain', 'runtimes', 'runner', 'ledger'],
  cli: ['domain', 'runtimes', 'runner', 'ledger', 'reports', 'replay', 'adapters', 'config', 'demo', 'console', 'telemetry', 'ship'],
};
const FOLDERS = Object.keys(LAYERS);

const NODE_GLOBALS = [
  'process',
  'console',
  'Buffer',
  'URL',
  'AbortSignal',
  'AbortController',
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'queueMicrotask',
  'structuredClone',
  'fetch',
];

/** One no-restricted-imports block per folder: every other src/ folder it may not reach. */
function boundary(folder) {
  const banned = FOLDERS.filter((other) => other !== folder && !LAYERS[folder].includes(other));
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Relative imports only (the tree has no path aliases): ../ledger/x.js, ../../cli/io.js.
              regex: `^(\\.\\./)+(${banned.join('|')})/`,
              message: `src/${folder}/ may import only ${LAYERS[folder].join(', ') || 'its own files'} (see CONTRIBUTING: layers).`,
            },
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'migrations/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain JavaScript (bin/, fixtures) runs on Node: its globals (TypeScript files get them from @types/node).
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: Object.fromEntries(NODE_GLOBALS.map((name) => [name, 'readonly'])) },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  ...FOLDERS.map(boundary),
  {
    // src/index.ts is the library's API: everything but the CLI.
    files: ['src/index.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^\\./cli/', message: 'the library API does not expose the CLI' }] }],
    },
  },
);
