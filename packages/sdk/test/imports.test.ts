import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The src-relative files a file imports by relative path, type-only imports and re-exports included. */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) =>
    path.relative(SRC, path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts')),
  );
}

/** One cycle of the graph as `a -> b -> a`, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'visiting') return [...trail.slice(trail.indexOf(node)), node];
    state.set(node, 'visiting');
    trail.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('the SDK source imports', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [path.relative(SRC, file), importedFiles(file)]));

  it('name source files', () => {
    expect(graph.get('client.ts')).toEqual(expect.arrayContaining(['resources.ts', 'request.ts', 'generated/openapi.ts']));
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`));
    expect(missing).toEqual([]);
  });

  it('have no cycles', () => {
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined();
  });
});
