import { mkdtempSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fitDecisionCalibration,
  fitQualityWeight,
  qualityAdjustedScore,
} from '../src/scoring/calibration.js';
import type { ModelEntry } from '../src/models/manifest.js';
import { asNorm, cohortStats, loadCohort, normalisedScore } from '../src/scoring/score-norm.js';
import { matchScore, scoreAgainstSamples } from '../src/scoring/scoring.js';
import { scoreProbe } from '../src/scoring/probe-score.js';

function unit(v: number[]): Float32Array {
  const n = Math.hypot(...v);
  return Float32Array.from(v, (x) => x / n);
}

async function cohortOf(rows: Float32Array[], topK: number) {
  const dir = mkdtempSync(join(tmpdir(), 'voxkey-cohort-'));
  const buf = Buffer.alloc(rows.length * rows[0]!.length * 4);
  rows.forEach((r, k) => r.forEach((x, i) => buf.writeFloatLE(x, (k * r.length + i) * 4)));
  writeFileSync(join(dir, 'c.f32'), buf);
  const sha256 = createHash('sha256').update(buf).digest('hex');
  const entry = {
    name: 'm',
    scoreNormalization: {
      method: 'as-norm',
      file: 'c.f32',
      sha256,
      count: rows.length,
      dim: rows[0]!.length,
      topK,
    },
  } as unknown as ModelEntry;
  return { dir, entry, sha256 };
}

describe('AS-norm score normalisation', () => {
  it('loads a sha256-checked cohort and computes top-K statistics', async () => {
    const rows = [unit([1, 0, 0]), unit([0, 1, 0]), unit([0, 0, 1]), unit([1, 1, 0])];
    const { dir, entry } = await cohortOf(rows, 2);
    const cohort = (await loadCohort(entry, dir))!;
    expect(cohort.spec.count).toBe(4);
    const s = cohortStats(unit([1, 0, 0]), cohort);
    // cosines 1, 0, 0, 0.7071 -> top-2 = {1, 0.7071}
    expect(s.mean).toBeCloseTo((1 + Math.SQRT1_2) / 2, 5);
    expect(s.std).toBeCloseTo((1 - Math.SQRT1_2) / 2, 5);
    expect(asNorm(0.5, { mean: 0.1, std: 0.2 }, { mean: 0.3, std: 0.1 })).toBeCloseTo(
      0.5 * (2 + 2),
      6,
    );
    const e = unit([1, 0.2, 0.1]);
    const t = unit([0.9, 0.3, 0]);
    const cos = e.reduce((a, x, i) => a + x * t[i]!, 0);
    expect(normalisedScore(cos, e, t, null)).toBe(cos);
    expect(normalisedScore(cos, e, t, cohort)).toBeCloseTo(
      asNorm(cos, cohortStats(e, cohort), cohortStats(t, cohort)),
      9,
    );
  });

  it('refuses a cohort whose sha256 differs from the manifest', async () => {
    const { dir, entry } = await cohortOf([unit([1, 0]), unit([0, 1])], 1);
    (entry.scoreNormalization as { sha256: string }).sha256 = '0'.repeat(64);
    await expect(loadCohort(entry, dir)).rejects.toMatchObject({ code: 'model_integrity' });
  });
});

describe('decision calibration', () => {
  it('keeps FAR <= maxFar in every block at the given match-score threshold', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const gauss = (m: number, s: number) =>
      m + s * Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
    const blockA = {
      name: 'a',
      targets: Array.from({ length: 400 }, () => gauss(2, 1)),
      nontargets: Array.from({ length: 800 }, () => gauss(0, 1)),
    };
    const blockB = {
      name: 'b',
      targets: Array.from({ length: 400 }, () => gauss(3, 1)),
      nontargets: Array.from({ length: 800 }, () => gauss(1, 1)),
    };
    const cal = fitDecisionCalibration(
      [...blockA.targets, ...blockB.targets],
      [...blockA.nontargets, ...blockB.nontargets],
      [blockA, blockB],
      { threshold: 0.85, maxFar: 0.02 },
    );
    expect(cal.worstBlock).toBe('b');
    for (const blk of [blockA, blockB]) {
      const far =
        blk.nontargets.filter((s) => matchScore(s, cal) >= 0.85).length / blk.nontargets.length;
      expect(far).toBeLessThanOrEqual(0.02);
    }
    expect(cal.a).toBeGreaterThan(0);
  });
});

describe('quality-aware calibration', () => {
  it('shifts the score by the test duration term and recovers a known weight', () => {
    expect(qualityAdjustedScore(1, 4, {})).toBe(1);
    expect(qualityAdjustedScore(1, 4, { quality: { testLogDuration: 0.5 } })).toBeCloseTo(
      1 + 0.5 * Math.log(4.5),
      9,
    );
    // target scores fall as q grows (non-targets do not depend on q), so the fitted term must add
    // score back for large q: a positive weight
    let seed = 3;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const tar = Array.from({ length: 2000 }, () => {
      const q = Math.log(0.5 + 8 * rnd());
      return { s: 1 + (rnd() - 0.5) * 2 - 0.5 * q, q };
    });
    const non = Array.from({ length: 2000 }, () => ({
      s: (rnd() - 0.5) * 2,
      q: Math.log(0.5 + 8 * rnd()),
    }));
    expect(fitQualityWeight(tar, non)).toBeGreaterThan(0);
  });
});

describe('scoreProbe: the whole chain from cosine to match score', () => {
  const a = Float32Array.from([1, 0, 0]);
  const b = Float32Array.from([0, 1, 0]);
  const probe = Float32Array.from([0.8, 0.6, 0]);
  const calibration = {
    type: 'logistic' as const,
    a: 10,
    b: -5,
    quality: { testLogDuration: 0.1, enrolSamplesLog: -0.05 },
  };

  it('without a cohort or quality terms it is scoreAgainstSamples with the calibration', () => {
    const plain = { type: 'logistic' as const, a: 10, b: -5 };
    for (const rule of ['mean_embedding', 'mean_score', 'best_of'] as const) {
      expect(
        scoreProbe(
          [a, b],
          probe,
          6,
          { projection: null, plda: null, cohort: null, calibration: plain },
          rule,
        ),
      ).toEqual(scoreAgainstSamples([a, b], probe, rule, (cosine) => matchScore(cosine, plain)));
    }
  });

  it('adds the speech term per comparison and the samples term only to the mean embedding', () => {
    const pooled = scoreProbe(
      [a, b],
      probe,
      6,
      { projection: null, plda: null, cohort: null, calibration },
      'mean_embedding',
    );
    expect(pooled.matchScore).toBeCloseTo(
      matchScore(qualityAdjustedScore(pooled.cosine, 6, calibration, 2), calibration),
      9,
    );
    const best = scoreProbe(
      [a, b],
      probe,
      6,
      { projection: null, plda: null, cohort: null, calibration },
      'best_of',
    );
    expect(best.matchScore).toBeCloseTo(
      matchScore(qualityAdjustedScore(best.cosine, 6, calibration, 1), calibration),
      9,
    );
  });
});
