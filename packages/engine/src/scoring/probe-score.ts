import type { LogisticCalibration } from '../models/manifest.js';
import { qualityAdjustedScore } from './calibration.js';
import { normalisedScore, type Cohort } from './score-norm.js';
import { DEFAULT_SAMPLE_SCORING_RULE, matchScore, scoreAgainstSamples, type SampleScoringRule } from './scoring.js';

/** How one speaker model's comparisons become match scores: its AS-norm cohort (null: none) and its calibration. */
export interface ModelScoring {
  cohort: Cohort | null;
  calibration: LogisticCalibration;
}

/**
 * A probe's match score against a voiceprint's samples, every comparison through the whole chain:
 * cosine, AS-norm against the model's cohort, the quality terms (the probe's net speech, the samples
 * pooled), then the logistic calibration; `rule` combines the samples (scoreAgainstSamples).
 */
export function scoreProbe(
  samples: Float32Array[],
  probe: Float32Array,
  netSpeechSeconds: number,
  scoring: ModelScoring,
  rule: SampleScoringRule = DEFAULT_SAMPLE_SCORING_RULE,
): { matchScore: number; cosine: number } {
  // The samples term applies to the mean of the samples, not to each one.
  const pooledSamples = rule === 'mean_embedding' ? samples.length : 1;
  return scoreAgainstSamples(samples, probe, rule, (cosine, enrolled) =>
    matchScore(qualityAdjustedScore(normalisedScore(cosine, enrolled, probe, scoring.cohort), netSpeechSeconds, scoring.calibration, pooledSamples), scoring.calibration),
  );
}
