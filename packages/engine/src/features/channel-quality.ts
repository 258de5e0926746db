import { FFT_SIZE, POWER_BINS } from './fft.js';
import { powerOf, realTransform } from './kiss-fft.js';
import type { SpeechSegment } from './vad.js';

/**
 * What the channel did to a recording, measured from its speech (VAD segments) and its pauses:
 * the cues that tell a codec, a telephone line, a room or noise apart (docs/accuracy.md, "Channels").
 */
export interface ChannelQuality {
  /** Highest frequency the speech reaches above the noise floor (Hz): about 8000 wideband, 3400-4000 telephone. */
  bandwidthHz: number;
  /** Share of speech time-frequency cells inside the band more than 30 dB below their frame's median (codec holes). */
  spectralHoleRatio: number;
  /** Steepest energy decay of the speech (dB/s, 5th percentile of 48 ms slopes): lower in a reverberant room. */
  decayRateDbPerS: number;
}

const SR = 16000;
const HOP = 128; // 8 ms
const BIN_HZ = SR / FFT_SIZE;
const IN_BAND_BELOW_REF_DB = 40;
const IN_BAND_ABOVE_NOISE_DB = 6;
const EDGE_BINS = 8; // 250 Hz
const HOLE_DB = 30;
const SLOPE_FRAMES = 6;
const DECAY_ACTIVE_DB = 35;
const DECAY_LOW_HZ = 500;
const DECAY_HIGH_HZ = 4000;

const hann = Float64Array.from(
  { length: FFT_SIZE },
  (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / FFT_SIZE),
);
const db = (p: number) => 10 * Math.log10(p + 1e-12);

function percentile(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * sorted.length)))]!;
}

/** The spectra come from KISS FFT in float32: 17% cheaper than fft.js's float64, the same measures to 5e-5 (docs/benchmarks.md). */
export async function measureChannelQuality(
  samples: Float32Array,
  segments: SpeechSegment[],
): Promise<ChannelQuality> {
  const frames = samples.length >= FFT_SIZE ? Math.floor((samples.length - FFT_SIZE) / HOP) + 1 : 0;
  if (frames < SLOPE_FRAMES + 1)
    return { bandwidthHz: 0, spectralHoleRatio: 0, decayRateDbPerS: 0 };
  const inSpeech = new Uint8Array(frames);
  for (const s of segments) {
    for (
      let f = Math.max(0, Math.ceil((s.start - FFT_SIZE / 2) / HOP));
      f < frames && f * HOP + FFT_SIZE / 2 <= s.end;
      f++
    )
      inSpeech[f] = 1;
  }
  const transform = await realTransform(FFT_SIZE);
  const { input, output } = transform.views();
  const power = new Float64Array(POWER_BINS);
  let speechFrameCount = 0;
  for (let f = 0; f < frames; f++) speechFrameCount += inSpeech[f]!;
  // The speech frames' spectra are kept for the hole pass: at most 60 s of audio, 15 MB.
  const speechSpectra = new Float64Array(speechFrameCount * POWER_BINS);
  const speechLtas = new Float64Array(POWER_BINS);
  const pauseLtas = new Float64Array(POWER_BINS);
  let pauses = 0;
  let speech = 0;
  const decayLow = Math.ceil(DECAY_LOW_HZ / BIN_HZ);
  const decayHigh = Math.floor(DECAY_HIGH_HZ / BIN_HZ);
  const bandEnergyDb = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    const start = f * HOP;
    for (let i = 0; i < FFT_SIZE; i++) input[i] = samples[start + i]! * hann[i]!;
    transform.run();
    powerOf(output, power);
    let e = 0;
    for (let k = decayLow; k <= decayHigh; k++) e += power[k]!;
    bandEnergyDb[f] = db(e);
    if (inSpeech[f]) {
      speechSpectra.set(power, speech++ * POWER_BINS);
      for (let k = 0; k < POWER_BINS; k++) speechLtas[k]! += power[k]!;
    } else {
      pauses++;
      for (let k = 0; k < POWER_BINS; k++) pauseLtas[k]! += power[k]!;
    }
  }
  if (speech === 0)
    return { bandwidthHz: 0, spectralHoleRatio: 0, decayRateDbPerS: decayRate(bandEnergyDb) };
  const speechDb = Array.from(speechLtas, (p) => db(p / speech));
  // Too few pauses to know the floor: the speech level alone decides.
  const floorDb = pauses >= 5 ? Array.from(pauseLtas, (p) => db(p / pauses)) : null;
  const refDb = percentile(
    speechDb.slice(Math.round(300 / BIN_HZ), Math.round(3000 / BIN_HZ) + 1).sort((x, y) => x - y),
    0.5,
  );
  const inBand = speechDb.map(
    (l, k) =>
      l > refDb - IN_BAND_BELOW_REF_DB && (!floorDb || l > floorDb[k]! + IN_BAND_ABOVE_NOISE_DB),
  );
  let top = 0;
  for (let k = POWER_BINS - 1; k >= EDGE_BINS - 1 && !top; k--) {
    let count = 0;
    for (let j = k - EDGE_BINS + 1; j <= k; j++) count += inBand[j] ? 1 : 0;
    if (count >= 0.75 * EDGE_BINS) top = k;
  }
  const bandwidthHz = top * BIN_HZ;
  const holes = holeRatio(
    speechSpectra,
    Math.round(300 / BIN_HZ),
    Math.max(top, Math.round(1000 / BIN_HZ)),
  );
  return { bandwidthHz, spectralHoleRatio: holes, decayRateDbPerS: decayRate(bandEnergyDb) };
}

