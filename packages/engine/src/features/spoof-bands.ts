/**
 * The spoof models' spectral front-end (training/voxkey_train/spoof_model.py SpecFrontEnd), computed
 * here rather than in the graph, where a 514-channel DFT convolution cost as much as the whole network:
 * pre-emphasis 0.97 (the first sample kept), 512-sample periodic Hann frames every 10 ms without
 * padding, power spectrum, 64 triangular bands equally spaced on a linear 0-8 kHz axis, ln(e + 1e-8),
 * and each band's mean over the segment subtracted.
 */
import { FFT_SIZE, POWER_BINS, powerSpectrum, realFftBuffers } from './fft.js';

export const SPOOF_BANDS = 64;
const HOP = 160;
const PREEMPHASIS = 0.97;
const LOG_OFFSET = 1e-8;

const HANN = Float64Array.from(
  { length: FFT_SIZE },
  (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / FFT_SIZE),
);

interface Band {
  start: number;
  weights: Float64Array;
}

/** numpy's linspace(0, 8000, 257) bins against linspace(0, 8000, 66) band edges; float32 weights, as exported. */
function linearBands(): Band[] {
  const nyquist = 8000;
  const binFreq = (k: number) => (nyquist * k) / (POWER_BINS - 1);
  const edge = (m: number) => (nyquist * m) / (SPOOF_BANDS + 1);
  const bands: Band[] = [];
  for (let m = 0; m < SPOOF_BANDS; m++) {
    const [l, c, r] = [edge(m), edge(m + 1), edge(m + 2)];
    let first = -1;
    const full = new Float64Array(POWER_BINS);
    for (let k = 0; k < POWER_BINS; k++) {
      const f = binFreq(k);
      const w = Math.fround(Math.max(0, Math.min((f - l) / (c - l), (r - f) / (r - c))));
      full[k] = w;
      if (w > 0 && first < 0) first = k;
    }
    let last = first;
    for (let k = first; k < POWER_BINS; k++) if (full[k]! > 0) last = k;
    bands.push({ start: first, weights: full.slice(first, last + 1) });
  }
  return bands;
}

const BANDS = linearBands();

export function spoofFrames(samples: number): number {
  return samples < FFT_SIZE ? 0 : 1 + Math.floor((samples - FFT_SIZE) / HOP);
}

/**
 * Mean-normalised log band energies of one segment, band-major ([64, frames], the model's
 * [1, 64, T] input), written into `out` at `offset`.
 */
export function spoofBands(
  segment: Float32Array,
  out: Float32Array = new Float32Array(SPOOF_BANDS * spoofFrames(segment.length)),
  offset = 0,
): Float32Array {
  const frames = spoofFrames(segment.length);
  const frame = new Float64Array(FFT_SIZE);
  const fft = realFftBuffers();
  const mean = new Float64Array(SPOOF_BANDS);
  for (let t = 0; t < frames; t++) {
    const off = t * HOP;
    frame[0] =
      (off === 0 ? segment[0]! : segment[off]! - PREEMPHASIS * segment[off - 1]!) * HANN[0]!;
    for (let n = 1; n < FFT_SIZE; n++)
      frame[n] = (segment[off + n]! - PREEMPHASIS * segment[off + n - 1]!) * HANN[n]!;
    powerSpectrum(frame, fft);
    for (let b = 0; b < SPOOF_BANDS; b++) {
      const { start, weights } = BANDS[b]!;
      let e = 0;
      for (let k = 0; k < weights.length; k++) e += weights[k]! * fft.power[start + k]!;
      const v = Math.log(e + LOG_OFFSET);
      out[offset + b * frames + t] = v;
      mean[b]! += v;
    }
  }
  for (let b = 0; b < SPOOF_BANDS; b++) {
    const m = mean[b]! / frames;
    const row = offset + b * frames;
    for (let t = 0; t < frames; t++) out[row + t]! -= m;
  }
  return out;
}
