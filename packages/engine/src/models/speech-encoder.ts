import * as ort from 'onnxruntime-node';
import { WHISPER_CHUNK_FRAMES, WHISPER_MEL_BINS, whisperLogMel } from '../features/whisper-mel.js';
import type { EncoderOutput } from './speech-decoder.js';

/** What the speech encoder (Whisper's) made of one recording: every layer's hidden states, computed once per recording. */
export interface EncodedSpeech {
  /** [layers, frames, dim] row-major */
  hiddenStates: Float32Array;
  layers: number;
  frames: number;
  dim: number;
  /** The final output (after the last layer norm) of the first 30 s chunk, when asked for: the text decoder reads it. */
  final?: EncoderOutput;
}

export interface EncodeOptions {
  /**
   * Append silence up to this many samples before the log-mel (the decoder ends its text only when it sees
   * silence after the speech: training/results/phrase-check.md); `hiddenStates` then covers the recording's
   * own frames only.
   */
  padToSamples?: number;
  /** Also return the final output for the decoder. */
  final?: boolean;
}

/** Encoder frames of a recording of n samples: log-mel frames floor(n / 160), halved by the stride-2 convolution. */
export function encoderFrames(samples: number): number {
  return Math.ceil(Math.floor(samples / 160) / 2);
}

/**
 * Whisper's log-mel of the whole recording, then the encoder on each 30 s chunk at its own length (never
 * padded to 30 s; training/voxkey_train/whisper.py feeds it the same way), the chunks' frames concatenated.
 */
export async function encodeSpeech(
  session: ort.InferenceSession,
  samples: Float32Array,
  checkpoint?: () => void,
  options: EncodeOptions = {},
): Promise<EncodedSpeech> {
  const padded =
    options.padToSamples && samples.length < options.padToSamples
      ? padWithSilence(samples, options.padToSamples)
      : samples;
  const mel = await whisperLogMel(padded);
  const outputs = options.final ? ['hidden_states', 'encoder_out'] : ['hidden_states'];
  const parts: { data: Float32Array; layers: number; frames: number; dim: number }[] = [];
  let final: EncoderOutput | undefined;
  for (let start = 0; start < Math.max(mel.frames, 1); start += WHISPER_CHUNK_FRAMES) {
    checkpoint?.();
    const frames = Math.max(2, Math.min(WHISPER_CHUNK_FRAMES, mel.frames - start));
    const chunk = new Float32Array(WHISPER_MEL_BINS * frames);
    for (let b = 0; b < WHISPER_MEL_BINS; b++) {
      const available = Math.max(0, Math.min(frames, mel.frames - start));
      chunk.set(
        mel.data.subarray(b * mel.frames + start, b * mel.frames + start + available),
        b * frames,
      );
    }
    const out = await session.run(
      { mel: new ort.Tensor('float32', chunk, [1, WHISPER_MEL_BINS, frames]) },
      outputs,
    );
    const hidden = out.hidden_states!;
    const [, layers, encoded, dim] = hidden.dims as number[];
    parts.push({ data: hidden.data as Float32Array, layers: layers!, frames: encoded!, dim: dim! });
    if (options.final && !final) {
      const [, finalFrames, finalDim] = out.encoder_out!.dims as number[];
      final = {
        data: out.encoder_out!.data as Float32Array,
        frames: finalFrames!,
        dim: finalDim!,
      };
    }
  }
  const all = concatFrames(parts);
  const own = padded === samples ? all : firstFrames(all, encoderFrames(samples.length));
  return final ? { ...own, final } : own;
}

function padWithSilence(samples: Float32Array, length: number): Float32Array {
  const out = new Float32Array(length);
  out.set(samples);
  return out;
}

function concatFrames(
  parts: { data: Float32Array; layers: number; frames: number; dim: number }[],
): EncodedSpeech {
  if (parts.length === 1) {
    const [p] = parts;
    return { hiddenStates: p!.data, layers: p!.layers, frames: p!.frames, dim: p!.dim };
  }
  const { layers, dim } = parts[0]!;
  const frames = parts.reduce((n, p) => n + p.frames, 0);
  const hiddenStates = new Float32Array(layers * frames * dim);
  for (let l = 0; l < layers; l++) {
    let offset = l * frames * dim;
    for (const p of parts) {
      hiddenStates.set(p.data.subarray(l * p.frames * dim, (l + 1) * p.frames * dim), offset);
      offset += p.frames * dim;
    }
  }
  return { hiddenStates, layers, frames, dim };
}

/** The first `frames` frames of every layer. */
function firstFrames(encoded: EncodedSpeech, frames: number): EncodedSpeech {
  const keep = Math.max(1, Math.min(frames, encoded.frames));
  if (keep === encoded.frames) return encoded;
  const { layers, dim } = encoded;
  const hiddenStates = new Float32Array(layers * keep * dim);
  for (let l = 0; l < layers; l++)
    hiddenStates.set(
      encoded.hiddenStates.subarray(l * encoded.frames * dim, (l * encoded.frames + keep) * dim),
      l * keep * dim,
    );
  return { hiddenStates, layers, frames: keep, dim };
}
