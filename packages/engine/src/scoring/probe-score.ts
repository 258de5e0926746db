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
import { assertPldaDim, loadPlda, pldaMeanScore, pldaScore, type Plda } from './plda.js';
import { loadCohort, normalisedScore, type Cohort } from './score-norm.js';
import {
  DEFAULT_CALIBRATION,
  DEFAULT_SAMPLE_SCORING_RULE,
  l2normalize,
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
 * `ignoreCalibration`: the default calibration instead of the entry's, which then need not fit (for the tool that
 * refits it).
 */
export async function loadModelScoring(
  entry: ModelEntry,
  modelsDir: string,
  opts: { ignoreCalibration?: boolean } = {},
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
  const mismatch = opts.ignoreCalibration ? null : calibrationMismatch(entry);
  if (mismatch) throw new EngineError('manifest_invalid', mismatch);
  if (cohort && typeof comparedDim === 'number' && cohort.spec.dim !== comparedDim)
    throw new EngineError(
      'manifest_invalid',
      `model ${entry.name}: scoreNormalization.dim is ${cohort.spec.dim}, but embeddings are compared in ${comparedDim} dimensions${projection ? ' (after embeddingProjection)' : ''}`,
    );
  const calibration = opts.ignoreCalibration ? undefined : entry.calibration;
  return { projection, plda, cohort, calibration: calibration ?? DEFAULT_CALIBRATION };
}

const COMPARISON_FILES = ['embeddingProjection', 'plda'] as const;

/**
 * Why the entry's calibration cannot map its comparison's scores, or null when it can: fitted on cosines while the
 * entry names a PLDA (or the other way round), fitted with other projection or PLDA files than the entry names
 * (`calibration.fittedWith`, their sha256), or a PLDA with no calibration at all. A PLDA's calibration applied to
 * cosines would accept everyone, the default one applied to a PLDA nearly no one, so the engine refuses such an entry.
 */
export function calibrationMismatch(entry: ModelEntry): string | null {
  const refit = 'refit it with npm run eval -- --write-calibration';
  const compared = entry.plda ? 'plda' : 'cosine';
  if (!entry.calibration)
    return entry.plda
      ? `model ${entry.name}: it names a plda but no calibration of its scores; ${refit}`
      : null;
  const fittedOn = entry.calibration.score ?? 'cosine';
  if (fittedOn !== compared)
    return `model ${entry.name}: its calibration was fitted on ${fittedOn} scores, but it compares by ${compared}${entry.plda ? ' (it names a plda)' : ' (it names no plda)'}; ${refit}`;
  const fittedWith = entry.calibration.fittedWith;
  if (!fittedWith) return null;
  for (const key of COMPARISON_FILES) {
    const named = (entry[key] as { sha256?: string } | undefined)?.sha256 ?? null;
    const fitted = fittedWith[key] ?? null;
    if (named?.toLowerCase() !== fitted?.toLowerCase())
      return `model ${entry.name}: its calibration was fitted with ${fitted ? `the ${key} of sha256 ${fitted.slice(0, 12)}…` : `no ${key}`}, but the entry names ${named ? `one of sha256 ${named.slice(0, 12)}…` : 'none'}; ${refit}`;
  }
  return null;
}

/**
 * The score the calibration maps, for two projected embeddings: the PLDA log-likelihood ratio when the model
 * has one, else their cosine, AS-normed against the model's cohort when it has one. `pooled`: `enrolled` is the
 * unit mean of these samples (the voiceprint's mean embedding), which a PLDA with covariances scores as n samples.
 */
export function comparisonScore(
  cosine: number,
  enrolled: Float32Array,
  probe: Float32Array,
  scoring: Pick<ModelScoring, 'plda' | 'cohort'>,
  pooled?: { mean: Float32Array; samples: number },
): number {
  if (scoring.plda)
    return pooled
      ? pldaMeanScore(pooled.mean, pooled.samples, probe, scoring.plda)
      : pldaScore(enrolled, probe, scoring.plda);
  return normalisedScore(cosine, enrolled, probe, scoring.cohort);
}

/** The element-wise mean of the embeddings made unit length, not re-normalised (what n-sample PLDA reads). */
function averageOf(embeddings: Float32Array[]): Float32Array {
  const mean = new Float32Array(embeddings[0]!.length);
  for (const e of embeddings) {
    const u = l2normalize(e);
    for (let i = 0; i < mean.length; i++) mean[i]! += u[i]! / embeddings.length;
  }
  return mean;
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
  const pooled =
    pooledSamples > 1 && scoring.plda
      ? { mean: averageOf(projectedSamples), samples: pooledSamples }
      : undefined;
  return scoreAgainstSamples(projectedSamples, projectedProbe, rule, (cosine, enrolled) => {
    const channelShift = channelTerm(
      scoring.calibration,
      sampleQuality.get(enrolled) ?? pooledQuality,
      quality.probe,
    );
    return matchScore(
      qualityAdjustedScore(
        comparisonScore(
          cosine,
          enrolled,
          projectedProbe,
          scoring,
          sampleQuality.has(enrolled) ? undefined : pooled,
        ),
        netSpeechSeconds,
        scoring.calibration,
        pooledSamples,
      ) + channelShift,
      scoring.calibration,
    );
  });
}
