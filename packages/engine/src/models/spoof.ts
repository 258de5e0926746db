import * as ort from 'onnxruntime-node';
import { SPOOF_BANDS, spoofBands, spoofFrames } from '../features/spoof-bands.js';
import { sigmoid } from '../math.js';
import { EngineError } from '../errors.js';
import type { EncodedSpeech } from './speech-encoder.js';
import type { SpoofFusion } from './manifest.js';

export const SPOOF_WINDOW = 64000; // 4 s at 16 kHz
export const SPOOF_HOP = 32000; // 2 s
export const SPOOF_MAX_SEGMENT = 128000; // 8 s
const MAX_BATCH = 16;

/** What a spoof model takes: 4 s waveform windows, the engine's band features of whole segments, or the speech encoder's hidden states. */
export type SpoofInput = 'waveform' | 'spoof-lfb64-mn' | 'whisper-hidden-states';

export interface SpoofModelIo {
  inputName: string;
  outputName: string;
  input?: SpoofInput;
  /** whisper-hidden-states: how many of the encoder's hidden states it reads (the first ones); default all. */
  encoderStates?: number;
}

/** A recording shorter than 4 s, repeated until it fills 4 s. */
function repeatPadded(samples: Float32Array): Float32Array {
  const w = new Float32Array(SPOOF_WINDOW);
  for (let p = 0; p < SPOOF_WINDOW; p += samples.length)
    w.set(samples.subarray(0, Math.min(samples.length, SPOOF_WINDOW - p)), p);
  return w;
}

/**
 * 4 s windows with a 2 s hop over the whole recording (a last window is aligned to the end so the
 * tail is covered); a recording shorter than 4 s is repeat-padded to 4 s.
 */
export function spoofWindows(samples: Float32Array): Float32Array[] {
  if (samples.length === 0) return [];
  if (samples.length <= SPOOF_WINDOW) return [repeatPadded(samples)];
  const starts: number[] = [];
  for (let s = 0; s + SPOOF_WINDOW <= samples.length; s += SPOOF_HOP) starts.push(s);
  const lastStart = samples.length - SPOOF_WINDOW;
  if (starts.at(-1)! < lastStart && lastStart - starts.at(-1)! >= SPOOF_HOP / 4)
    starts.push(lastStart);
  return starts.map((s) => samples.subarray(s, s + SPOOF_WINDOW));
}

export interface SpoofScore {
  bonafideProbability: number;
  meanLogit: number;
  windows: number;
}

/**
 * For models that take band features of any length: the recording split into equal segments of 4-8 s
 * that do not overlap (a recording shorter than 4 s is repeat-padded to 4 s), so each sample is
 * analysed once; the models were trained on 4 s crops and score longer ones alike (docs/accuracy.md).
 */
export function spoofSegments(samples: Float32Array): Float32Array[] {
  if (samples.length === 0) return [];
  if (samples.length <= SPOOF_WINDOW) return [repeatPadded(samples)];
  const count = Math.ceil(samples.length / SPOOF_MAX_SEGMENT);
  const length = Math.floor(samples.length / count);
  return Array.from({ length: count }, (_, i) => samples.subarray(i * length, (i + 1) * length));
}

/** Mean of per-window (or per-segment) logits of P(bona fide), then sigmoid. */
export async function scoreSpoof(
  session: ort.InferenceSession,
  io: SpoofModelIo,
  samples: Float32Array,
  checkpoint?: () => void,
  encoded?: EncodedSpeech,
): Promise<SpoofScore> {
  if (io.input === 'spoof-lfb64-mn') return scoreSpoofFeatures(session, io, samples, checkpoint);
  if (io.input === 'whisper-hidden-states') return scoreSpoofEncoded(session, io, encoded);
  const windows = spoofWindows(samples);
  let sum = 0;
  for (let i = 0; i < windows.length; i += MAX_BATCH) {
    checkpoint?.();
    const batch = windows.slice(i, i + MAX_BATCH);
    const input = new Float32Array(batch.length * SPOOF_WINDOW);
    batch.forEach((w, k) => input.set(w, k * SPOOF_WINDOW));
    const out = await session.run({
      [io.inputName]: new ort.Tensor('float32', input, [batch.length, SPOOF_WINDOW]),
    });
    sum += finiteLogitSum(out[io.outputName]!.data as Float32Array, batch.length);
  }
  return spoofScore(sum, windows.length);
}

