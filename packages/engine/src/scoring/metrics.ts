/** Detection metrics for speaker verification and spoof detection. Higher score = more "target"/"bona fide". */

export interface EerResult {
  eer: number;
  threshold: number;
}

function sortedCopy(xs: ArrayLike<number>): Float64Array {
  return Float64Array.from(xs).sort();
}

/** Count of values < t in a sorted array. */
function countBelow(sorted: Float64Array, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Operating points at every distinct score used as "accept if score >= t". */
function sweep(
  targets: ArrayLike<number>,
  nontargets: ArrayLike<number>,
): { t: number; pMiss: number; pFa: number }[] {
  const tar = sortedCopy(targets);
  const non = sortedCopy(nontargets);
  const all = Array.from(new Set([...tar, ...non])).sort((a, b) => a - b);
  all.push(Infinity);
  return all.map((t) => ({
    t,
    pMiss: countBelow(tar, t) / tar.length,
    pFa: (non.length - countBelow(non, t)) / non.length,
  }));
}

export function eer(targets: ArrayLike<number>, nontargets: ArrayLike<number>): EerResult {
  if (!targets.length || !nontargets.length) return { eer: NaN, threshold: NaN };
  const pts = sweep(targets, nontargets);
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    if (b.pMiss >= b.pFa) {
      // crossing between a and b: interpolate along the segment
      const da = a.pFa - a.pMiss;
      const db = b.pMiss - b.pFa;
      const w = da + db > 0 ? da / (da + db) : 0.5;
      const e = a.pMiss + w * (b.pMiss - a.pMiss);
      return { eer: e, threshold: Number.isFinite(b.t) ? b.t : a.t };
    }
  }
  return { eer: 0, threshold: pts[0]!.t };
}

export interface DcfOptions {
  pTarget?: number;
  cMiss?: number;
  cFa?: number;
}

/** Normalised minimum detection cost (default P_target 0.01, C_miss = C_fa = 1). */
export function minDcf(
  targets: ArrayLike<number>,
  nontargets: ArrayLike<number>,
  o: DcfOptions = {},
): { minDcf: number; threshold: number } {
  const p = o.pTarget ?? 0.01;
  const cMiss = o.cMiss ?? 1;
  const cFa = o.cFa ?? 1;
  const norm = Math.min(cMiss * p, cFa * (1 - p));
  let best = Infinity;
  let threshold = NaN;
  for (const pt of sweep(targets, nontargets)) {
    const c = (cMiss * p * pt.pMiss + cFa * (1 - p) * pt.pFa) / norm;
    if (c < best) {
      best = c;
      threshold = pt.t;
    }
  }
  return { minDcf: best, threshold };
}

export function ratesAtThreshold(
  targets: ArrayLike<number>,
  nontargets: ArrayLike<number>,
  threshold: number,
): { far: number; frr: number } {
  let miss = 0;
  let fa = 0;
  for (let i = 0; i < targets.length; i++) if (targets[i]! < threshold) miss++;
  for (let i = 0; i < nontargets.length; i++) if (nontargets[i]! >= threshold) fa++;
  return { frr: miss / targets.length, far: fa / nontargets.length };
}

/** FAR at the threshold that rejects `frr` of the positives (spoof: bona fide = positive). */
export function farAtFrr(
  positives: ArrayLike<number>,
  negatives: ArrayLike<number>,
  frr = 0.01,
): { far: number; threshold: number } {
  const pos = sortedCopy(positives);
  const k = Math.floor(frr * pos.length);
  const threshold = pos[k]!; // the k lowest positives (< threshold) are rejected
  let fa = 0;
  for (let i = 0; i < negatives.length; i++) if (negatives[i]! >= threshold) fa++;
  return { far: fa / negatives.length, threshold };
}

const log2 = Math.log2;
const softplus2 = (x: number) => (x > 30 ? x / Math.LN2 : log2(1 + Math.exp(x)));

