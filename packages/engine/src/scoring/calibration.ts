/**
 * Decision calibration that holds in every recording condition: the slope of
 * `match_score = sigmoid(a * score + b)` is fitted by logistic regression on all dev trials (score =
 * the PLDA log-likelihood ratio when the model has a PLDA, the AS-normed cosine when it has a cohort), and the offset `b` is then set so that the
 * server's decision `match_score >= threshold` keeps the false-accept rate at or below `maxFar` in
 * EVERY block of trials (corpus, language pairing, cross-corpus), not only on the pooled trials.
 * The worst block sets the threshold; the others then accept fewer impostors than the limit.
 */
import { fitLogisticCalibration, ratesAtThreshold } from './metrics.js';
import type { LogisticCalibration } from '../models/manifest.js';

export interface TrialBlock {
  name: string;
  targets: number[];
  nontargets: number[];
}

export interface DecisionCalibrationOptions {
  /** The match-score threshold the decision uses (the server's MATCH_THRESHOLD). */
  threshold?: number;
  /** Highest false-accept rate allowed in any block. */
  maxFar?: number;
  /** Blocks with fewer non-target trials are reported but do not set the threshold. */
  minNontargets?: number;
}

export interface DecisionCalibration extends LogisticCalibration {
  /** The comparison score (cosine, AS-normed cosine or PLDA log-likelihood ratio) that maps to `threshold`. */
  scoreThreshold: number;
  threshold: number;
  maxFar: number;
  /** The block that set the threshold. */
  worstBlock: string;
  blocks: { name: string; nontargets: number; far: number; frr: number; binding: boolean }[];
}

/** Smallest score s such that at most maxFar of the non-targets are >= s. */
function blockThreshold(nontargets: number[], maxFar: number): number {
  const sorted = [...nontargets].sort((x, y) => y - x);
  const allowed = Math.floor(maxFar * sorted.length + 1e-9);
  // accept strictly above the (allowed+1)-th highest non-target
  const v = sorted[Math.min(allowed, sorted.length - 1)]!;
  return v + 1e-6 * Math.max(1, Math.abs(v));
}

export function fitDecisionCalibration(
  targets: number[],
  nontargets: number[],
  blocks: TrialBlock[],
  o: DecisionCalibrationOptions = {},
): DecisionCalibration {
  const threshold = o.threshold ?? 0.85;
  const maxFar = o.maxFar ?? 0.02;
  const minNon = o.minNontargets ?? 30;
  // a rounded, b rounded down (to the 6 decimals the manifest keeps): never a lower score threshold
  const a = Number(fitLogisticCalibration(targets, nontargets).a.toFixed(6));
  const used = blocks.filter((b) => b.nontargets.length >= minNon && b.targets.length > 0);
  let scoreThreshold = -Infinity;
  let worstBlock = '';
  for (const b of used) {
    const t = blockThreshold(b.nontargets, maxFar);
    if (t > scoreThreshold) {
      scoreThreshold = t;
      worstBlock = b.name;
    }
  }
  const logit = Math.log(threshold / (1 - threshold));
  const b = Math.floor((logit - a * scoreThreshold) * 1e6) / 1e6;
  const report = blocks.map((blk) => {
    const r = ratesAtThreshold(blk.targets, blk.nontargets, scoreThreshold);
    return {
      name: blk.name,
      nontargets: blk.nontargets.length,
      far: r.far,
      frr: r.frr,
      binding: blk.name === worstBlock,
    };
  });
  return { type: 'logistic', a, b, scoreThreshold, threshold, maxFar, worstBlock, blocks: report };
}

/**
 * Quality-aware calibration (optional `quality` block of a speaker model's calibration): the score is
 * shifted by `testLogDuration * ln(net speech seconds of the test recording + 0.5)` before the
 * logistic map, so that a long, clean test recording needs a lower raw score than a 1 s one for the
 * same decision. Only the test side is used: a stored voiceprint does not keep its enrolment's
 * duration.
 */
export interface QualityTerms {
  testLogDuration?: number;
  /**
   * Added as `enrolSamplesLog * ln(samples)` when a probe is compared with the mean of several enrolment
   * samples: that mean is closer to everyone who records alike, so without it the single-recording
   * decision lets more impostors through at 3 or 5 samples (python -m training.voxkey_train.sv_study multi fits it).
   */
  enrolSamplesLog?: number;
  /** Terms in the measured quality of both recordings (bandwidth, codec holes, reverberation, SNR, speech). */
  channel?: ChannelTerms;
}

/** What the engine measured of one recording, as the channel terms read it. */
export interface RecordingQuality {
  netSpeechSeconds: number;
  snrDb: number;
  bandwidthHz: number;
  spectralHoleRatio: number;
  decayRateDbPerS: number;
}

