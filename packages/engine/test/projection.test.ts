import { mkdtempSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  type ModelEntry,
} from '../src/models/manifest.js';
import { pldaMeanScore, pldaScore } from '../src/scoring/plda.js';
import { loadModelScoring, scoreProbe } from '../src/scoring/probe-score.js';
import {
  embeddingProjectionSpec,
  loadEmbeddingProjection,
  projectEmbedding,
} from '../src/scoring/projection.js';

// 3 -> 2: mean (0.1, 0, -0.1), W rows (1, 0), (0, 2), (1, 1)
const MEAN = [0.1, 0, -0.1];
const W = [
  [1, 0],
  [0, 2],
  [1, 1],
];

function projectionFile(values: number[], spec: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'voxkey-projection-'));
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  writeFileSync(join(dir, 'p.f32'), buf);
  const entry = {
    name: 'm',
    output: { embeddingSize: 3 },
    embeddingProjection: {
      method: 'lda',
      file: 'p.f32',
      sha256: createHash('sha256').update(buf).digest('hex'),
      inputDim: 3,
      outputDim: 2,
      ...spec,
    },
  } as unknown as ModelEntry;
  return { dir, entry };
}

const VALUES = [...MEAN, ...W.flat()];

describe('embedding projection', () => {
  it('loads a sha256-checked projection and maps x to unit((x - mean) W)', async () => {
    const { dir, entry } = projectionFile(VALUES);
    const projection = (await loadEmbeddingProjection(entry, dir))!;
    const x = Float32Array.from([0.5, 0.25, 0.3]);
    const centred = x.map((v, i) => v - MEAN[i]!);
    const y = [0, 1].map((j) => centred.reduce((s, v, i) => s + v * W[i]![j]!, 0));
    const n = Math.hypot(...y);
    const projected = projectEmbedding(x, projection);
    expect(projected).toHaveLength(2);
    expect(projected[0]).toBeCloseTo(y[0]! / n, 6);
    expect(projected[1]).toBeCloseTo(y[1]! / n, 6);
    expect(projectEmbedding(x, null)).toBe(x);
    expect(() => projectEmbedding(Float32Array.from([1, 2]), projection)).toThrow(RangeError);
  });

  it('is absent when the manifest entry names none', async () => {
    const entry = { name: 'm' } as unknown as ModelEntry;
    expect(embeddingProjectionSpec(entry)).toBeNull();
    expect(await loadEmbeddingProjection(entry, tmpdir())).toBeNull();
  });

  it('refuses a file whose sha256 or size differs from the manifest, and a bad spec', async () => {
    const wrongSha = projectionFile(VALUES, { sha256: '0'.repeat(64) });
    await expect(loadEmbeddingProjection(wrongSha.entry, wrongSha.dir)).rejects.toMatchObject({
      code: 'model_integrity',
    });
    const short = projectionFile(VALUES.slice(0, 6));
    await expect(loadEmbeddingProjection(short.entry, short.dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
    });
    const missing = projectionFile(VALUES, { file: 'other.f32' });
    await expect(loadEmbeddingProjection(missing.entry, missing.dir)).rejects.toMatchObject({
      code: 'model_missing',
    });
    for (const bad of [
      { method: 'pca' },
      { file: '../p.f32' },
      { inputDim: 0 },
      { outputDim: 1.5 },
      { inputDim: 4 }, // the model's embeddings have 3
    ]) {
      const { entry } = projectionFile(VALUES, bad);
      expect(() => embeddingProjectionSpec(entry)).toThrow(
        expect.objectContaining({ code: 'manifest_invalid' }),
      );
    }
  });

  it('scoreProbe compares the projected embeddings under every rule', async () => {
    const { dir, entry } = projectionFile(VALUES);
    const projection = (await loadEmbeddingProjection(entry, dir))!;
    const calibration = { type: 'logistic' as const, a: 10, b: -5 };
    const samples = [Float32Array.from([0.6, 0.1, 0.2]), Float32Array.from([0.1, 0.7, -0.3])];
    const probe = Float32Array.from([0.5, 0.3, 0.1]);
    for (const rule of ['mean_embedding', 'mean_score', 'best_of'] as const) {
      const projected = scoreProbe(
        samples,
        probe,
        4,
        { projection, plda: null, cohort: null, calibration },
        rule,
      );
      const byHand = scoreProbe(
        samples.map((s) => projectEmbedding(s, projection)),
        projectEmbedding(probe, projection),
        4,
        { projection: null, plda: null, cohort: null, calibration },
        rule,
      );
      expect(projected.matchScore).toBeCloseTo(byHand.matchScore, 9);
      expect(projected.cosine).toBeCloseTo(byHand.cosine, 9);
    }
  });
});

