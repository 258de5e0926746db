import type { LogisticCalibration } from '../models/manifest.js';
import {
  channelTerm,
  meanQuality,
  qualityAdjustedScore,
  type RecordingQuality,
} from './calibration.js';
import { EngineError } from '../errors.js';
import type { ModelEntry } from '../models/manifest.js';
import {
  loadEmbeddingProjection,
  projectEmbedding,
  type EmbeddingProjection,
} from './projection.js';
import { assertPldaDim, loadPlda, pldaScore, type Plda } from './plda.js';
import { loadCohort, normalisedScore, type Cohort } from './score-norm.js';
import {
  DEFAULT_CALIBRATION,
  DEFAULT_SAMPLE_SCORING_RULE,
  matchScore,
  scoreAgainstSamples,
  type SampleScoringRule,
} from './scoring.js';

/**
 * How one speaker model's comparisons become match scores: its embedding projection, PLDA and AS-norm cohort
 * (null: none; PLDA and a cohort live in the projected space; a model has one or the other) and its calibration.
 */
export interface ModelScoring {
  projection: EmbeddingProjection | null;
  plda: Plda | null;
  cohort: Cohort | null;
  calibration: LogisticCalibration;
}

/**
 * A speaker model's scoring as its manifest entry names it: the projection and cohort files (sha256-checked)
 * and the calibration. A cohort must be in the space the comparison happens in (the projection's output).
 */
export async function loadModelScoring(
  entry: ModelEntry,
  modelsDir: string,
): Promise<ModelScoring> {
  const projection = await loadEmbeddingProjection(entry, modelsDir);
  const cohort = await loadCohort(entry, modelsDir);
  const plda = await loadPlda(entry, modelsDir);
  const comparedDim = projection?.spec.outputDim ?? entry.output?.embeddingSize;
  assertPldaDim(entry, plda, comparedDim);
  if (plda && cohort)
    throw new EngineError(
      'manifest_invalid',
      `model ${entry.name}: plda and scoreNormalization cannot be combined (AS-norm normalises cosines)`,
    );
  const mismatch = calibrationMismatch(entry);
  if (mismatch) throw new EngineError('manifest_invalid', mismatch);
  if (cohort && typeof comparedDim === 'number' && cohort.spec.dim !== comparedDim)
    throw new EngineError(
      'manifest_invalid',
      `model ${entry.name}: scoreNormalization.dim is ${cohort.spec.dim}, but embeddings are compared in ${comparedDim} dimensions${projection ? ' (after embeddingProjection)' : ''}`,
    );
  return { projection, plda, cohort, calibration: entry.calibration ?? DEFAULT_CALIBRATION };
}

/**
 * Why the entry's calibration cannot map its comparison's scores (fitted on cosines while the entry names a PLDA, or
 * the other way round), or null when it can or there is none: a PLDA's calibration applied to cosines would accept
 * everyone, so the engine refuses such an entry.
 */
export function calibrationMismatch(entry: ModelEntry): string | null {
  const compared = entry.plda ? 'plda' : 'cosine';
  const fittedOn = entry.calibration ? (entry.calibration.score ?? 'cosine') : compared;
  return fittedOn === compared
    ? null
    : `model ${entry.name}: its calibration was fitted on ${fittedOn} scores, but it compares by ${compared}${entry.plda ? ' (it names a plda)' : ' (it names no plda)'}; refit it with npm run eval -- --write-calibration`;
}

/**
 * The score the calibration maps, for two projected embeddings: the PLDA log-likelihood ratio when the model
 * has one, else their cosine, AS-normed against the model's cohort when it has one.
 */
export function comparisonScore(
  cosine: number,
  enrolled: Float32Array,
  probe: Float32Array,
  scoring: Pick<ModelScoring, 'plda' | 'cohort'>,
): number {
  if (scoring.plda) return pldaScore(enrolled, probe, scoring.plda);
  return normalisedScore(cosine, enrolled, probe, scoring.cohort);
}

/** The measured channel quality of the probe and of each sample (null where a sample predates the measure). */
export interface ProbeQuality {
  probe: RecordingQuality | null;
  samples: (RecordingQuality | null)[];
}

/**
 * A probe's match score against a voiceprint's samples, every comparison through the whole chain: the
 * model's projection of both embeddings, their PLDA score or cosine (comparisonScore), the quality
 * terms (the probe's net speech, the samples pooled), the channel terms in the quality of both recordings,
 * then the logistic calibration; `rule` combines the samples (scoreAgainstSamples). A sample without a
 * measured quality counts as the mean of those with one.
 */
export function scoreProbe(
  samples: Float32Array[],
  probe: Float32Array,
  netSpeechSeconds: number,
  scoring: ModelScoring,
  rule: SampleScoringRule = DEFAULT_SAMPLE_SCORING_RULE,
  quality: ProbeQuality = { probe: null, samples: [] },
): { matchScore: number; cosine: number } {
  // The samples term applies to the mean of the samples, not to each one.
  const pooledSamples = rule === 'mean_embedding' ? samples.length : 1;
  const projectedSamples = samples.map((sample) => projectEmbedding(sample, scoring.projection));
  const projectedProbe = projectEmbedding(probe, scoring.projection);
  const sampleQuality = new Map(
    projectedSamples.map((embedding, i) => [embedding, quality.samples[i] ?? null]),
  );
  const pooledQuality = meanQuality(quality.samples);
  return scoreAgainstSamples(projectedSamples, projectedProbe, rule, (cosine, enrolled) => {
    const channelShift = channelTerm(
      scoring.calibration,
      sampleQuality.get(enrolled) ?? pooledQuality,
      quality.probe,
    );
    return matchScore(
      qualityAdjustedScore(
        comparisonScore(cosine, enrolled, projectedProbe, scoring),
        netSpeechSeconds,
        scoring.calibration,
        pooledSamples,
      ) + channelShift,
      scoring.calibration,
    );
  });
}
