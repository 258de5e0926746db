import { mkdtempSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../src/models/manifest.js';
import { loadPlda, pldaMeanScore, pldaScore, pldaSpec } from '../src/scoring/plda.js';
import { calibrationMismatch, loadModelScoring, scoreProbe } from '../src/scoring/probe-score.js';
import { projectEmbedding } from '../src/scoring/projection.js';
import { DEFAULT_CALIBRATION, matchScore, meanEmbedding } from '../src/scoring/scoring.js';

const MEAN = [0.1, -0.2];
const Q = [
  [-2, 0.5],
  [0.5, -1],
];
const P = [
  [3, 0.25],
  [0.25, 1.5],
];
const VALUES = [...MEAN, ...Q.flat(), ...P.flat()];

function write(dir: string, name: string, values: number[]) {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  writeFileSync(join(dir, name), buf);
  return createHash('sha256').update(buf).digest('hex');
}

function pldaEntry(values: number[] = VALUES, spec: Record<string, unknown> = {}, extra = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'voxkey-plda-'));
  const entry = {
    name: 'm',
    output: { embeddingSize: 2 },
    plda: {
      method: 'two-covariance',
      file: 'plda.f32',
      sha256: write(dir, 'plda.f32', values),
      dim: 2,
      ...spec,
    },
    calibration: { type: 'logistic', score: 'plda', a: 0.5, b: -1 },
    ...extra,
  } as unknown as ModelEntry;
  return { dir, entry };
}

/** a'Qa/2 + b'Qb/2 + a'Pb on centred vectors, written out for 2 dimensions. */
function byHand(x: number[], y: number[]): number {
  const a = x.map((v, i) => v - MEAN[i]!);
  const b = y.map((v, i) => v - MEAN[i]!);
  const form = (M: number[][], u: number[], v: number[]) =>
    u.reduce((s, ui, i) => s + v.reduce((t, vj, j) => t + ui * M[i]![j]! * vj, 0), 0);
  return form(Q, a, a) / 2 + form(Q, b, b) / 2 + form(P, a, b);
}