const clamp = (x: number, lo: number, hi: number) =>
  Math.max(lo, Math.min(hi, Number.isFinite(x) ? x : lo));
const kHz = (q: RecordingQuality) => clamp(q.bandwidthHz, 0, 8000) / 1000;
/** Below about 5.5 kHz a recording has lost the band CAM++ separates voices with (8 kHz codecs, telephone, Opus at 6-8 kb/s). */
const NARROWBAND_KNEE_KHZ = 5.5;

/**
 * The trial features the channel terms weigh, from the enrolment's and the test's measured quality; scaled to
 * about unit range. The poorer side counts (min), and so does how far the two channels are apart.
 */
export const CHANNEL_FEATURES = {
  minBandwidthKHz: (e: RecordingQuality, t: RecordingQuality) =>
    Math.min(clamp(e.bandwidthHz, 0, 8000), clamp(t.bandwidthHz, 0, 8000)) / 1000,
  bandwidthGapKHz: (e: RecordingQuality, t: RecordingQuality) =>
    Math.abs(clamp(e.bandwidthHz, 0, 8000) - clamp(t.bandwidthHz, 0, 8000)) / 1000,
  minDecayHundredDbPerS: (e: RecordingQuality, t: RecordingQuality) =>
    Math.min(clamp(e.decayRateDbPerS, 0, 1000), clamp(t.decayRateDbPerS, 0, 1000)) / 100,
  maxSpectralHoleRatio: (e: RecordingQuality, t: RecordingQuality) =>
    Math.max(clamp(e.spectralHoleRatio, 0, 1), clamp(t.spectralHoleRatio, 0, 1)),
  minSnrTenDb: (e: RecordingQuality, t: RecordingQuality) =>
    Math.min(clamp(e.snrDb, 0, 40), clamp(t.snrDb, 0, 40)) / 10,
  minLogSpeech: (e: RecordingQuality, t: RecordingQuality) =>
    Math.log(Math.min(clamp(e.netSpeechSeconds, 0, 600), clamp(t.netSpeechSeconds, 0, 600)) + 0.5),
  /** kHz below the knee of the narrower side: a narrowband recording (a "both sides" twin was dropped: docs/accuracy.md). */
  narrowEitherKHz: (e: RecordingQuality, t: RecordingQuality) =>
    Math.max(0, NARROWBAND_KNEE_KHZ - Math.min(kHz(e), kHz(t))),
} as const;
export type ChannelFeature = keyof typeof CHANNEL_FEATURES;
export const CHANNEL_FEATURE_NAMES = Object.keys(CHANNEL_FEATURES) as ChannelFeature[];

/**
 * Channel terms of a calibration: `score += sum of weights[f] * feature f (enrolment quality, test quality)`.
 * `neutral` stands in for a side whose quality was not measured (voiceprints enrolled before the terms existed).
 */
export interface ChannelTerms {
  weights: Partial<Record<ChannelFeature, number>>;
  neutral: RecordingQuality;
}

export function channelFeatures(
  enrol: RecordingQuality | null | undefined,
  test: RecordingQuality,
  neutral: RecordingQuality,
): Record<ChannelFeature, number> {
  const e = enrol ?? neutral;
  return Object.fromEntries(
    CHANNEL_FEATURE_NAMES.map((f) => [f, CHANNEL_FEATURES[f](e, test)]),
  ) as Record<ChannelFeature, number>;
}

/** The score shift the calibration's channel terms give this pair of recordings (0 without channel terms). */
export function channelTerm(
  calibration: { quality?: QualityTerms },
  enrol: RecordingQuality | null | undefined,
  test: RecordingQuality | null | undefined,
): number {
  const terms = calibration.quality?.channel;
  if (!terms || !test) return 0;
  const x = channelFeatures(enrol, test, terms.neutral);
  let shift = 0;
  for (const f of CHANNEL_FEATURE_NAMES) shift += (terms.weights[f] ?? 0) * x[f];
  return shift;
}

/** Per-feature mean of the qualities known (a voiceprint's samples); null when none is. */
export function meanQuality(
  qualities: (RecordingQuality | null | undefined)[],
): RecordingQuality | null {
  const known = qualities.filter((q): q is RecordingQuality => !!q);
  if (!known.length) return null;
  const mean = (f: keyof RecordingQuality) => known.reduce((a, q) => a + q[f], 0) / known.length;
  return {
    netSpeechSeconds: mean('netSpeechSeconds'),
    snrDb: mean('snrDb'),
    bandwidthHz: mean('bandwidthHz'),
    spectralHoleRatio: mean('spectralHoleRatio'),
    decayRateDbPerS: mean('decayRateDbPerS'),
  };
}