/** A non-finite logit (a degenerate window) counts as 0, i.e. undecided. */
function finiteLogitSum(logits: Float32Array, count: number): number {
  let sum = 0;
  for (let k = 0; k < count; k++) sum += Number.isFinite(logits[k]!) ? logits[k]! : 0;
  return sum;
}

function spoofScore(logitSum: number, windows: number): SpoofScore {
  const meanLogit = windows ? logitSum / windows : 0;
  return { bonafideProbability: sigmoid(meanLogit), meanLogit, windows };
}

async function scoreSpoofFeatures(
  session: ort.InferenceSession,
  io: SpoofModelIo,
  samples: Float32Array,
  checkpoint?: () => void,
): Promise<SpoofScore> {
  const segments = spoofSegments(samples);
  if (segments.length === 0) return spoofScore(0, 0);
  checkpoint?.();
  // Equal lengths, so one batch.
  const frames = spoofFrames(segments[0]!.length);
  const size = SPOOF_BANDS * frames;
  const input = new Float32Array(segments.length * size);
  segments.forEach((segment, k) => spoofBands(segment, input, k * size));
  checkpoint?.();
  const out = await session.run({
    [io.inputName]: new ort.Tensor('float32', input, [segments.length, 1, SPOOF_BANDS, frames]),
  });
  return spoofScore(
    finiteLogitSum(out[io.outputName]!.data as Float32Array, segments.length),
    segments.length,
  );
}

/** One logit for the whole recording from the encoder's hidden states (the head pools over time itself). */
async function scoreSpoofEncoded(
  session: ort.InferenceSession,
  io: SpoofModelIo,
  encoded: EncodedSpeech | undefined,
): Promise<SpoofScore> {
  if (!encoded)
    throw new EngineError(
      'model_invalid',
      'this spoof model reads the speech encoder, which is not loaded',
    );
  if (encoded.frames === 0) return spoofScore(0, 0);
  // [layers, frames, dim]: the first states are a prefix of the array (a whole encoder run has more)
  const states = Math.min(io.encoderStates ?? encoded.layers, encoded.layers);
  const input = new ort.Tensor(
    'float32',
    encoded.hiddenStates.subarray(0, states * encoded.frames * encoded.dim),
    [1, states, encoded.frames, encoded.dim],
  );
  const out = await session.run({ [io.inputName]: input });
  return spoofScore(finiteLogitSum(out[io.outputName]!.data as Float32Array, 1), 1);
}

/**
 * The fused score: each logit standardised, `weight` on the partner's, back on the own model's scale.
 * A recording the own model could not score (no windows) stays undecided.
 */
export function fuseSpoofScores(own: SpoofScore, partner: SpoofScore, f: SpoofFusion): SpoofScore {
  if (own.windows === 0) return own;
  const z =
    ((1 - f.with.weight) * (own.meanLogit - f.centre)) / f.spread +
    (f.with.weight * (partner.meanLogit - f.with.centre)) / f.with.spread;
  const meanLogit = f.centre + f.spread * z;
  return { bonafideProbability: sigmoid(meanLogit), meanLogit, windows: own.windows };
}

/** A fused spoof model's second model, which reads the audio itself, and how its score joins the first's. */
export interface SpoofPartner {
  session: ort.InferenceSession;
  io: SpoofModelIo;
  fusion: SpoofFusion;
}

/** A recording's spoof score: the model's own, fused with its partner's when the model has one. */
export async function scoreRecordingSpoof(
  session: ort.InferenceSession,
  io: SpoofModelIo,
  samples: Float32Array,
  checkpoint?: () => void,
  encoded?: EncodedSpeech,
  partner?: SpoofPartner,
): Promise<SpoofScore> {
  const own = await scoreSpoof(session, io, samples, checkpoint, encoded);
  // the fusion keeps a recording the own model could not score undecided: no need for the partner's score
  if (!partner || own.windows === 0) return own;
  const other = await scoreSpoof(partner.session, partner.io, samples, checkpoint);
  return fuseSpoofScores(own, other, partner.fusion);
}
