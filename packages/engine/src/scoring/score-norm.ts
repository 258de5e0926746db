/**
 * Score normalisation against a cohort of training-speaker embeddings (adaptive symmetric
 * normalisation, "AS-norm"): a trial's cosine is compared with how the enrolment and the test
 * embedding score against the speakers they resemble most, so that the score means the same thing
 * in every recording condition (a clean read-English clip that scores high against everyone no
 * longer looks like a match to everyone).
 *
 *   s_norm = ((s - mu_e) / sd_e + (s - mu_t) / sd_t) / 2
 *
 * mu_x, sd_x: mean and standard deviation of the top-K cosines of embedding x against the cohort.
 * The cohort is a file of float32 little-endian rows (unit-length speaker embeddings) listed in the
 * speaker model's manifest entry as `scoreNormalization` with its sha256; `training/` builds it.
 */
import type { ModelEntry } from '../models/manifest.js';
import { assertFloat32FileSpec, readCheckedFloat32 } from './float32-file.js';

export interface ScoreNormalizationSpec {
  method: 'as-norm';
  /** Cohort file next to the model (float32 little-endian, `count` rows of `dim`). */
  file: string;
  sha256: string;
  count: number;
  dim: number;
  /** Cohort scores kept per side (the highest ones). */
  topK: number;
}

export interface Cohort {
  spec: ScoreNormalizationSpec;
  /** count x dim, each row unit length. */
  vectors: Float32Array;
}

export interface CohortStats {
  mean: number;
  std: number;
}

export function scoreNormalizationSpec(entry: ModelEntry): ScoreNormalizationSpec | null {
  const s = entry.scoreNormalization as Partial<ScoreNormalizationSpec> | undefined;
  if (!s) return null;
  const where = `model ${entry.name}: scoreNormalization`;
  assertFloat32FileSpec(where, s as Record<string, unknown>, {
    method: 'as-norm',
    sizeKeys: ['count', 'dim', 'topK'],
  });
  return s as ScoreNormalizationSpec;
}

/** The speaker model's cohort (sha256-checked), or null when its manifest entry names none. */
export async function loadCohort(entry: ModelEntry, modelsDir: string): Promise<Cohort | null> {
  const spec = scoreNormalizationSpec(entry);
  if (!spec) return null;
  const vectors = await readCheckedFloat32(modelsDir, spec.file, {
    sha256: spec.sha256,
    floats: spec.count * spec.dim,
    modelName: entry.name,
    what: 'score-normalisation cohort',
  });
  return { spec, vectors };
}

/** Mean and standard deviation of the top-K cosines of `embedding` against the cohort. */
export function cohortStats(embedding: Float32Array, cohort: Cohort): CohortStats {
  const { count, dim, topK } = cohort.spec;
  if (embedding.length !== dim)
    throw new RangeError(`embedding has ${embedding.length} dimensions, the cohort ${dim}`);
  let n2 = 0;
  for (let i = 0; i < dim; i++) n2 += embedding[i]! * embedding[i]!;
  const inv = n2 > 0 ? 1 / Math.sqrt(n2) : 0;
  const scores = new Float64Array(count);
  const v = cohort.vectors;
  for (let r = 0; r < count; r++) {
    let d = 0;
    const o = r * dim;
    for (let i = 0; i < dim; i++) d += v[o + i]! * embedding[i]!;
    scores[r] = d * inv;
  }
  scores.sort();
  const k = Math.min(topK, count);
  let sum = 0;
  for (let i = count - k; i < count; i++) sum += scores[i]!;
  const mean = sum / k;
  let ss = 0;
  for (let i = count - k; i < count; i++) ss += (scores[i]! - mean) ** 2;
  return { mean, std: Math.sqrt(ss / k) };
}

/** AS-norm of a cosine given both sides' cohort statistics. */
export function asNorm(cosine: number, enrol: CohortStats, test: CohortStats): number {
  const se = Math.max(enrol.std, 1e-3);
  const st = Math.max(test.std, 1e-3);
  return 0.5 * ((cosine - enrol.mean) / se + (cosine - test.mean) / st);
}

/** The score the calibration applies to: the AS-normed cosine with a cohort, the cosine without. */
export function normalisedScore(
  cosine: number,
  enrol: Float32Array,
  test: Float32Array,
  cohort: Cohort | null,
): number {
  if (!cohort) return cosine;
  return asNorm(cosine, cohortStats(enrol, cohort), cohortStats(test, cohort));
}
