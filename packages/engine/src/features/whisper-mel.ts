import { powerOf, realTransform } from './kiss-fft.js';

/**
 * Whisper's log-mel front-end (whisper.audio.log_mel_spectrogram): 25 ms periodic-Hann frames every 10 ms
 * of a centred, reflect-padded 16 kHz signal in [-1, 1], |400-point DFT|^2, 80 Slaney mel bands to 8 kHz,
 * log10 floored at 1e-10 and at 8 decades below the recording's peak, then (x + 4) / 4. The last frame
 * is dropped, as Whisper does, so a recording of n samples gives floor(n / 160) frames.
 * The 400-point transform is not a power of two, hence KISS FFT (mixed radix) rather than fft.js.
 */
export const WHISPER_MEL_BINS = 80;
export const WHISPER_N_FFT = 400;
export const WHISPER_HOP = 160;
/** 30 s of frames: the longest input Whisper's encoder takes at once. */
export const WHISPER_CHUNK_FRAMES = 3000;
const SAMPLE_RATE = 16000;
const POWER_BINS = WHISPER_N_FFT / 2 + 1;
const LOG_FLOOR = 1e-10;
const DYNAMIC_RANGE = 8;

export interface WhisperMel {
  /** [80, frames] row-major: band b's frame t at b * frames + t */
  data: Float32Array;
  frames: number;
}

const hannWindow = (() => {
  const w = new Float64Array(WHISPER_N_FFT);
  for (let n = 0; n < WHISPER_N_FFT; n++)
    w[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / WHISPER_N_FFT);
  return w;
})();

interface MelBand {
  first: number;
  weights: Float64Array;
}

/** librosa.filters.mel(sr=16000, n_fft=400, n_mels=80) (Slaney scale and area normalisation), as float32 weights. */
const melBands: MelBand[] = (() => {
  const logStep = Math.log(6.4) / 27;
  const hzToMel = (f: number) => (f >= 1000 ? 15 + Math.log(f / 1000) / logStep : f / (200 / 3));
  const melToHz = (m: number) => (m >= 15 ? 1000 * Math.exp(logStep * (m - 15)) : (m * 200) / 3);
  const top = hzToMel(SAMPLE_RATE / 2);
  const edges = Array.from({ length: WHISPER_MEL_BINS + 2 }, (_, i) =>
    melToHz((top * i) / (WHISPER_MEL_BINS + 1)),
  );
  return Array.from({ length: WHISPER_MEL_BINS }, (_, b) => {
    const [lo, mid, hi] = [edges[b]!, edges[b + 1]!, edges[b + 2]!];
    const norm = 2 / (hi - lo);
    const weights: number[] = [];
    let first = -1;
    for (let k = 0; k < POWER_BINS; k++) {
      const f = (k * SAMPLE_RATE) / WHISPER_N_FFT;
      const w = Math.max(0, Math.min((f - lo) / (mid - lo), (hi - f) / (hi - mid)));
      if (w > 0) {
        if (first < 0) first = k;
        weights[k - first] = Math.fround(w * norm);
      } else if (first >= 0) {
        break;
      }
    }
    return { first: Math.max(first, 0), weights: Float64Array.from(weights, (w) => w ?? 0) };
  });
})();

/** numpy's 'reflect' padding index (the edge sample not repeated), for any offset. */
function reflectIndex(i: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * (n - 1);
  const m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

export async function whisperLogMel(samples: Float32Array): Promise<WhisperMel> {
  const transform = await realTransform(WHISPER_N_FFT);
  const { input, output } = transform.views();
  const n = samples.length;
  const frames = Math.floor(n / WHISPER_HOP);
  const data = new Float32Array(WHISPER_MEL_BINS * frames);
  const logMel = new Float64Array(WHISPER_MEL_BINS * frames);
  const power = new Float64Array(POWER_BINS);
  const half = WHISPER_N_FFT / 2;
  let peak = -Infinity;
  for (let t = 0; t < frames; t++) {
    const start = t * WHISPER_HOP - half;
    if (start >= 0 && start + WHISPER_N_FFT <= n) {
      for (let j = 0; j < WHISPER_N_FFT; j++) input[j] = samples[start + j]! * hannWindow[j]!;
    } else {
      for (let j = 0; j < WHISPER_N_FFT; j++) {
        const at = start + j;
        input[j] =
          (at >= 0 && at < n ? samples[at]! : samples[reflectIndex(at, n)]!) * hannWindow[j]!;
      }
    }
    transform.run();
    powerOf(output, power);
    for (let b = 0; b < WHISPER_MEL_BINS; b++) {
      const { first, weights } = melBands[b]!;
      let sum = 0;
      for (let j = 0; j < weights.length; j++) sum += weights[j]! * power[first + j]!;
      const value = Math.log10(Math.max(sum, LOG_FLOOR));
      logMel[b * frames + t] = value;
      if (value > peak) peak = value;
    }
  }
  const floor = peak - DYNAMIC_RANGE;
  for (let i = 0; i < logMel.length; i++) data[i] = (Math.max(logMel[i]!, floor) + 4) / 4;
  return { data, frames };
}
