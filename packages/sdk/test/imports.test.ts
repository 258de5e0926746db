import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycle, importGraph } from '../../../scripts/import-graph.mjs';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

describe('the SDK source imports', () => {
  const graph = importGraph(SRC);

  it('name source files', () => {
    expect(graph.get('client.ts')).toEqual(
      expect.arrayContaining(['resources.ts', 'request.ts', 'generated/openapi.ts']),
    );
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('have no cycles', () => {
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined();
  });
});
