import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  findCycle,
  importGraph,
  relativeImports,
  sourceFiles,
} from '../../../scripts/import-graph.mjs';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** The unit of src/ a file belongs to: its top-level folder, or the file's own name at the top (`deps.ts`). */
const unitOf = (file: string): string => path.relative(SRC, file).split(path.sep)[0]!;

/** The top-level folder of src/ each relative import of the file lands in. */
function importedFolders(file: string): Array<{ specifier: string; folder: string }> {
  return relativeImports(file).map(({ specifier, target }) => ({
    specifier,
    folder: unitOf(target),
  }));
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
  workers: [
    'config.ts',
    'errors.ts',
    'deps.ts',
    'db',
    'observability',
    'repositories',
    'security',
    'decisions',
  ],
  services: [
    'config.ts',
    'errors.ts',
    'deps.ts',
    'db',
    'observability',
    'repositories',
    'security',
    'decisions',
  ],
  streams: [
    'config.ts',
    'errors.ts',
    'deps.ts',
    'db',
    'observability',
    'repositories',
    'security',
    'decisions',
    'services',
  ],
  http: ['config.ts', 'errors.ts', 'deps.ts', 'db', 'observability', 'repositories', 'security'],
  routes: [
    'config.ts',
    'errors.ts',
    'deps.ts',
    'db',
    'observability',
    'repositories',
    'security',
    'services',
    'http',
  ],
  'app.ts': ['config.ts', 'errors.ts', 'deps.ts', 'observability', 'http', 'routes'],
  'worker-app.ts': ['config.ts', 'errors.ts', 'deps.ts', 'observability', 'http'],
  'runtime.ts': [
    'config.ts',
    'errors.ts',
    'deps.ts',
    'db',
    'observability',
    'security',
    'workers',
    'streams',
  ],
  'serve.ts': [
    'config.ts',
    'errors.ts',
    'deps.ts',
    'observability',
    'http',
    'services',
    'app.ts',
    'worker-app.ts',
    'runtime.ts',
  ],
  cli: [
    'config.ts',
    'errors.ts',
    'db',
    'observability',
    'repositories',
    'security',
    'services',
    'runtime.ts',
    'serve.ts',
  ],
  'main.ts': ['cli'],
};

describe('layers', () => {
  it('finds the imports it is meant to police', () => {
    expect(importedFolders(path.join(SRC, 'app.ts')).map((i) => i.folder)).toEqual(
      expect.arrayContaining(['http', 'routes']),
    );
    // type-only imports count
    expect(importedFolders(path.join(SRC, 'deps.ts')).map((i) => i.folder)).toEqual(
      expect.arrayContaining(['security']),
    );
  });

  it.each(['repositories', 'security', 'decisions', 'workers', 'services', 'streams'])(
    'nothing in %s/ imports http/ or routes/',
    (layer) => {
      expect(violations(layer, ['http', 'routes'])).toEqual([]);
    },
  );

  it('repositories import no layer above them', () => {
    expect(
      violations('repositories', ['services', 'streams', 'workers', 'security', 'http', 'routes']),
    ).toEqual([]);
  });

  it('security/ and workers/ do not reach into the request side', () => {
    expect(violations('security', ['services', 'streams', 'workers'])).toEqual([]);
    expect(violations('workers', ['services', 'streams'])).toEqual([]);
  });

  it('every folder and top-level file of src/ imports only what its row allows', () => {
    const units = [...new Set(sourceFiles(SRC).map(unitOf))].sort();
    expect(
      units.filter((unit) => !(unit in ALLOWED)),
      'units without a row in ALLOWED',
    ).toEqual([]);
    const refused = sourceFiles(SRC).flatMap((file) => {
      const unit = unitOf(file);
      return relativeImports(file)
        .map(({ specifier, target }) => ({ specifier, to: unitOf(target) }))
        .filter(({ to }) => to !== unit && !ALLOWED[unit]?.includes(to))
        .map(({ specifier }) => `${path.relative(SRC, file)} imports ${specifier}`);
    });
    expect(refused).toEqual([]);
  });

  it('every relative import names a source file', () => {
    const graph = importGraph(SRC);
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('the import graph has no cycles', () => {
    expect(findCycle(importGraph(SRC))?.join(' -> ')).toBeUndefined();
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
