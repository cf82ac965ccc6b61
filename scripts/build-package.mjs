#!/usr/bin/env node
// Builds the package (npm's `prepare` and `prepack`, and CI through `npm test`):
//   dist/esm  tsc's ESM output with .d.ts (tsconfig.build.json; `.ts` import specifiers become `.js`),
//   dist/cjs  the same modules as CommonJS, for `require` (jest, a CommonJS CDK app's tsx), transformed
//             from dist/esm by esbuild, module by module (one instance of each class, as in ESM). Only the
//             modules the CommonJS entry points reach are built; the CLI stays ESM.
// CommonJS has no `import.meta`: there `import.meta.url` becomes the URL of the module's own __filename.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const esm = path.join(root, 'dist', 'esm');
const cjs = path.join(root, 'dist', 'cjs');
/** The modules `require('cronfence…')` starts from, and the replica `cronfence dev` forks for a CommonJS jobs module. */
const CJS_ENTRIES = [
  'lib/index.js',
  'lib/cdk/index.js',
  'lib/lambda/index.js',
  'lib/testing/index.js',
  'lib/client/index.js',
  'lib/local/dev-replica.js',
  'lib/package/describe-jobs-module.js',
];
const META_URL = '__cronfenceImportMetaUrl';

const started = Date.now();
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
);
writeFileSync(path.join(esm, 'package.json'), '{ "type": "module" }\n');
const declarations = walk(esm).filter((file) => file.endsWith('.d.ts'));
for (const file of declarations) writeFileSync(file, rewriteSpecifiers(readFileSync(file, 'utf8')));

const graph = await esbuild.build({
  entryPoints: CJS_ENTRIES.map((entry) => path.join(esm, entry)),
  bundle: true,
  write: false,
  outdir: path.join(root, 'dist', 'graph'),
  metafile: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  logLevel: 'error',
});
const modules = Object.keys(graph.metafile.inputs).map((input) => path.resolve(root, input));
for (const file of modules) {
  const relative = path.relative(esm, file);
  const out = path.join(cjs, relative);
  mkdirSync(path.dirname(out), { recursive: true });
  const result = await esbuild.transform(readFileSync(file, 'utf8'), {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcefile: relative,
    define: { 'import.meta.url': META_URL },
    // Keep import() native: Node's CommonJS has it, and esbuild's require() stand-in cannot load a file URL.
    supported: { 'dynamic-import': true },
    banner: `const ${META_URL} = require('node:url').pathToFileURL(__filename).href;`,
    logLevel: 'error',
  });
  writeFileSync(out, result.code);
}
for (const file of declarations) {
  const out = path.join(cjs, path.relative(esm, file));
  mkdirSync(path.dirname(out), { recursive: true });
  copyFileSync(file, out);
}
writeFileSync(path.join(cjs, 'package.json'), '{ "type": "commonjs" }\n');
process.stdout.write(
  `cronfence: built dist/esm and dist/cjs (${modules.length} CommonJS modules) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);

/** Relative `.ts` specifiers in declarations (tsc rewrites them only in JavaScript). */
function rewriteSpecifiers(text) {
  return text.replace(/(from\s+|import\()(['"])(\.\.?\/[^'"]+)\.ts\2/g, '$1$2$3.js$2');
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}
