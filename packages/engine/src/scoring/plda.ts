/**
 * Two-covariance PLDA on the projected embeddings: the log-likelihood ratio that two recordings come from one
 * speaker rather than two, under a model of between- and within-speaker covariance fitted on train speakers'
 * recordings as they are and through user channels. Unlike the cosine it weighs each direction by how much
 * speakers differ along it against how much one speaker's recordings do (channels included):
 *
 *   score(a, b) = a'Qa / 2 + b'Qb / 2 + a'Pb,   a, b = projected embeddings - mean
 *
 * The file (float32 little-endian, next to the model) holds `mean` (dim values), then Q and P (dim x dim each,
 * row-major), named by the speaker model's manifest entry as `plda` with its sha256;
 * `training/voxkey_train/sv_channel_study.py --write-plda` builds it. Like the projection it applies when two
 * embeddings are compared, so it can change without re-enrolment.
 */
import { EngineError } from '../errors.js';
import type { ModelEntry } from '../models/manifest.js';
import { assertFloat32FileSpec, readCheckedFloat32 } from './float32-file.js';

export interface PldaSpec {
  method: 'two-covariance';
  file: string;
  sha256: string;
  dim: number;
}

export interface Plda {
  spec: PldaSpec;
  mean: Float32Array;
  /** dim x dim, row-major. */
  q: Float32Array;
  /** dim x dim, row-major. */
  p: Float32Array;
}

export function pldaSpec(entry: ModelEntry): PldaSpec | null {
  const s = entry.plda as Partial<PldaSpec> | undefined;
  if (!s) return null;
  assertFloat32FileSpec(`model ${entry.name}: plda`, s as Record<string, unknown>, {
    method: 'two-covariance',
    sizeKeys: ['dim'],
  });
  return s as PldaSpec;
}

/** The speaker model's PLDA (sha256-checked), or null when its manifest entry names none. */
export async function loadPlda(entry: ModelEntry, modelsDir: string): Promise<Plda | null> {
  const spec = pldaSpec(entry);
  if (!spec) return null;
  const { dim } = spec;
  const values = await readCheckedFloat32(modelsDir, spec.file, {
    sha256: spec.sha256,
    floats: dim * (1 + 2 * dim),
    modelName: entry.name,
    what: 'PLDA',
  });
  return {
    spec,
    mean: values.subarray(0, dim),
    q: values.subarray(dim, dim + dim * dim),
    p: values.subarray(dim + dim * dim),
  };
}

/** The log-likelihood ratio of "one speaker" for two projected embeddings (up to a constant the calibration absorbs). */
export function pldaScore(enrolled: Float32Array, probe: Float32Array, plda: Plda): number {
  const { dim } = plda.spec;
  if (enrolled.length !== dim || probe.length !== dim)
    throw new RangeError(
      `embeddings have ${enrolled.length} and ${probe.length} dimensions, the PLDA expects ${dim}`,
    );
  const a = new Float64Array(dim);
  const b = new Float64Array(dim);
  for (let i = 0; i < dim; i++) {
    a[i] = enrolled[i]! - plda.mean[i]!;
    b[i] = probe[i]! - plda.mean[i]!;
  }
  const { q, p } = plda;
  let score = 0;
  for (let i = 0; i < dim; i++) {
    const row = i * dim;
    let qa = 0;
    let qb = 0;
    let pb = 0;
    for (let j = 0; j < dim; j++) {
      qa += q[row + j]! * a[j]!;
      qb += q[row + j]! * b[j]!;
      pb += p[row + j]! * b[j]!;
    }
    score += 0.5 * a[i]! * qa + 0.5 * b[i]! * qb + a[i]! * pb;
  }
  return score;
}

/** How results and manifest notes name the comparison: "two-covariance PLDA" or "cosine". */
export function describeComparison(plda: { method: string } | null | undefined): string {
  return plda ? `${plda.method} PLDA` : 'cosine';
}

/** Checks that a PLDA reads the space embeddings are compared in. */
export function assertPldaDim(entry: ModelEntry, plda: Plda | null, comparedDim: unknown): void {
  if (plda && typeof comparedDim === 'number' && plda.spec.dim !== comparedDim)
    throw new EngineError(
      'manifest_invalid',
      `model ${entry.name}: plda.dim is ${plda.spec.dim}, but embeddings are compared in ${comparedDim} dimensions`,
    );
}
