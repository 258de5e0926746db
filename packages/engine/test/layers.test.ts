import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycle, importGraph } from '../../../scripts/import-graph.mjs';

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

/** A src-relative file's unit: its top-level folder, or the file itself at the top. */
const unitOf = (file: string): string => file.split(path.sep)[0]!;

describe('engine layers', () => {
  const graph = importGraph(SRC);

  it('every relative import names a source file', () => {
    expect(graph.get(path.join('runtime', 'engine.ts'))).toEqual(
      expect.arrayContaining([path.join('scoring', 'probe-score.ts')]),
    );
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('every folder and top-level file has a layer', () => {
    expect([...new Set([...graph.keys()].map(unitOf))].filter((unit) => !rankOf.has(unit))).toEqual(
      [],
    );
  });

  it('no file imports from a higher layer', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => rankOf.get(unitOf(target))! > rankOf.get(unitOf(file))!)
        .map((target) => `${file} imports ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('the import graph has no cycles', () => {
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined();
  });
});
