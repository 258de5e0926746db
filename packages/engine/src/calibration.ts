/**
 * Decision calibration that holds in every recording condition: the slope of
 * `match_score = sigmoid(a * score + b)` is fitted by logistic regression on all dev trials (score =
 * the AS-normed cosine when the model has a cohort), and the offset `b` is then set so that the
 * server's decision `match_score >= threshold` keeps the false-accept rate at or below `maxFar` in
 * EVERY block of trials (corpus, language pairing, cross-corpus), not only on the pooled trials.
 * The worst block sets the threshold; the others then accept fewer impostors than the limit.
 */
import { fitLogisticCalibration, ratesAtThreshold } from './metrics.js';
import type { LogisticCalibration } from './manifest.js';

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
  const { a } = fitLogisticCalibration(targets, nontargets);
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
  const b = logit - a * scoreThreshold;
  const report = blocks.map((blk) => {
    const r = ratesAtThreshold(blk.targets, blk.nontargets, scoreThreshold);
    return { name: blk.name, nontargets: blk.nontargets.length, far: r.far, frr: r.frr, binding: blk.name === worstBlock };
  });
  return { type: 'logistic', a, b, scoreThreshold, threshold, maxFar, worstBlock, blocks: report };
}
