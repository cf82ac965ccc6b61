/**
 * The layout's folder graph has no cycle, and nothing in lib/ reaches into
 * the entries, the app, the examples, the scripts, the tools or the tests (eslint's
 * layering rule checks the direction of static imports; this also sees
 * `import()` and catches a cycle the layer table might allow).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeCycle, folderCycles, folderOf, readFolderGraph } from '../support/folder-graph.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PRODUCT = ['lib', 'functions', 'app', 'examples/jobs', 'bin', 'scripts', 'tools'];

describe('folder graph', () => {
  const graph = readFolderGraph(ROOT, PRODUCT);

  it('reads the imports it checks', () => {
    expect(graph.edges.get('lib/lambda')?.has('lib/engine')).toBe(true);
    expect(graph.edges.get('lib/cli')?.has('lib/local')).toBe(true);
    expect(graph.edges.get('tools/cli')?.has('tools/chaos')).toBe(true);
    expect(graph.edges.get('tools/chaos')?.has('lib/engine')).toBe(true);
  });

  it('has no folder-level import cycle', () => {
    const cycles = folderCycles(graph);
    expect(cycles.map((cycle) => describeCycle(graph, cycle)).join('\n')).toBe('');
  });

  it('lib/ imports nothing from functions/, app/, scripts/, bin/, tools/, examples/ or test/', () => {
    const outward = graph.imports.filter((edge) => edge.from.startsWith('lib/') && !edge.to.startsWith('lib/'));
    expect(outward.map((edge) => `${edge.from} -> ${edge.to}`)).toEqual([]);
    // The construct runs the jobs it is given: neither it nor anything it bundles reaches an example.
    for (const folder of ['lib/core', 'lib/engine', 'lib/aws', 'lib/lambda', 'lib/package', 'lib/cdk'])
      expect(graph.edges.get(folder)?.has('examples') ?? false).toBe(false);
  });

  it('nothing imports functions/ (they are Lambda entries)', () => {
    const inward = graph.imports.filter((edge) => edge.to.startsWith('functions/') && !edge.from.startsWith('functions/'));
    expect(inward.map((edge) => `${edge.from} -> ${edge.to}`)).toEqual([]);
  });

  it('catches a real cycle, through a dynamic import too, and names the imports', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'cronfence-cycle-'));
    for (const dir of ['lib/a', 'lib/b', 'lib/c']) mkdirSync(path.join(root, dir), { recursive: true });
    writeFileSync(path.join(root, 'lib/a/one.ts'), "import { two } from '../b/two.ts';\nexport const one = two;\n");
    writeFileSync(path.join(root, 'lib/b/two.ts'), "export const two = 2;\nexport const later = () => import('../c/three.ts');\n");
    writeFileSync(path.join(root, 'lib/c/three.ts'), "export { one } from '../a/one.ts';\n");
    const cycles = folderCycles(readFolderGraph(root, ['lib']));
    expect(cycles).toEqual([['lib/a', 'lib/b', 'lib/c']]);
    expect(describeCycle(readFolderGraph(root, ['lib']), cycles[0] ?? [])).toContain('lib/b -> lib/c: lib/b/two.ts -> lib/c/three.ts');
  });

  it('names folders as the layout does', () => {
    expect(folderOf('lib/aws/dynamo/claim-slice.ts')).toBe('lib/aws');
    expect(folderOf('lib/index.ts')).toBe('lib/index.ts');
    expect(folderOf('functions/worker.ts')).toBe('functions');
    expect(folderOf('tools/chaos/drill.ts')).toBe('tools/chaos');
  });
});