export function qualityAdjustedScore(
  score: number,
  testSpeechSeconds: number,
  calibration: { quality?: QualityTerms },
  enrolSamples = 1,
): number {
  const w = calibration.quality?.testLogDuration;
  const samplesTerm =
    (calibration.quality?.enrolSamplesLog ?? 0) * Math.log(Math.max(1, enrolSamples));
  if (!w || !Number.isFinite(testSpeechSeconds)) return score + samplesTerm;
  return score + w * Math.log(Math.max(0, testSpeechSeconds) + 0.5) + samplesTerm;
}

/**
 * The channel weights that keep the impostor score tail level across conditions: a linear quantile regression
 * (`quantile`, e.g. 0.99 for a 1% FAR) of the non-target scores on the trial features (iteratively reweighted
 * least squares on the check loss; trials weighted by `w`). Returns minus the slopes, so that
 * `score + weights . features` has about the same `quantile` in every condition.
 */
export function fitTailWeights(
  nontargets: { s: number; q: number[]; w?: number }[],
  quantile: number,
  iterations = 200,
): number[] {
  const n = nontargets[0]!.q.length + 1;
  const rows = nontargets.map((t) => [...t.q, 1]);
  const ls = (weight: (i: number) => number) => {
    const A = Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => (i === j ? 1e-8 : 0)),
    );
    const g = new Array<number>(n).fill(0);
    rows.forEach((x, k) => {
      const w = weight(k);
      for (let i = 0; i < n; i++) {
        g[i]! += w * x[i]! * nontargets[k]!.s;
        for (let j = 0; j < n; j++) A[i]![j]! += w * x[i]! * x[j]!;
      }
    });
    return solve(A, g);
  };
  let beta = ls((k) => nontargets[k]!.w ?? 1);
  if (!beta) return new Array<number>(n - 1).fill(0);
  for (let iter = 0; iter < iterations; iter++) {
    const current = beta;
    const next = ls((k) => {
      const r = nontargets[k]!.s - rows[k]!.reduce((a, x, i) => a + x * current[i]!, 0);
      return (
        ((nontargets[k]!.w ?? 1) * (r > 0 ? quantile : 1 - quantile)) / Math.max(Math.abs(r), 1e-4)
      );
    });
    if (!next) break;
    const change = Math.max(...next.map((v, i) => Math.abs(v - current[i]!)));
    beta = next;
    if (change < 1e-7) break;
  }
  return beta.slice(0, n - 1).map((c) => -c);
}

/** Class-balanced logistic regression on [score, q] (Newton); returns the weight of q in score units (c / a). */
export function fitQualityWeight(
  targets: { s: number; q: number }[],
  nontargets: { s: number; q: number }[],
): number {
  return fitQualityWeights(
    targets.map((t) => ({ s: t.s, q: [t.q] })),
    nontargets.map((t) => ({ s: t.s, q: [t.q] })),
  )[0]!;
}

/**
 * Class-balanced logistic regression on [score, q_1..q_n, 1] (Newton, trials weighted by `w` when given);
 * returns the weights of the q_i in score units (c_i / a).
 */
export function fitQualityWeights(
  targets: { s: number; q: number[]; w?: number }[],
  nontargets: { s: number; q: number[]; w?: number }[],
): number[] {
  const n = (targets[0] ?? nontargets[0])!.q.length + 2;
  let w: number[] = Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0));
  const sumW = (xs: { w?: number }[]) => xs.reduce((a, x) => a + (x.w ?? 1), 0);
  const wt = 0.5 / sumW(targets);
  const wn = 0.5 / sumW(nontargets);
  for (let iter = 0; iter < 60; iter++) {
    const g = new Array<number>(n).fill(0);
    const H = Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => (i === j ? 1e-6 : 0)),
    );
    const acc = (x: number[], y: number, cw: number) => {
      let z = 0;
      for (let i = 0; i < n; i++) z += w[i]! * x[i]!;
      const p = 1 / (1 + Math.exp(-z));
      const r = (p - y) * cw;
      const h = Math.max(p * (1 - p), 1e-12) * cw;
      for (let i = 0; i < n; i++) {
        g[i]! += r * x[i]!;
        for (let j = 0; j < n; j++) H[i]![j]! += h * x[i]! * x[j]!;
      }
    };
    for (const t of targets) acc([t.s, ...t.q, 1], 1, wt * (t.w ?? 1));
    for (const t of nontargets) acc([t.s, ...t.q, 1], 0, wn * (t.w ?? 1));
    const d = solve(H, g);
    if (!d) break;
    w = w.map((v, i) => v - d[i]!);
    if (Math.max(...d.map(Math.abs)) < 1e-9) break;
  }
  return w.slice(1, n - 1).map((c) => c / w[0]!);
}

function solve(A: number[][], b: number[]): number[] | null {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    if (Math.abs(M[p]![c]!) < 1e-15) return null;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return Array.from({ length: n }, (_, i) => M[i]![n]! / M[i]![i]!);
}
