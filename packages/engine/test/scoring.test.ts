import { describe, expect, it } from 'vitest';
import {
  cllr,
  eer,
  farAtFrr,
  fitLogisticCalibration,
  minDcf,
  ratesAtThreshold,
} from '../src/scoring/metrics.js';
import {
  estimateSnrDb,
  qualityScore,
  signalStats,
  silenceMessage,
} from '../src/scoring/quality.js';
import {
  cosineSimilarity,
  decideVerification,
  l2normalize,
  matchScore,
  meanEmbedding,
} from '../src/scoring/scoring.js';
import { sigmoid } from '../src/math.js';
import { spoofWindows, SPOOF_WINDOW } from '../src/models/spoof.js';
import { concatSegments, speechSegments } from '../src/features/vad.js';
import { rng } from './helpers.js';

describe('scoring', () => {
  it('cosine, normalisation and mean embedding', () => {
    const a = Float32Array.from([1, 0, 0]);
    const b = Float32Array.from([0, 2, 0]);
    expect(cosineSimilarity(a, a)).toBeCloseTo(1);
    expect(cosineSimilarity(a, b)).toBeCloseTo(0);
    expect(cosineSimilarity(a, new Float32Array(3))).toBe(0);
    expect(() => cosineSimilarity(a, new Float32Array(2))).toThrow(RangeError);
    expect(Math.hypot(...l2normalize(Float32Array.from([3, 4])))).toBeCloseTo(1);
    const m = meanEmbedding([a, b]);
    expect(m[0]).toBeCloseTo(Math.SQRT1_2);
    expect(m[1]).toBeCloseTo(Math.SQRT1_2);
  });
  it('calibrated match score is monotonic in [0, 1] and decisions respect quality', () => {
    const cal = { type: 'logistic' as const, a: 12, b: -6 };
    expect(matchScore(0.5, cal)).toBeCloseTo(0.5);
    expect(matchScore(1, cal)).toBeGreaterThan(0.99);
    expect(matchScore(-1, cal)).toBeLessThan(0.01);
    expect(decideVerification({ matchScore: 0.9, threshold: 0.85, snrDb: 20 })).toEqual({
      result: 'verified',
    });
    expect(decideVerification({ matchScore: 0.8, threshold: 0.85, snrDb: 20 })).toEqual({
      result: 'rejected',
    });
    expect(decideVerification({ matchScore: 0.99, threshold: 0.85, snrDb: 4.9 })).toMatchObject({
      result: 'inconclusive',
      inconclusiveReason: expect.stringMatching(/SNR 4\.9 dB/),
    });
    expect(decideVerification({ matchScore: 0.85, threshold: 0.85, snrDb: 5 }).result).toBe(
      'verified',
    );
    expect(
      decideVerification({ matchScore: 0.99, threshold: 0.85, snrDb: Number.NaN }).result,
    ).toBe('inconclusive');
    expect(sigmoid(0)).toBe(0.5);
  });
});

describe('metrics', () => {
  it('EER, minDCF and rates on separable and overlapping scores', () => {
    expect(eer([2, 3, 4], [-1, 0, 1]).eer).toBe(0);
    const tar = [0.9, 0.8, 0.7, 0.4];
    const non = [0.1, 0.2, 0.5, 0.3];
    const e = eer(tar, non);
    expect(e.eer).toBeCloseTo(0.25, 5);
    expect(ratesAtThreshold(tar, non, 0.45)).toEqual({ frr: 0.25, far: 0.25 });
    expect(minDcf([2, 3], [0, 1]).minDcf).toBe(0);
    const r = rng(9);
    const t = Array.from({ length: 2000 }, () => 1 + (r() + r() + r() - 1.5));
    const n = Array.from({ length: 2000 }, () => r() + r() + r() - 1.5);
    const ee = eer(t, n).eer;
    expect(ee).toBeGreaterThan(0.05);
    expect(ee).toBeLessThan(0.25);
    const d = minDcf(t, n).minDcf;
    expect(d).toBeGreaterThan(ee);
    expect(d).toBeLessThanOrEqual(1);
  });
  it('FAR at 1% FRR', () => {
    const pos = Array.from({ length: 100 }, (_, i) => i);
    const r = farAtFrr(pos, [0.5, 50, 99.5, -3]);
    expect(r.threshold).toBe(1);
    expect(r.far).toBe(0.5);
  });
  it('Cllr: 1 bit for uninformative, ~0 for confident correct, > 1 for wrong', () => {
    expect(cllr([0, 0], [0, 0])).toBeCloseTo(1);
    expect(cllr([20], [-20])).toBeLessThan(1e-6);
    expect(cllr([-5], [5])).toBeGreaterThan(1);
  });
  it('fits a logistic calibration that reduces Cllr', () => {
    const r = rng(4);
    const t = Array.from({ length: 500 }, () => 0.6 + 0.15 * (r() - 0.5));
    const n = Array.from({ length: 1000 }, () => 0.2 + 0.3 * (r() - 0.5));
    const cal = fitLogisticCalibration(t, n);
    expect(cal.a).toBeGreaterThan(0);
    const llr = (x: number) => cal.a * x + cal.b;
    expect(cllr(t.map(llr), n.map(llr))).toBeLessThan(0.2);
  });
  it('fits the same calibration whatever the score scale (a PLDA log-likelihood ratio spans tens)', () => {
    const r = rng(5);
    const t = Array.from({ length: 500 }, () => r() + 0.3 * r());
    const n = Array.from({ length: 1000 }, () => r() - 0.6);
    const unit = fitLogisticCalibration(t, n);
    const wide = fitLogisticCalibration(
      t.map((x) => 60 * x - 20),
      n.map((x) => 60 * x - 20),
    );
    expect(Number.isFinite(wide.a) && wide.a > 0).toBe(true);
    expect(wide.a * 60).toBeCloseTo(unit.a, 4);
    expect(wide.b - 20 * wide.a).toBeCloseTo(unit.b, 4);
    expect(() => fitLogisticCalibration([0.5, Number.NaN], [0.1])).toThrow(RangeError);
  });
});