/**
 * `spectra`: the speech frames' power spectra, POWER_BINS values each, one after the other. A cell is a hole
 * when its level is more than HOLE_DB below its frame's median level in [low, high]; compared as powers
 * (the dB scale is monotonic), with the median found by selection, not a sort.
 */
function holeRatio(spectra: Float64Array, low: number, high: number): number {
  let holes = 0;
  let cells = 0;
  const width = high - low + 1;
  const scratch = new Float64Array(width);
  const holeFactor = 10 ** (-HOLE_DB / 10);
  for (let at = 0; at < spectra.length; at += POWER_BINS) {
    const cell = spectra.subarray(at + low, at + high + 1);
    scratch.set(cell);
    const median = selectKth(scratch, Math.floor(width / 2));
    const below = (median + 1e-12) * holeFactor - 1e-12;
    for (let k = 0; k < width; k++) if (cell[k]! < below) holes++;
    cells += width;
  }
  return cells ? holes / cells : 0;
}

/** The k-th smallest value of `xs` (0-based; reorders `xs`): Hoare's selection. */
function selectKth(xs: Float64Array, k: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const pivot = xs[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (xs[i]! < pivot) i++;
      while (xs[j]! > pivot) j--;
      if (i <= j) {
        const t = xs[i]!;
        xs[i++] = xs[j]!;
        xs[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return xs[k]!;
  }
  return xs[k]!;
}

/** Minus the 5th percentile of least-squares slopes of the 500-4000 Hz energy over 6 frames, where it is within 35 dB of its peak. */
function decayRate(energyDb: Float64Array): number {
  let peak = -Infinity;
  for (const e of energyDb) peak = Math.max(peak, e);
  const t = Array.from(
    { length: SLOPE_FRAMES },
    (_, i) => ((i - (SLOPE_FRAMES - 1) / 2) * HOP) / SR,
  );
  const tt = t.reduce((a, v) => a + v * v, 0);
  const slopes: number[] = [];
  for (let f = 0; f + SLOPE_FRAMES <= energyDb.length; f++) {
    if (energyDb[f]! < peak - DECAY_ACTIVE_DB) continue;
    let mean = 0;
    for (let i = 0; i < SLOPE_FRAMES; i++) mean += energyDb[f + i]!;
    mean /= SLOPE_FRAMES;
    let s = 0;
    for (let i = 0; i < SLOPE_FRAMES; i++) s += (energyDb[f + i]! - mean) * t[i]!;
    slopes.push(s / tt);
  }
  if (slopes.length < 20) return 0;
  return -percentile(
    slopes.sort((x, y) => x - y),
    0.05,
  );
}
