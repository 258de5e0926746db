/**
 * Two-covariance PLDA on the projected embeddings: the log-likelihood ratio that two recordings come from one
 * speaker rather than two, under a model of between- and within-speaker covariance fitted on train speakers'
 * recordings as they are and through user channels. Unlike the cosine it weighs each direction by how much
 * speakers differ along it against how much one speaker's recordings do (channels included):
 *
 *   score(a, b) = a'Qa / 2 + b'Qb / 2 + a'Pb,   a, b = projected embeddings - mean
 *
 * The file (float32 little-endian, next to the model) holds `mean` (dim values), then Q and P (dim x dim each,
 * row-major), and with `nSample: true` after them V (dim x dim, row-major) and lambda (dim): the basis in which the
 * within-speaker covariance is the identity and the between-speaker one diagonal (V'WV = I, V'BV = diag(lambda)),
 * in which the mean of n enrolment recordings is scored as what it is, n recordings of one speaker (within-speaker
 * covariance W / n on its side: pldaMeanScore). Named by the speaker model's manifest entry as `plda` with its sha256;
 * `training/voxkey_train/sv_channel_study.py --write-plda` builds it. Like the projection it applies when two
 * embeddings are compared, so it can change without re-enrolment.
 */
import { EngineError } from '../errors.js';
import type { ModelEntry } from '../models/manifest.js';
import { assertFloat32FileSpec, readCheckedFloat32 } from './float32-file.js';
import { l2normalize } from './scoring.js';

export interface PldaSpec {
  method: 'two-covariance';
  file: string;
  sha256: string;
  dim: number;
  /** The file also holds V and lambda: several enrolment recordings are scored as n samples. */
  nSample?: boolean;
}

export interface Plda {
  spec: PldaSpec;
  mean: Float32Array;
  /** dim x dim, row-major. */
  q: Float32Array;
  /** dim x dim, row-major. */
  p: Float32Array;
  /** The basis (dim x dim, row-major: coordinate j of a vector x is sum_i V[i][j] x[i]) and lambda, with nSample. */
  basis?: Float32Array;
  lambda?: Float32Array;
}

export function pldaSpec(entry: ModelEntry): PldaSpec | null {
  const s = entry.plda as Partial<PldaSpec> | undefined;
  if (!s) return null;
  assertFloat32FileSpec(`model ${entry.name}: plda`, s as Record<string, unknown>, {
    method: 'two-covariance',
    sizeKeys: ['dim'],
  });
  if (s.nSample !== undefined && typeof s.nSample !== 'boolean')
    throw new EngineError(
      'manifest_invalid',
      `model ${entry.name}: plda.nSample must be a boolean`,
    );
  return s as PldaSpec;
}

/** The speaker model's PLDA (sha256-checked), or null when its manifest entry names none. */
export async function loadPlda(entry: ModelEntry, modelsDir: string): Promise<Plda | null> {
  const spec = pldaSpec(entry);
  if (!spec) return null;
  const { dim } = spec;
  const values = await readCheckedFloat32(modelsDir, spec.file, {
    sha256: spec.sha256,
    floats: dim * (1 + 2 * dim) + (spec.nSample ? dim * dim + dim : 0),
    modelName: entry.name,
    what: 'PLDA',
  });
  const block = (i: number) => values.subarray(dim + i * dim * dim, dim + (i + 1) * dim * dim);
  return {
    spec,
    mean: values.subarray(0, dim),
    q: block(0),
    p: block(1),
    ...(spec.nSample
      ? { basis: block(2), lambda: values.subarray(dim + 3 * dim * dim, dim + 3 * dim * dim + dim) }
      : {}),
  };
}

/** Both embeddings less the PLDA's mean, in float64; a RangeError when either is not of its dimension. */
function centred(
  enrolled: Float32Array,
  probe: Float32Array,
  plda: Plda,
): [Float64Array, Float64Array] {
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
  return [a, b];
}

/** The log-likelihood ratio of "one speaker" for two projected embeddings (up to a constant the calibration absorbs). */
export function pldaScore(enrolled: Float32Array, probe: Float32Array, plda: Plda): number {
  const { dim } = plda.spec;
  const [a, b] = centred(enrolled, probe, plda);
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

/**
 * The log-likelihood ratio of "one speaker" for the mean of n projected enrolment embeddings (not re-normalised)
 * and a projected probe, with the within-speaker covariance W / n on the mean's side, less its constant at n = 1
 * (so one recording scores as pldaScore, up to rounding). In the basis V each dimension is independent: with
 * Se = lambda + 1/n, St = lambda + 1 and S = Se - lambda^2 / St, the score sums over the dimensions
 * x^2 (1/Se - 1/S) / 2 - y^2 lambda^2 / (2 St^2 S) + x y lambda / (St S) - (log S - log Se) / 2.
 * Without V in the file: pldaScore of the mean made unit length.
 */
export function pldaMeanScore(
  mean: Float32Array,
  samples: number,
  probe: Float32Array,
  plda: Plda,
): number {
  if (samples <= 1 || !plda.basis || !plda.lambda) return pldaScore(l2normalize(mean), probe, plda);
  const { dim } = plda.spec;
  const [a, b] = centred(mean, probe, plda);
  const x = new Float64Array(dim);
  const y = new Float64Array(dim);
  const { basis, lambda } = plda;
  for (let i = 0; i < dim; i++) {
    const row = i * dim;
    for (let j = 0; j < dim; j++) {
      x[j]! += basis[row + j]! * a[i]!;
      y[j]! += basis[row + j]! * b[i]!;
    }
  }
  const logTerm = (l: number, n: number) => {
    const se = l + 1 / n;
    const s = se - (l * l) / (l + 1);
    return { se, s, c: -0.5 * (Math.log(s) - Math.log(se)) };
  };
  let score = 0;
  for (let j = 0; j < dim; j++) {
    const l = lambda[j]!;
    const st = l + 1;
    const { se, s, c } = logTerm(l, samples);
    score +=
      0.5 * x[j]! * x[j]! * (1 / se - 1 / s) -
      (0.5 * y[j]! * y[j]! * l * l) / (st * st * s) +
      (x[j]! * y[j]! * l) / (st * s) +
      c -
      logTerm(l, 1).c;
  }
  return score;
}
