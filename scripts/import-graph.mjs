// The relative-import graph of a package's src/, for the tests that keep its layers and forbid cycles
// (apps/server, packages/engine, packages/sdk). Imports are read as text: static imports and re-exports
// (type-only ones too), side-effect imports and dynamic imports.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

export function importSpecifiers(file) {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
}

/** The files `file` imports by relative path, absolute (`./x.js` is `./x.ts`), with the specifier written. */
export function relativeImports(file) {
  return importSpecifiers(file)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({
      specifier,
      target: path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts'),
    }));
}

/** src-relative file -> the src-relative files it imports. */
export function importGraph(src) {
  return new Map(
    sourceFiles(src).map((file) => [
      path.relative(src, file),
      relativeImports(file).map(({ target }) => path.relative(src, target)),
    ]),
  );
}

/** One cycle of the graph as `a -> b -> a`, or undefined. */
export function findCycle(graph) {
  const state = new Map();
  const trail = [];
  const visit = (node) => {
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
