import { LIMITS } from '../limits.js';
import { sigmoid } from '../math.js';
import type { LogisticCalibration } from '../models/manifest.js';

export function l2normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  const out = new Float32Array(v.length);
  if (n > 0 && Number.isFinite(n)) for (let i = 0; i < v.length; i++) out[i] = v[i]! / n;
  return out;
}

export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length)
    throw new RangeError(`embedding sizes differ (${a.length} vs ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  if (na === 0 || nb === 0) return 0;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}

/** Voiceprint = L2-normalised mean of the L2-normalised segment embeddings. */
export function meanEmbedding(embeddings: Float32Array[]): Float32Array {
  if (embeddings.length === 0) throw new RangeError('no embeddings');
  const d = embeddings[0]!.length;
  const sum = new Float32Array(d);
  for (const e of embeddings) {
    const n = l2normalize(e);
    for (let i = 0; i < d; i++) sum[i]! += n[i]!;
  }
  return l2normalize(sum);
}

/** Used when a model has no fitted calibration: maps cosine 0.5 -> 0.5 and 0.7 -> ~0.88. */
export const DEFAULT_CALIBRATION: LogisticCalibration = { type: 'logistic', a: 10, b: -5 };

/** Calibrated match score in [0, 1]: sigmoid(a * cosine + b), fitted per model on dev trials. */
export function matchScore(
  cosine: number,
  calibration: LogisticCalibration = DEFAULT_CALIBRATION,
): number {
  return sigmoid(calibration.a * cosine + calibration.b);
}

/**
 * How a probe is scored against a voiceprint of several samples (one embedding per enrolment recording):
 * `mean_embedding` compares with the L2-normalised mean of the samples, `mean_score` averages the
 * calibrated per-sample scores, `best_of` takes the best one. `mean_embedding` had the lowest dev EER
 * with 1, 3 and 5 enrolment recordings (docs/accuracy.md, "Several enrolment recordings").
 */
export type SampleScoringRule = 'mean_embedding' | 'mean_score' | 'best_of';
export const SAMPLE_SCORING_RULES: readonly SampleScoringRule[] = [
  'mean_embedding',
  'mean_score',
  'best_of',
];
export const DEFAULT_SAMPLE_SCORING_RULE: SampleScoringRule = 'mean_embedding';

/** Cosine -> calibrated match score for one enrolled embedding (a sample, or the samples' mean). */
export type SampleScorer = (cosine: number, enrolled: Float32Array) => number;

/**
 * The one place a probe meets several samples: the calibrated match score and the cosine behind it.
 * `score` turns one comparison into a match score (default: the logistic calibration); the engine
 * passes its own, so normalisation or quality terms apply to every rule alike.
 */
export function scoreAgainstSamples(
  samples: Float32Array[],
  probe: Float32Array,
  rule: SampleScoringRule = DEFAULT_SAMPLE_SCORING_RULE,
  score: SampleScorer = (cosine) => matchScore(cosine),
): { matchScore: number; cosine: number } {
  if (samples.length === 0) throw new RangeError('no samples to score against');
  if (rule === 'mean_embedding') {
    const enrolled = meanEmbedding(samples);
    const cosine = cosineSimilarity(probe, enrolled);
    return { matchScore: score(cosine, enrolled), cosine };
  }
  const cosines = samples.map((sample) => cosineSimilarity(probe, sample));
  const scores = cosines.map((cosine, i) => score(cosine, samples[i]!));
  if (rule === 'best_of') {
    const best = scores.indexOf(Math.max(...scores));
    return { matchScore: scores[best]!, cosine: cosines[best]! };
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return { matchScore: mean(scores), cosine: mean(cosines) };
}

export const DEFAULT_MATCH_THRESHOLD = 0.85;

export type VerificationResult = 'verified' | 'rejected' | 'inconclusive';

export interface VerificationDecision {
  result: VerificationResult;
  /** Why the result is inconclusive, when it is. */
  inconclusiveReason?: string;
  /** Its stable code (`low_snr`). */
  inconclusiveCode?: 'low_snr';
}

/**
 * The verification rule: `inconclusive` when the audio is too noisy for the score to be trusted
 * (SNR below `LIMITS.minVerifySnrDb`), otherwise `verified` at or above the threshold, else `rejected`.
 * The spoof result is reported alongside, never folded in here.
 */
export function decideVerification(input: {
  matchScore: number;
  threshold: number;
  snrDb: number;
}): VerificationDecision {
  if (!(input.snrDb >= LIMITS.minVerifySnrDb)) {
    return {
      result: 'inconclusive',
      inconclusiveCode: 'low_snr',
      inconclusiveReason: `SNR ${input.snrDb.toFixed(1)} dB is below ${LIMITS.minVerifySnrDb} dB`,
    };
  }
  return { result: input.matchScore >= input.threshold ? 'verified' : 'rejected' };
}
