/**
 * 80-bin log-mel filterbank, numerically matching `torchaudio.compliance.kaldi.fbank`
 * (Kaldi `compute-fbank-feats`) with: 25 ms povey window, 10 ms shift, snip_edges, dither 0,
 * DC removal, pre-emphasis 0.97, 512-point FFT power spectrum, mel bins 20 Hz - Nyquist,
 * log with a float32-epsilon floor, no energy term; input in [-1, 1] is scaled by `inputScale`
 * (32768, int16 scale, by default; 1 for models trained on torchaudio's [-1, 1] waveforms, where the
 * floor is reached in quiet and band-limited bins, so the scale is part of the model's contract).
 */
export const FBANK_BINS = 80;
export const FRAME_LENGTH = 400; // 25 ms at 16 kHz
export const FRAME_SHIFT = 160; // 10 ms
const PREEMPHASIS = 0.97;
const LOW_FREQ = 20;
const SAMPLE_RATE = 16000;
export const INT16_INPUT_SCALE = 32768;
const LOG_FLOOR = 1.1920928955078125e-7; // torch.finfo(torch.float).eps

import { FFT_SIZE, powerSpectrum, realFftBuffers } from './fft.js';

const melScale = (f: number) => 1127 * Math.log(1 + f / 700);

function poveyWindow(n: number): Float64Array {
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++)
    w[i] = Math.pow(0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)), 0.85);
  return w;
}

interface MelBin {
  start: number;
  weights: Float64Array;
}

/**
 * Triangular mel filters. torchaudio builds them in float32, and the low bins' weights at the
 * triangle edges are sensitive to that rounding (a loud harmonic under a tiny weight), so the
 * same float32 steps are replayed here with Math.fround.
 */
function melBanks(): MelBin[] {
  const f = Math.fround;
  const fftBins = FFT_SIZE / 2;
  const binWidth = SAMPLE_RATE / FFT_SIZE;
  const melLow = melScale(LOW_FREQ);
  const melHigh = melScale(SAMPLE_RATE / 2);
  const delta = (melHigh - melLow) / (FBANK_BINS + 1);
  const melOfBin = new Float64Array(fftBins);
  for (let i = 0; i < fftBins; i++)
    melOfBin[i] = f(1127 * f(Math.log(f(1 + f(f(binWidth * i) / 700)))));
  const banks: MelBin[] = [];
  for (let b = 0; b < FBANK_BINS; b++) {
    const left = f(f(b * f(delta)) + f(melLow));
    const center = f(f((b + 1) * f(delta)) + f(melLow));
    const right = f(f((b + 2) * f(delta)) + f(melLow));
    const full = new Float64Array(fftBins);
    let first = -1;
    let last = -1;
    for (let i = 0; i < fftBins; i++) {
      const mel = melOfBin[i]!;
      const up = f(f(mel - left) / f(center - left));
      const down = f(f(right - mel) / f(right - center));
      const w = Math.max(0, Math.min(up, down));
      full[i] = w;
      if (w > 0) {
        if (first < 0) first = i;
        last = i;
      }
    }
    banks.push({ start: Math.max(first, 0), weights: full.slice(Math.max(first, 0), last + 1) });
  }
  return banks;
}

const WINDOW = poveyWindow(FRAME_LENGTH);
const BANKS = melBanks();

export function numFrames(samples: number): number {
  return samples < FRAME_LENGTH ? 0 : 1 + Math.floor((samples - FRAME_LENGTH) / FRAME_SHIFT);
}

/** Raw Kaldi fbank: row-major [frames, 80]. */
export function fbank(
  samples: Float32Array,
  inputScale = INT16_INPUT_SCALE,
): { data: Float32Array; frames: number } {
  const frames = numFrames(samples.length);
  const out = new Float32Array(frames * FBANK_BINS);
  const frame = new Float64Array(FRAME_LENGTH);
  const padded = new Float64Array(FFT_SIZE);
  const fft = realFftBuffers();
  for (let f = 0; f < frames; f++) {
    const off = f * FRAME_SHIFT;
    let mean = 0;
    for (let i = 0; i < FRAME_LENGTH; i++) {
      const v = samples[off + i]! * inputScale;
      frame[i] = v;
      mean += v;
    }
    mean /= FRAME_LENGTH;
    for (let i = 0; i < FRAME_LENGTH; i++) frame[i]! -= mean;
    for (let i = FRAME_LENGTH - 1; i > 0; i--)
      padded[i] = (frame[i]! - PREEMPHASIS * frame[i - 1]!) * WINDOW[i]!;
    padded[0] = (frame[0]! - PREEMPHASIS * frame[0]!) * WINDOW[0]!;
    powerSpectrum(padded, fft); // padded[400..511] stay zero
    const row = f * FBANK_BINS;
    for (let b = 0; b < FBANK_BINS; b++) {
      const { start, weights } = BANKS[b]!;
      let e = 0;
      for (let k = 0; k < weights.length; k++) e += weights[k]! * fft.power[start + k]!;
      out[row + b] = Math.log(Math.max(e, LOG_FLOOR));
    }
  }
  return { data: out, frames };
}

/** Per-utterance mean normalisation (in place). */
export function applyCmn(data: Float32Array, frames: number, bins = FBANK_BINS): Float32Array {
  if (frames === 0) return data;
  const mean = new Float64Array(bins);
  for (let f = 0; f < frames; f++) for (let b = 0; b < bins; b++) mean[b]! += data[f * bins + b]!;
  for (let b = 0; b < bins; b++) mean[b]! /= frames;
  for (let f = 0; f < frames; f++) for (let b = 0; b < bins; b++) data[f * bins + b]! -= mean[b]!;
  return data;
}

/** Fbank + CMN: the speaker models' input features. */
export function fbankCmn(
  samples: Float32Array,
  inputScale = INT16_INPUT_SCALE,
): { data: Float32Array; frames: number } {
  const r = fbank(samples, inputScale);
  applyCmn(r.data, r.frames);
  return r;
}