describe('loadModelScoring', () => {
  it('loads the projection and the calibration, and refuses a cohort outside the compared space', async () => {
    const { dir, entry } = projectionFile(VALUES);
    const scoring = await loadModelScoring(entry, dir);
    expect(scoring.projection?.spec.outputDim).toBe(2);
    expect(scoring.cohort).toBeNull();
    expect(scoring.calibration).toMatchObject({ type: 'logistic' });
    // a 3-dimensional cohort (the model's own space) beside a projection to 2 dimensions
    const cohort = Buffer.alloc(3 * 4);
    cohort.writeFloatLE(1, 0);
    writeFileSync(join(dir, 'c.f32'), cohort);
    const withCohort = {
      ...entry,
      scoreNormalization: {
        method: 'as-norm',
        file: 'c.f32',
        sha256: createHash('sha256').update(cohort).digest('hex'),
        count: 1,
        dim: 3,
        topK: 1,
      },
    } as unknown as ModelEntry;
    await expect(loadModelScoring(withCohort, dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
    });
  });
});

describe('the bundled speaker models', () => {
  const bundledV4 = async () => {
    const modelsDir = defaultModelsDir();
    const manifest = await loadManifest(defaultManifestPath(modelsDir));
    const entries = ['voxkey-speaker-v4', 'voxkey-speaker-v4-int8'].map((name) =>
      manifest.models.find((m) => m.name === name)!,
    );
    return { modelsDir, entries };
  };

  it('voxkey-speaker-v4 and its int8 variant compare through the same bundled projection', async () => {
    const { modelsDir, entries } = await bundledV4();
    expect(entries[0]!.embeddingProjection).toEqual(entries[1]!.embeddingProjection);
    expect(entries[0]!.calibration).toEqual(entries[1]!.calibration);
    const projection = (await loadEmbeddingProjection(entries[1]!, modelsDir))!;
    expect(projection.spec).toMatchObject({ method: 'lda', inputDim: 192 });
    const embedding = Float32Array.from({ length: 192 }, (_, i) => Math.sin(i));
    const projected = projectEmbedding(embedding, projection);
    expect(projected).toHaveLength(projection.spec.outputDim);
    expect(Math.hypot(...projected)).toBeCloseTo(1, 5);
  });

  it('and score the projected embeddings by the same bundled PLDA, as the trainer scores them', async () => {
    const { modelsDir, entries } = await bundledV4();
    expect(entries[0]!.plda).toEqual(entries[1]!.plda);
    const scoring = await loadModelScoring(entries[1]!, modelsDir);
    expect(scoring.plda?.spec).toMatchObject({
      method: 'two-covariance',
      dim: scoring.projection?.spec.outputDim,
    });
    const project = (seed: number) =>
      projectEmbedding(
        Float32Array.from({ length: 192 }, (_, i) => Math.sin(i * seed)),
        scoring.projection,
      );
    const [a, b] = [project(1), project(2)];
    // the same pairs scored by training/voxkey_train/shipped_decision.py (projector, comparer) on the same files:
    // the engine reads the file's layout (mean, Q, P) as the trainer wrote it
    expect(pldaScore(a, b, scoring.plda!)).toBeCloseTo(-84.3596, 2);
    expect(pldaScore(a, a, scoring.plda!)).toBeCloseTo(77.9618, 2);
    expect(entries[1]!.calibration?.score).toBe('plda');
    // three recordings' mean scored as n samples, as training/voxkey_train/shipped_decision.py mean_comparer does
    const enrolled = [1, 2, 3].map(project);
    const average = Float32Array.from(
      enrolled[0]!,
      (_, i) => (enrolled[0]![i]! + enrolled[1]![i]! + enrolled[2]![i]!) / 3,
    );
    const probe = project(4);
    expect(pldaMeanScore(average, 3, probe, scoring.plda!)).toBeCloseTo(-98.7793, 2);
    expect(pldaMeanScore(enrolled[0]!, 1, probe, scoring.plda!)).toBeCloseTo(-89.8694, 2);
  });
});
