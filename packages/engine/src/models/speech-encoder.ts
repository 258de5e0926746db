import * as ort from 'onnxruntime-node';
import { WHISPER_CHUNK_FRAMES, WHISPER_MEL_BINS, whisperLogMel } from '../features/whisper-mel.js';

/** What the speech encoder (Whisper's) made of one recording: every layer's hidden states, computed once per recording. */
export interface EncodedSpeech {
  /** [layers, frames, dim] row-major */
  hiddenStates: Float32Array;
  layers: number;
  frames: number;
  dim: number;
}

/**
 * Whisper's log-mel of the whole recording, then the encoder on each 30 s chunk at its own length (never
 * padded to 30 s; training/voxkey_train/whisper.py feeds it the same way), the chunks' frames concatenated.
 */
export async function encodeSpeech(
  session: ort.InferenceSession,
  samples: Float32Array,
  checkpoint?: () => void,
): Promise<EncodedSpeech> {
  const mel = await whisperLogMel(samples);
  const parts: { data: Float32Array; layers: number; frames: number; dim: number }[] = [];
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
      ['hidden_states'],
    );
    const hidden = out.hidden_states!;
    const [, layers, encoded, dim] = hidden.dims as number[];
    parts.push({ data: hidden.data as Float32Array, layers: layers!, frames: encoded!, dim: dim! });
  }
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