/** Cllr (bits) of log-likelihood ratios; from calibrated probabilities use llr = logit(p) (prior 0.5). */
export function cllr(targetLlrs: ArrayLike<number>, nontargetLlrs: ArrayLike<number>): number {
  let t = 0;
  let n = 0;
  for (let i = 0; i < targetLlrs.length; i++) t += softplus2(-targetLlrs[i]!);
  for (let i = 0; i < nontargetLlrs.length; i++) n += softplus2(nontargetLlrs[i]!);
  return 0.5 * (t / targetLlrs.length + n / nontargetLlrs.length);
}

export const logit = (p: number): number => {
  const q = Math.min(1 - 1e-12, Math.max(1e-12, p));
  return Math.log(q / (1 - q));
};

/**
 * Class-balanced logistic regression of target vs non-target on the comparison score (cosine or PLDA
 * log-likelihood ratio; Newton's method): sigmoid(a * score + b) is then a posterior at a 50% prior, i.e.
 * logit = an LLR.
 */
export function fitLogisticCalibration(
  targets: ArrayLike<number>,
  nontargets: ArrayLike<number>,
): { type: 'logistic'; a: number; b: number } {
  // Newton on standardised scores (a PLDA log-likelihood ratio spans tens where a cosine spans one), each
  // step halved until the weighted log-loss falls, so the fit converges whatever the score's scale.
  const all = [...Array.from(targets), ...Array.from(nontargets)];
  if (!all.every(Number.isFinite))
    throw new RangeError('calibration scores must be finite numbers');
  const centre = all.reduce((s, x) => s + x, 0) / Math.max(1, all.length);
  const spread =
    Math.sqrt(all.reduce((s, x) => s + (x - centre) ** 2, 0) / Math.max(1, all.length)) || 1;
  const z = (x: number) => (x - centre) / spread;
  const wt = 0.5 / targets.length;
  const wn = 0.5 / nontargets.length;
  const softplus = (v: number) => (v > 0 ? v + Math.log1p(Math.exp(-v)) : Math.log1p(Math.exp(v)));
  const loss = (a: number, b: number) => {
    let l = 0;
    for (let i = 0; i < targets.length; i++) l += wt * softplus(-(a * z(targets[i]!) + b));
    for (let i = 0; i < nontargets.length; i++) l += wn * softplus(a * z(nontargets[i]!) + b);
    return l;
  };
  let a = 1;
  let b = 0;
  let current = loss(a, b);
  for (let iter = 0; iter < 100; iter++) {
    let ga = 0,
      gb = 0,
      haa = 0,
      hab = 0,
      hbb = 0;
    const acc = (raw: number, y: number, w: number) => {
      const x = z(raw);
      const p = 1 / (1 + Math.exp(-(a * x + b)));
      const r = (p - y) * w;
      const s = Math.max(p * (1 - p), 1e-12) * w;
      ga += r * x;
      gb += r;
      haa += s * x * x;
      hab += s * x;
      hbb += s;
    };
    for (let i = 0; i < targets.length; i++) acc(targets[i]!, 1, wt);
    for (let i = 0; i < nontargets.length; i++) acc(nontargets[i]!, 0, wn);
    // tiny ridge keeps separable data finite
    haa += 1e-6;
    hbb += 1e-6;
    const det = haa * hbb - hab * hab;
    if (!(Math.abs(det) > 0)) break;
    let da = (hbb * ga - hab * gb) / det;
    let db = (haa * gb - hab * ga) / det;
    let next = loss(a - da, b - db);
    for (let halvings = 0; !(next <= current) && halvings < 30; halvings++) {
      da /= 2;
      db /= 2;
      next = loss(a - da, b - db);
    }
    if (!(next <= current)) break;
    a -= da;
    b -= db;
    current = next;
    if (Math.abs(da) < 1e-9 && Math.abs(db) < 1e-9) break;
  }
  return { type: 'logistic', a: a / spread, b: b - (a * centre) / spread };
}
