/**
 * Decision calibration that holds in every recording condition: the slope of
 * `match_score = sigmoid(a * score + b)` is fitted by logistic regression on all dev trials (score =
 * the AS-normed cosine when the model has a cohort), and the offset `b` is then set so that the
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
  /** The score (normalised cosine) that maps to `threshold`. */
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

export function fitDecisionCalibration(targets: number[], nontargets: number[], blocks: TrialBlock[], o: DecisionCalibrationOptions = {}): DecisionCalibration {
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
    return { name: blk.name, nontargets: blk.nontargets.length, far: r.far, frr: r.frr, binding: blk.name === worstBlock };
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
   * decision lets more impostors through at 3 or 5 samples (training/sv_study.py multi fits it).
   */
  enrolSamplesLog?: number;
}

export function qualityAdjustedScore(score: number, testSpeechSeconds: number, calibration: { quality?: QualityTerms }, enrolSamples = 1): number {
  const w = calibration.quality?.testLogDuration;
  const samplesTerm = (calibration.quality?.enrolSamplesLog ?? 0) * Math.log(Math.max(1, enrolSamples));
  if (!w || !Number.isFinite(testSpeechSeconds)) return score + samplesTerm;
  return score + w * Math.log(Math.max(0, testSpeechSeconds) + 0.5) + samplesTerm;
}

/** Class-balanced logistic regression on [score, q] (Newton); returns the weight of q in score units (c / a). */
export function fitQualityWeight(targets: { s: number; q: number }[], nontargets: { s: number; q: number }[]): number {
  let w = [1, 0, 0];
  const wt = 0.5 / targets.length;
  const wn = 0.5 / nontargets.length;
  for (let iter = 0; iter < 60; iter++) {
    const g = [0, 0, 0];
    const H = [
      [1e-6, 0, 0],
      [0, 1e-6, 0],
      [0, 0, 1e-6],
    ];
    const acc = (x: number[], y: number, cw: number) => {
      const p = 1 / (1 + Math.exp(-(w[0]! * x[0]! + w[1]! * x[1]! + w[2]! * x[2]!)));
      const r = (p - y) * cw;
      const h = Math.max(p * (1 - p), 1e-12) * cw;
      for (let i = 0; i < 3; i++) {
        g[i]! += r * x[i]!;
        for (let j = 0; j < 3; j++) H[i]![j]! += h * x[i]! * x[j]!;
      }
    };
    for (const t of targets) acc([t.s, t.q, 1], 1, wt);
    for (const t of nontargets) acc([t.s, t.q, 1], 0, wn);
    const d = solve3(H, g);
    if (!d) break;
    w = w.map((v, i) => v - d[i]!);
    if (Math.max(...d.map(Math.abs)) < 1e-9) break;
  }
  return w[1]! / w[0]!;
}

function solve3(A: number[][], b: number[]): number[] | null {
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < 3; c++) {
    let p = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    if (Math.abs(M[p]![c]!) < 1e-15) return null;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k < 4; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return [0, 1, 2].map((i) => M[i]![3]! / M[i]![i]!);
}
