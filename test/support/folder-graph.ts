/**
 * The repository's import graph, folder by folder: every relative import
 * (static, `export ... from`, and `import()` with a literal path) of every
 * .ts/.mjs file below the given roots, read with the TypeScript compiler's
 * own pre-processor, and the folder-level cycles in it (Tarjan's strongly
 * connected components). A folder is `lib/<name>` or `tools/<name>`, a file
 * directly in lib/ (`lib/index.ts`), or a top-level directory (`functions`,
 * `scripts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

export interface FolderGraph {
  /** folder -> the folders it imports, each with the file-level imports that make the edge. */
  readonly edges: ReadonlyMap<string, ReadonlyMap<string, readonly ImportEdge[]>>;
  readonly imports: readonly ImportEdge[];
}

/** Repository-relative folder of a repository-relative file. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'lib' || parts[0] === 'tools') return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
  return parts.length > 1 ? (parts[0] ?? file) : '.';
}

/** @param root the repository; @param dirs the top-level directories to read. */
export function readFolderGraph(root: string, dirs: readonly string[]): FolderGraph {
  const imports: ImportEdge[] = [];
  for (const dir of dirs) {
    for (const file of sourceFiles(path.join(root, dir))) {
      const from = path.relative(root, file).split(path.sep).join('/');
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const to = path
          .relative(root, path.resolve(path.dirname(file), fileName))
          .split(path.sep)
          .join('/');
        imports.push({ from, to });
      }
    }
  }
  const edges = new Map<string, Map<string, ImportEdge[]>>();
  for (const edge of imports) {
    const [a, b] = [folderOf(edge.from), folderOf(edge.to)];
    if (a === b) continue;
    const out = edges.get(a) ?? new Map<string, ImportEdge[]>();
    edges.set(a, out);
    out.set(b, [...(out.get(b) ?? []), edge]);
  }
  return { edges, imports };
}

/** Each set of folders that import one another in a circle (a strongly connected component larger than one). */
export function folderCycles(graph: FolderGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const nodes = new Set([...graph.edges.keys(), ...[...graph.edges.values()].flatMap((out) => [...out.keys()])]);
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top);
      component.push(top);
      if (top === node) break;
    }
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** A cycle, readable: every edge inside it with up to two of the imports that make it. */
export function describeCycle(graph: FolderGraph, cycle: readonly string[]): string {
  const members = new Set(cycle);
  const lines = [`cycle between ${cycle.join(', ')}:`];
  for (const a of cycle) {
    for (const [b, edges] of graph.edges.get(a) ?? []) {
      if (members.has(b))
        lines.push(
          `  ${a} -> ${b}: ${edges
            .slice(0, 2)
            .map((edge) => `${edge.from} -> ${edge.to}`)
            .join('; ')}`,
        );
    }
  }
  return lines.join('\n');
}

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return /\.(ts|mts|cts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}
