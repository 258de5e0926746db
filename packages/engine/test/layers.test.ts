import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

/**
 * The engine's layers, lowest first: a file may import its own unit and the units before it. The
 * base is the top-level helpers every layer uses; index.ts, dsp.ts and cli.ts are the entry points.
 * A new folder or top-level file fails the test until it is placed here. phrase/ (the phrase check's text
 * side: vocabulary, normaliser, match score) sits beside features/: pure functions the models can use.
 */
const LAYERS: string[][] = [
  ['errors.ts', 'limits.ts', 'package-dir.ts', 'math.ts'],
  ['audio'],
  ['features', 'phrase'],
  ['models'],
  ['scoring'],
  ['runtime'],
  ['index.ts', 'dsp.ts', 'cli.ts'],
  ['tools'],
];
const rankOf = new Map(LAYERS.flatMap((units, rank) => units.map((unit) => [unit, rank] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The src-relative files a file imports by relative path: static imports and re-exports (type-only ones too) and dynamic imports. */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) =>
    path.relative(SRC, path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts')),
  );
}

/** A src-relative file's unit: its top-level folder, or the file itself at the top. */
const unitOf = (file: string): string => file.split(path.sep)[0]!;

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

describe('engine layers', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [path.relative(SRC, file), importedFiles(file)]));

  it('every relative import names a source file', () => {
    expect(graph.get(path.join('runtime', 'engine.ts'))).toEqual(expect.arrayContaining([path.join('scoring', 'probe-score.ts')]));
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`));
    expect(missing).toEqual([]);
  });

  it('every folder and top-level file has a layer', () => {
    expect([...new Set([...graph.keys()].map(unitOf))].filter((unit) => !rankOf.has(unit))).toEqual([]);
  });

  it('no file imports from a higher layer', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => rankOf.get(unitOf(target))! > rankOf.get(unitOf(file))!).map((target) => `${file} imports ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('the import graph has no cycles', () => {
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined();
  });
});
