import { LIMITS } from '../limits.js';
import type { SpeechSegment } from '../features/vad.js';

export interface SignalStats {
  peak: number;
  rmsDb: number;
  /** Fraction of samples at |x| >= LIMITS.clipLevel. */
  clippingRatio: number;
}

export function signalStats(samples: Float32Array): SignalStats {
  let peak = 0;
  let sq = 0;
  let clipped = 0;
  for (let i = 0; i < samples.length; i++) {
    const a = Math.abs(samples[i]!);
    if (a > peak) peak = a;
    sq += a * a;
    if (a >= LIMITS.clipLevel) clipped++;
  }
  const rms = Math.sqrt(sq / Math.max(1, samples.length));
  return {
    peak,
    rmsDb: 20 * Math.log10(rms + 1e-12),
    clippingRatio: clipped / Math.max(1, samples.length),
  };
}

/** What a `silent_audio` problem or error says: digital silence as such, otherwise the peak level. */
export function silenceMessage(peak: number): string {
  if (peak === 0) return 'the recording is silent (every sample is zero)';
  return `the recording is silent (peak ${(20 * Math.log10(peak)).toFixed(1)} dBFS)`;
}

/** What a `clipped_audio` problem or error says. */
export function clippingMessage(clippingRatio: number): string {
  return `${(clippingRatio * 100).toFixed(1)}% of the samples are clipped; record at a lower input level`;
}

const SNR_FRAME = 320; // 20 ms
const MAX_SNR_DB = 60;

/**
 * SNR estimate: mean power of VAD speech frames over the power of the quietest 20 ms frames outside
 * speech (their 20th percentile; the quietest 10% of all frames when there is no non-speech).
 */
export function estimateSnrDb(samples: Float32Array, segments: SpeechSegment[]): number {
  const frames = Math.floor(samples.length / SNR_FRAME);
  if (frames === 0) return 0;
  const inSpeech = new Uint8Array(frames);
  for (const s of segments)
    for (
      let f = Math.floor(s.start / SNR_FRAME);
      f < Math.min(frames, Math.ceil(s.end / SNR_FRAME));
      f++
    )
      inSpeech[f] = 1;
  const speech: number[] = [];
  const noise: number[] = [];
  const all: number[] = [];
  for (let f = 0; f < frames; f++) {
    let p = 0;
    for (let i = f * SNR_FRAME; i < (f + 1) * SNR_FRAME; i++) p += samples[i]! * samples[i]!;
    p /= SNR_FRAME;
    all.push(p);
    (inSpeech[f] ? speech : noise).push(p);
  }
  if (speech.length === 0) return 0;
  const speechPower = speech.reduce((a, b) => a + b, 0) / speech.length;
  const pool = noise.length >= 5 ? noise : all;
  pool.sort((a, b) => a - b);
  const noisePower =
    noise.length >= 5 ? pool[Math.floor(pool.length * 0.2)]! : pool[Math.floor(pool.length * 0.1)]!;
  if (noisePower <= 1e-12) return MAX_SNR_DB;
  return Math.max(-10, Math.min(MAX_SNR_DB, 10 * Math.log10(speechPower / noisePower)));
}

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

export interface QualityInputs {
  netSpeechSeconds: number;
  snrDb: number;
  clippingRatio: number;
  /** Cosine between embeddings of the two halves of the speech; null when not computed. */
  consistency: number | null;
}

/**
 * Enrolment quality in [0, 1]: weighted mean of
 * speech (0 at 3 s, 1 at 10 s of net speech) 0.35, SNR (0 at 5 dB, 1 at 30 dB) 0.25,
 * clipping (1 when none, 0 at 1% of samples) 0.15, consistency of the halves' embeddings
 * (0 at cosine 0.2, 1 at 0.8) 0.25.
 */
export function qualityScore(q: QualityInputs): number {
  const speech = clamp01((q.netSpeechSeconds - 3) / 7);
  const snr = clamp01((q.snrDb - 5) / 25);
  const clip = clamp01(1 - q.clippingRatio / 0.01);
  if (q.consistency === null) return (0.35 * speech + 0.25 * snr + 0.15 * clip) / 0.75;
  const consistency = clamp01((q.consistency - 0.2) / 0.6);
  return 0.35 * speech + 0.25 * snr + 0.15 * clip + 0.25 * consistency;
}