describe('VAD segmentation, spoof windows and quality', () => {
  it('segments probabilities with hysteresis, minimum durations and padding', () => {
    const probs = Float32Array.from([
      0,
      0,
      ...Array(8).fill(0.9),
      ...Array(6).fill(0.1),
      0.95,
      ...Array(6).fill(0.2),
    ]);
    const segs = speechSegments(probs, probs.length * 512);
    expect(segs).toHaveLength(1); // the single-chunk blip (32 ms) is shorter than 250 ms
    expect(segs[0]!.start).toBe(2 * 512 - 480);
    expect(segs[0]!.end).toBe(10 * 512 + 480);
    const x = Float32Array.from({ length: 100 }, (_, i) => i);
    expect(
      Array.from(
        concatSegments(x, [
          { start: 0, end: 2 },
          { start: 50, end: 52 },
        ]),
      ),
    ).toEqual([0, 1, 50, 51]);
    expect(
      speechSegments(Float32Array.from([0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]), 9 * 512),
    ).toEqual([{ start: 0, end: 9 * 512 }]);
  });
  it('slides 4 s spoof windows with a 2 s hop and repeat-pads short audio', () => {
    const short = Float32Array.from({ length: 16000 }, (_, i) => i);
    const [w] = spoofWindows(short);
    expect(w!.length).toBe(SPOOF_WINDOW);
    expect(w![16000]).toBe(0);
    expect(w![16001]).toBe(1);
    expect(spoofWindows(new Float32Array(64000))).toHaveLength(1);
    expect(spoofWindows(new Float32Array(10 * 16000))).toHaveLength(4); // 0, 2, 4, 6 s
    expect(spoofWindows(new Float32Array(11 * 16000))).toHaveLength(5); // + a window aligned to the end
    expect(spoofWindows(new Float32Array(0))).toHaveLength(0);
  });
  it('estimates SNR, clipping and a bounded quality score', () => {
    const r = rng(5);
    const x = new Float32Array(32000);
    for (let i = 0; i < x.length; i++)
      x[i] = (i >= 8000 && i < 24000 ? 0.3 * Math.sin(i / 5) : 0) + 0.003 * (r() - 0.5);
    const snr = estimateSnrDb(x, [{ start: 8000, end: 24000 }]);
    expect(snr).toBeGreaterThan(30);
    expect(snr).toBeLessThan(60);
    expect(silenceMessage(0)).toBe('the recording is silent (every sample is zero)');
    expect(silenceMessage(1e-4)).toBe('the recording is silent (peak -80.0 dBFS)');
    const s = signalStats(Float32Array.from([1, -1, 0.5, 0]));
    expect(s.clippingRatio).toBe(0.5);
    expect(s.peak).toBe(1);
    const hi = qualityScore({
      netSpeechSeconds: 12,
      snrDb: 40,
      clippingRatio: 0,
      consistency: 0.9,
    });
    const lo = qualityScore({
      netSpeechSeconds: 3,
      snrDb: 3,
      clippingRatio: 0.05,
      consistency: 0.1,
    });
    expect(hi).toBe(1);
    expect(lo).toBe(0);
    const mid = qualityScore({
      netSpeechSeconds: 6,
      snrDb: 20,
      clippingRatio: 0.001,
      consistency: null,
    });
    expect(mid).toBeGreaterThan(0);
    expect(mid).toBeLessThan(1);
  });
});
