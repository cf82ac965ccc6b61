/**
 * Where cronfence's own files are, whichever way it runs: from its sources
 * (this repository, through tsx), from the ESM build (dist/esm) or from the
 * CommonJS build (dist/cjs). The CommonJS build has no `import.meta`: the
 * build (scripts/build-package.mjs) replaces `import.meta.url` there with the
 * URL of the file's own `__filename`, so both builds find the same root.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type PackageBuild = 'source' | 'esm' | 'cjs';

const HERE = fileURLToPath(import.meta.url);

/** The directory holding cronfence's package.json (the repository, or node_modules/cronfence). */
export const PACKAGE_ROOT = findPackageRoot(path.dirname(HERE));

/** Which of the three this process loaded. */
export const BUILD: PackageBuild = buildOf(path.relative(PACKAGE_ROOT, HERE));

/**
 * A file of the package by its source path (`functions/tick.ts`): the source
 * itself, or its compiled counterpart in `build`.
 */
export function packageFile(sourcePath: string, build: PackageBuild = BUILD): string {
  if (build === 'source') return path.join(PACKAGE_ROOT, sourcePath);
  return path.join(PACKAGE_ROOT, 'dist', build, sourcePath.replace(/\.ts$/, '.js'));
}

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'cronfence') return dir;
    if (path.dirname(dir) === dir) throw new Error(`cronfence: no package.json named "cronfence" above ${from}`);
  }
}

function buildOf(relative: string): PackageBuild {
  const [first, second] = relative.split(path.sep);
  if (first !== 'dist') return 'source';
  if (second === 'esm' || second === 'cjs') return second;
  throw new Error(`cronfence: unexpected location of ${HERE}`);
}