describe('PLDA', () => {
  it("loads a sha256-checked file and scores a pair as a'Qa/2 + b'Qb/2 + a'Pb on centred embeddings", async () => {
    const { dir, entry } = pldaEntry();
    const plda = (await loadPlda(entry, dir))!;
    const x = [0.6, 0.8];
    const y = [-0.28, 0.96];
    expect(pldaScore(Float32Array.from(x), Float32Array.from(y), plda)).toBeCloseTo(
      byHand(x, y),
      5,
    );
    // the same recording scores higher against itself than against another speaker's
    expect(pldaScore(Float32Array.from(x), Float32Array.from(x), plda)).toBeGreaterThan(
      pldaScore(Float32Array.from(x), Float32Array.from(y), plda),
    );
    expect(() => pldaScore(Float32Array.from([1, 0, 0]), Float32Array.from(y), plda)).toThrow(
      RangeError,
    );
  });

  it('is absent when the manifest entry names none', async () => {
    const entry = { name: 'm' } as unknown as ModelEntry;
    expect(pldaSpec(entry)).toBeNull();
    expect(await loadPlda(entry, tmpdir())).toBeNull();
  });

  it('refuses a file whose sha256 or size differs from the manifest, and a bad spec', async () => {
    const wrongSha = pldaEntry(VALUES, { sha256: 'f'.repeat(64) });
    await expect(loadPlda(wrongSha.entry, wrongSha.dir)).rejects.toMatchObject({
      code: 'model_integrity',
    });
    const short = pldaEntry(VALUES.slice(0, 6));
    await expect(loadPlda(short.entry, short.dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
    });
    for (const bad of [
      { method: 'gplda' },
      { file: '/etc/p.f32' },
      { dim: 0 },
      { nSample: 'yes' },
    ]) {
      const { entry } = pldaEntry(VALUES, bad);
      expect(() => pldaSpec(entry)).toThrow(expect.objectContaining({ code: 'manifest_invalid' }));
    }
  });

  it('loadModelScoring refuses a PLDA outside the compared space, or beside a cohort', async () => {
    // the model's embeddings have 3 dimensions and no projection: a 2-dimensional PLDA cannot read them
    const wrongDim = pldaEntry(VALUES, {}, { output: { embeddingSize: 3 } });
    await expect(loadModelScoring(wrongDim.entry, wrongDim.dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
    });
    const { dir, entry } = pldaEntry();
    const cohortSha = write(dir, 'c.f32', [1, 0]);
    const withCohort = {
      ...entry,
      scoreNormalization: {
        method: 'as-norm',
        file: 'c.f32',
        sha256: cohortSha,
        count: 1,
        dim: 2,
        topK: 1,
      },
    } as unknown as ModelEntry;
    await expect(loadModelScoring(withCohort, dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
    });
  });

  it('loadModelScoring refuses a calibration fitted on the other comparison', async () => {
    const { dir, entry } = pldaEntry();
    const cosineFitted = {
      ...entry,
      calibration: { type: 'logistic', a: 20, b: -10 },
    } as ModelEntry;
    await expect(loadModelScoring(cosineFitted, dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
      message: expect.stringContaining('fitted on cosine scores'),
    });
    const pldaFitted = { type: 'logistic' as const, score: 'plda' as const, a: 0.2, b: 9 };
    expect(
      (await loadModelScoring({ ...entry, calibration: pldaFitted }, dir)).plda,
    ).not.toBeNull();
    // the PLDA dropped (a projection rebuilt without it), its calibration left: refused, never applied to cosines
    const withoutPlda = { ...entry, calibration: pldaFitted } as ModelEntry;
    delete withoutPlda.plda;
    await expect(loadModelScoring(withoutPlda, dir)).rejects.toMatchObject({
      code: 'manifest_invalid',
      message: expect.stringContaining('fitted on plda scores'),
    });
  });

  it('refuses a PLDA without a calibration, or one fitted with other projection or PLDA files', async () => {
    const { dir, entry } = pldaEntry();
    delete entry.calibration;
    const sha = (entry.plda as { sha256: string }).sha256;
    expect(calibrationMismatch(entry)).toMatch(/no calibration of its scores/);
    await expect(loadModelScoring(entry, dir)).rejects.toMatchObject({ code: 'manifest_invalid' });
    // the tool that refits it loads it with the default calibration
    const ignoring = await loadModelScoring(entry, dir, { ignoreCalibration: true });
    expect(ignoring.calibration).toEqual(DEFAULT_CALIBRATION);
    const fitted = (fittedWith: Record<string, string>) =>
      ({
        ...entry,
        calibration: { type: 'logistic', score: 'plda', a: 0.2, b: 9, fittedWith },
      }) as ModelEntry;
    expect(calibrationMismatch(fitted({ plda: sha }))).toBeNull();
    expect(calibrationMismatch(fitted({ plda: 'e'.repeat(64) }))).toMatch(
      /fitted with the plda of sha256 eeeeeeeeeeee/,
    );
    expect(calibrationMismatch(fitted({ plda: sha, embeddingProjection: 'e'.repeat(64) }))).toMatch(
      /embeddingProjection .* names none/,
    );
    // no PLDA and a calibration that says cosine (or nothing): as before
    const cosine = { name: 'c', calibration: { type: 'logistic', score: 'cosine', a: 20, b: -10 } };
    expect(calibrationMismatch(cosine as unknown as ModelEntry)).toBeNull();
    expect(calibrationMismatch({ name: 'c' } as unknown as ModelEntry)).toBeNull();
  });

  it('scores the mean of n recordings as n samples when the file holds the basis, one recording as pldaScore does', async () => {
    // mean, Q, P, V, lambda of B = [[0.5, 0.1], [0.1, 0.3]], W = [[0.2, 0.05], [0.05, 0.4]] as the trainer writes them
    // (training/voxkey_train/sv_channel_study.py write_plda), and the score shipped_decision.mean_scores gives
    const values = [
      0.1, -0.2, -1.5228793621063232, 0.1116151437163353, 0.1116151437163353, -0.3204689025878906,
      2.141084671020508, -0.212690532207489, -0.212690532207489, 0.7628500461578369,
      0.288349986076355, -2.253473997116089, -1.6043951511383057, 0.08100114017724991,
      0.7212725877761841, 2.5045337677001953,
    ];
    const { dir, entry } = pldaEntry(values, { nSample: true });
    const plda = (await loadPlda(entry, dir))!;
    const a = Float32Array.from([0.3, 0.5]);
    const probe = Float32Array.from([0.6, -0.1]);
    expect(pldaMeanScore(a, 3, probe, plda)).toBeCloseTo(-0.044674, 5);
    // one recording: the unit vector through pldaScore
    const u = Math.hypot(...a);
    expect(pldaMeanScore(a, 1, probe, plda)).toBeCloseTo(
      pldaScore(
        a.map((v) => v / u),
        probe,
        plda,
      ),
      9,
    );
    // scoreProbe pools a voiceprint's samples the same way under the default rule
    const voiceprint = [
      Float32Array.from([0.6, 0.8]),
      Float32Array.from([-0.28, 0.96]),
      Float32Array.from([0.8, 0.6]),
    ];
    const average = Float32Array.from(
      [0, 1],
      (i) => ((0.6 - 0.28 + 0.8) / 3) * (i === 0 ? 1 : 0) + ((0.8 + 0.96 + 0.6) / 3) * i,
    );
    const calibration = { type: 'logistic' as const, score: 'plda' as const, a: 0.5, b: -1 };
    const scored = scoreProbe(voiceprint, probe, 4, {
      projection: null,
      plda,
      cohort: null,
      calibration,
    });
    expect(scored.matchScore).toBeCloseTo(
      matchScore(pldaMeanScore(average, 3, probe, plda), calibration),
      6,
    );
    // a file without the basis scores the unit mean as one recording
    const plain = pldaEntry(values.slice(0, 10));
    const withoutBasis = (await loadPlda(plain.entry, plain.dir))!;
    expect(withoutBasis.basis).toBeUndefined();
    expect(pldaMeanScore(a, 3, probe, withoutBasis)).toBeCloseTo(
      pldaScore(
        a.map((v) => v / u),
        probe,
        withoutBasis,
      ),
      9,
    );
  });

  it('scores every sample rule by PLDA: each sample compared, then averaged or the best taken', async () => {
    const { dir, entry } = pldaEntry();
    const scoring = await loadModelScoring(entry, dir);
    const calibration = { type: 'logistic' as const, score: 'plda' as const, a: 0.5, b: -1 };
    const samples = [Float32Array.from([0.6, 0.8]), Float32Array.from([-0.28, 0.96])];
    const probe = Float32Array.from([0.8, 0.6]);
    const each = samples.map((s) =>
      matchScore(byHand(Array.from(s), Array.from(probe)), calibration),
    );
    const score = (rule: 'mean_score' | 'best_of') =>
      scoreProbe(samples, probe, 4, { ...scoring, calibration }, rule).matchScore;
    expect(score('mean_score')).toBeCloseTo((each[0]! + each[1]!) / 2, 6);
    expect(score('best_of')).toBeCloseTo(Math.max(...each), 6);
  });

  it('scoreProbe calibrates the PLDA score of the projected embeddings, the samples pooled as their mean', async () => {
    // a 3 -> 2 projection (mean 0, W picks the first two dimensions) in front of the PLDA
    const { dir, entry } = pldaEntry(VALUES, {}, { output: { embeddingSize: 3 } });
    const projectionValues = [0, 0, 0, 1, 0, 0, 1, 0, 0];
    const projected = {
      ...entry,
      embeddingProjection: {
        method: 'lda',
        file: 'p.f32',
        sha256: write(dir, 'p.f32', projectionValues),
        inputDim: 3,
        outputDim: 2,
      },
    } as unknown as ModelEntry;
    const scoring = await loadModelScoring(projected, dir);
    expect(scoring.plda?.spec.dim).toBe(2);
    const samples = [Float32Array.from([0.6, 0.1, 0.2]), Float32Array.from([0.5, 0.4, -0.3])];
    const probe = Float32Array.from([0.5, 0.3, 0.1]);
    const calibration = { type: 'logistic' as const, score: 'plda' as const, a: 0.5, b: -1 };
    const { matchScore: score } = scoreProbe(samples, probe, 4, { ...scoring, calibration });
    const enrolled = meanEmbedding(samples.map((s) => projectEmbedding(s, scoring.projection)));
    const expected = byHand(
      Array.from(enrolled),
      Array.from(projectEmbedding(probe, scoring.projection)),
    );
    expect(score).toBeCloseTo(matchScore(expected, calibration), 6);
  });
});
