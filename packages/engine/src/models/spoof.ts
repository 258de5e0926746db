import * as ort from 'onnxruntime-node';
import { sigmoid } from '../scoring/scoring.js';

export const SPOOF_WINDOW = 64000; // 4 s at 16 kHz
export const SPOOF_HOP = 32000; // 2 s
const MAX_BATCH = 16;

export interface SpoofModelIo {
  inputName: string;
  outputName: string;
}

/**
 * 4 s windows with a 2 s hop over the whole recording (a last window is aligned to the end so the
 * tail is covered); a recording shorter than 4 s is repeat-padded to 4 s.
 */
export function spoofWindows(samples: Float32Array): Float32Array[] {
  if (samples.length === 0) return [];
  if (samples.length <= SPOOF_WINDOW) {
    const w = new Float32Array(SPOOF_WINDOW);
    for (let p = 0; p < SPOOF_WINDOW; p += samples.length) w.set(samples.subarray(0, Math.min(samples.length, SPOOF_WINDOW - p)), p);
    return [w];
  }
  const starts: number[] = [];
  for (let s = 0; s + SPOOF_WINDOW <= samples.length; s += SPOOF_HOP) starts.push(s);
  const lastStart = samples.length - SPOOF_WINDOW;
  if (starts.at(-1)! < lastStart && lastStart - starts.at(-1)! >= SPOOF_HOP / 4) starts.push(lastStart);
  return starts.map((s) => samples.subarray(s, s + SPOOF_WINDOW));
}

export interface SpoofScore {
  bonafideProbability: number;
  meanLogit: number;
  windows: number;
}

/** Mean of per-window logits of P(bona fide), then sigmoid. */
export async function scoreSpoof(session: ort.InferenceSession, io: SpoofModelIo, samples: Float32Array, checkpoint?: () => void): Promise<SpoofScore> {
  const windows = spoofWindows(samples);
  let sum = 0;
  for (let i = 0; i < windows.length; i += MAX_BATCH) {
    checkpoint?.();
    const batch = windows.slice(i, i + MAX_BATCH);
    const input = new Float32Array(batch.length * SPOOF_WINDOW);
    batch.forEach((w, k) => input.set(w, k * SPOOF_WINDOW));
    const out = await session.run({ [io.inputName]: new ort.Tensor('float32', input, [batch.length, SPOOF_WINDOW]) });
    const logits = out[io.outputName]!.data as Float32Array;
    for (let k = 0; k < batch.length; k++) sum += Number.isFinite(logits[k]!) ? logits[k]! : 0;
  }
  const meanLogit = windows.length ? sum / windows.length : 0;
  return { bonafideProbability: sigmoid(meanLogit), meanLogit, windows: windows.length };
}
