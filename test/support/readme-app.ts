/**
 * The README's "Use it in your CDK app" code blocks, the files a team writes:
 * the blocks that open with `// <path>`, by path. test/package writes them
 * into a `cdk init` app with the packed cronfence; test/artifacts synthesizes
 * them against the sources.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The README's "Use it in your CDK app" code blocks that open with `// <path>`, by path. */
export function readmeFiles(): Map<string, string> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Use it in your CDK app'),
    readme.indexOf('\n## ', readme.indexOf('## Use it in your CDK app') + 3),
  );
  const files = new Map<string, string>();
  for (const [, body] of section.matchAll(/```ts\n([^]*?)```/g)) {
    const [first, ...rest] = (body ?? '').split('\n');
    const file = /^\/\/ (\S+)$/.exec(first ?? '')?.[1];
    if (file) files.set(file, rest.join('\n'));
  }
  return files;
}

/**
 * Writes the README's files into `dir`, each passed through `rewrite` (identity by default).
 * @returns their paths, sorted.
 */
export function writeReadmeFiles(dir: string, rewrite: (file: string, text: string) => string = (_, text) => text): string[] {
  const files = readmeFiles();
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), rewrite(file, text));
  }
  return [...files.keys()].sort();
}
