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

/** Every module specifier of the file: static imports and re-exports (type-only ones too) and dynamic imports. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

/** The source files the file imports by relative path (`./x.js` is `./x.ts`). */
function importedFiles(file: string): Array<{ specifier: string; target: string }> {
  return specifiers(file)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({ specifier, target: path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts') }));
}

/** The unit of src/ a file belongs to: its top-level folder, or the file's own name at the top (`deps.ts`). */
const unitOf = (file: string): string => path.relative(SRC, file).split(path.sep)[0]!;

/** The top-level folder of src/ each relative import of the file lands in. */
function importedFolders(file: string): Array<{ specifier: string; folder: string }> {
  return importedFiles(file).map(({ specifier, target }) => ({ specifier, folder: unitOf(target) }));
}

function violations(layer: string, forbidden: string[]): string[] {
  return sourceFiles(path.join(SRC, layer)).flatMap((file) =>
    importedFolders(file)
      .filter(({ folder }) => forbidden.includes(folder))
      .map(({ specifier }) => `${path.relative(SRC, file)} imports ${specifier}`),
  );
}

/**
 * What each unit of src/ may import besides itself, lowest first. A new folder or top-level file
 * fails the test until it is placed here.
 */
const ALLOWED: Record<string, string[]> = {
  'config.ts': [],
  'errors.ts': [],
  observability: [],
  db: [],
  repositories: ['db'],
  security: ['config.ts', 'db', 'repositories'],
  'deps.ts': ['config.ts', 'db', 'observability', 'security'],
  decisions: ['config.ts', 'deps.ts', 'db', 'repositories', 'security'],
  workers: ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'repositories', 'security', 'decisions'],
  services: ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'repositories', 'security', 'decisions'],
  streams: ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'repositories', 'security', 'decisions', 'services'],
  http: ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'repositories', 'security'],
  routes: ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'repositories', 'security', 'services', 'http'],
  'app.ts': ['config.ts', 'errors.ts', 'deps.ts', 'observability', 'http', 'routes'],
  'worker-app.ts': ['config.ts', 'errors.ts', 'deps.ts', 'observability', 'http'],
  'runtime.ts': ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'security', 'workers', 'streams'],
  'serve.ts': ['config.ts', 'errors.ts', 'deps.ts', 'observability', 'http', 'services', 'app.ts', 'worker-app.ts', 'runtime.ts'],
  cli: ['config.ts', 'errors.ts', 'db', 'observability', 'repositories', 'security', 'services', 'runtime.ts', 'serve.ts'],
  'main.ts': ['cli'],
};

/** One import cycle of the graph as `a -> b -> a` (src-relative paths), or undefined when there is none. */
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

function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC);
  return new Map(files.map((file) => [path.relative(SRC, file), importedFiles(file).map(({ target }) => path.relative(SRC, target))]));
}

describe('layers', () => {
  it('finds the imports it is meant to police', () => {
    expect(importedFolders(path.join(SRC, 'app.ts')).map((i) => i.folder)).toEqual(expect.arrayContaining(['http', 'routes']));
    // type-only imports count
    expect(importedFolders(path.join(SRC, 'deps.ts')).map((i) => i.folder)).toEqual(expect.arrayContaining(['security']));
  });

  it.each(['repositories', 'security', 'decisions', 'workers', 'services', 'streams'])('nothing in %s/ imports http/ or routes/', (layer) => {
    expect(violations(layer, ['http', 'routes'])).toEqual([]);
  });

  it('repositories import no layer above them', () => {
    expect(violations('repositories', ['services', 'streams', 'workers', 'security', 'http', 'routes'])).toEqual([]);
  });

  it('security/ and workers/ do not reach into the request side', () => {
    expect(violations('security', ['services', 'streams', 'workers'])).toEqual([]);
    expect(violations('workers', ['services', 'streams'])).toEqual([]);
  });

  it('every folder and top-level file of src/ imports only what its row allows', () => {
    const units = [...new Set(sourceFiles(SRC).map(unitOf))].sort();
    expect(units.filter((unit) => !(unit in ALLOWED)), 'units without a row in ALLOWED').toEqual([]);
    const refused = sourceFiles(SRC).flatMap((file) => {
      const unit = unitOf(file);
      return importedFiles(file)
        .map(({ specifier, target }) => ({ specifier, to: unitOf(target) }))
        .filter(({ to }) => to !== unit && !ALLOWED[unit]?.includes(to))
        .map(({ specifier }) => `${path.relative(SRC, file)} imports ${specifier}`);
    });
    expect(refused).toEqual([]);
  });

  it('every relative import names a source file', () => {
    const graph = importGraph();
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`));
    expect(missing).toEqual([]);
  });

  it('the import graph has no cycles', () => {
    expect(findCycle(importGraph())?.join(' -> ')).toBeUndefined();
  });

  it('the cycle finder finds a cycle', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(findCycle(graph)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
  });
});
