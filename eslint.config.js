import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layering, bottom to top: each folder and the folders it may import
 * (README.md, "Layout"). What ships to Lambda and into a user's stack (core,
 * engine, aws, lambda, cdk) imports nothing that runs only on a laptop
 * (local); nothing in lib/ imports functions/, app/, scripts/, tools/ or
 * test/ or examples/ (none of them is published). The tools (tools/: the
 * drill, the bench, the meter, the repository's dev additions, their CLI; not
 * published) import lib/ and examples/, and each other only as TOOL_LAYERS says.
 * test/unit/folder-cycles.test.ts checks the folder graph for cycles as well.
 */
const LAYERS = {
  'lib/core': [],
  'lib/engine': ['lib/core'],
  // The stores compose the engine's use cases over themselves (engine/job-repository.ts); the engine imports neither.
  'lib/memory': ['lib/core', 'lib/engine'],
  'lib/aws': ['lib/core', 'lib/engine'],
  'lib/lambda': ['lib/core', 'lib/engine', 'lib/aws'],
  // `cronfence/client`: what an application imports to manage schedules at run time.
  'lib/client': ['lib/core', 'lib/engine', 'lib/aws'],
  'lib/package': ['lib/core', 'lib/engine', 'lib/aws', 'lib/lambda'],
  // The construct runs the jobs it is given and imports no example.
  'lib/cdk': ['lib/core', 'lib/engine', 'lib/aws', 'lib/lambda', 'lib/package'],
  'lib/local': ['lib/core', 'lib/engine', 'lib/aws', 'lib/lambda', 'lib/package'],
  'lib/testing': ['lib/core', 'lib/engine', 'lib/aws', 'lib/memory', 'lib/lambda', 'lib/package', 'lib/local'],
  'lib/cli': ['lib/core', 'lib/engine', 'lib/aws', 'lib/lambda', 'lib/package', 'lib/local'],
  // The package's main entry (`cronfence`): what a jobs module imports.
  'lib/index.ts': ['lib/core', 'lib/engine', 'lib/lambda'],
  functions: ['lib/lambda'],
  app: ['lib/cdk', 'lib/../examples'],
  // The example jobs, the worker entry around them (app/settlement-stack.ts), and how `npm start` runs them (dev-jobs.ts).
  'examples/jobs': ['lib/core', 'lib/engine', 'lib/aws', 'lib/lambda', 'lib/local'],
};
/** The pure core, the engine and the in-memory stores reach AWS only through ports (lib/core/ports.ts). */
const NO_AWS_SDK = ['lib/core', 'lib/engine', 'lib/memory'];
const OUTSIDE_LIB = ['functions', 'app', 'examples', 'scripts', 'test', 'bin', 'tools'];
/** The tools' folders and the other tools' folders each may import (any of lib/ is theirs to import). */
const TOOL_LAYERS = {
  'tools/meter': [],
  'tools/chaos': ['tools/meter'],
  'tools/bench': ['tools/meter'],
  'tools/dev': ['tools/meter'],
  // The simulation runs the drill's jobs, faults and checker in virtual time.
  'tools/sim': ['tools/chaos'],
  'tools/cli': ['tools/chaos', 'tools/bench', 'tools/dev', 'tools/sim'],
};
/** What a tool never imports: the Lambda entries, the app, the scripts and the tests (the example jobs it may run). */
const OUTSIDE_TOOLS = ['functions', 'app', 'scripts', 'test', 'bin'];

function layeringRules() {
  const libFolders = Object.keys(LAYERS).filter((folder) => folder.startsWith('lib/') && !folder.endsWith('.ts'));
  return Object.entries(LAYERS).map(([folder, allowed]) => {
    const forbidden = [...libFolders, ...OUTSIDE_LIB.map((name) => `lib/../${name}`)].filter(
      (other) => other !== folder && !allowed.includes(other),
    );
    const patterns = forbidden.map((other) => ({
      // A relative import whose path goes through the other folder (`../local/fleet.ts`, `../../functions/worker.ts`).
      regex: `^\\.\\.?/(.*/)?${other.split('/').at(-1)}/`,
      message: `${folder} may import only ${allowed.join(', ') || 'its own files'} (README.md, "Layout"); not ${other.replace('lib/../', '')}.`,
    }));
    if (folder.startsWith('lib/') && !folder.endsWith('.ts'))
      patterns.push({ regex: '^(\\.\\./)+index\\.ts$', message: 'lib/index.ts is the package entry; import the module itself.' });
    if (NO_AWS_SDK.includes(folder))
      patterns.push({ group: ['@aws-sdk/*'], message: 'The core and engine reach AWS only through ports; adapters live in lib/aws/.' });
    return { files: [folder.endsWith('.ts') ? folder : `${folder}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
  });
}

function toolLayeringRules() {
  return Object.entries(TOOL_LAYERS).map(([folder, allowed]) => {
    const siblings = Object.keys(TOOL_LAYERS).filter((other) => other !== folder && !allowed.includes(other));
    const patterns = [
      // A sibling is `../<name>/` from here; lib's folders are `../../lib/<name>/`, so a sibling named like one of them is not confused with it.
      ...siblings.map((other) => ({
        regex: `^\\.\\./${other.split('/').at(-1)}/`,
        message: `${folder} may import lib/ and ${allowed.join(', ') || 'no other tool'}; not ${other}.`,
      })),
      ...OUTSIDE_TOOLS.map((name) => ({
        regex: `^(\\.\\./)+${name}/`,
        message: `${folder} may import lib/ and ${allowed.join(', ') || 'no other tool'}; not ${name}/.`,
      })),
      { regex: '^(\\.\\./)+lib/index\\.ts$', message: 'lib/index.ts is the package entry; import the module itself.' },
    ];
    return { files: [`${folder}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
  });
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.venv-emulator/**',
      '.venv-localstack/**',
      '.venv-cfn-lint/**',
      '.localstack/**',
      '**/cdk.out/**',
      '.cronfence/**',
      'dist/**',
      '*.tgz',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layeringRules(),
  ...toolLayeringRules(),
  {
    // Time through one port (lib/core/clock.ts): what ships to Lambda reads the time and waits only through its Clock,
    // so a test steps it and the simulation runs it in virtual time.
    files: ['lib/core/**/*.ts', 'lib/engine/**/*.ts', 'lib/aws/**/*.ts', 'lib/lambda/**/*.ts'],
    ignores: ['lib/core/clock.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        // setImmediate stays allowed: it ends a turn of the event loop (coalescing a batch's reads), it waits for no time.
        ...['setTimeout', 'setInterval'].map((name) => ({ name, message: 'Wait through the Clock (sleep, timeout).' })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Read the time through the Clock (now).' },
        { object: 'performance', property: 'now', message: 'Read durations through the Clock (elapsed).' },
        { object: 'AbortSignal', property: 'timeout', message: 'Time out through the Clock (timeout).' },
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
