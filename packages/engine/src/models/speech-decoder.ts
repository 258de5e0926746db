import * as ort from 'onnxruntime-node';
import type { DecodingConfig } from './manifest.js';

/** Whisper's text decoder as two graphs: the cross-attention keys/values once per recording, then one step a token. */
export interface SpeechDecoderSessions {
  crossKv: ort.InferenceSession;
  step: ort.InferenceSession;
  decoding: DecodingConfig;
}

/** The encoder's final output for one recording: [frames, dim] row-major. */
export interface EncoderOutput {
  data: Float32Array;
  frames: number;
  dim: number;
}

export interface DecodeOptions {
  /** Stop after this many generated tokens even without end-of-text (a repetition loop). */
  maxNewTokens: number;
  /** 1 per token the decoder may generate (e.g. digit tokens); end-of-text is always allowed after the first token. */
  allowed?: Uint8Array;
}

function mask(ids: readonly number[], size: number): Uint8Array {
  const m = new Uint8Array(size);
  for (const id of ids) if (id < size) m[id] = 1;
  return m;
}

/**
 * Greedy decoding, timestamps off (training/voxkey_train/whisper_decoder.py greedy_decode): at each step the
 * highest logit among the tokens not suppressed (and allowed), until end-of-text or `maxNewTokens`.
 * Returns the generated ids without the prompt and the end-of-text.
 */
export async function decodeTokens(
  decoder: SpeechDecoderSessions,
  encoded: EncoderOutput,
  options: DecodeOptions,
  checkpoint?: () => void,
): Promise<number[]> {
  const { decoding } = decoder;
  const crossOut = await decoder.crossKv.run({
    encoder_out: new ort.Tensor('float32', encoded.data, [1, encoded.frames, encoded.dim]),
  });
  const crossKv = crossOut.cross_kv!;
  const [layers, pair, , , dim] = crossKv.dims as number[];
  let pastKv: ort.Tensor = new ort.Tensor('float32', new Float32Array(0), [
    layers!,
    pair!,
    1,
    0,
    dim!,
  ]);
  let tokens = new ort.Tensor('int64', BigInt64Array.from(decoding.prompt, BigInt), [
    1,
    decoding.prompt.length,
  ]);
  const generated: number[] = [];
  let suppressed: Uint8Array | undefined;
  let suppressedFirst: Uint8Array | undefined;
  while (generated.length < options.maxNewTokens) {
    checkpoint?.();
    const out = await decoder.step.run({ tokens, past_kv: pastKv, cross_kv: crossKv });
    const logits = out.logits!.data as Float32Array;
    const vocabularySize = logits.length;
    suppressed ??= mask(decoding.suppressIds, vocabularySize);
    suppressedFirst ??= mask(decoding.suppressIdsBegin, vocabularySize);
    const first = generated.length === 0;
    let best = -1;
    let bestLogit = -Infinity;
    for (let id = 0; id < vocabularySize; id++) {
      if (suppressed[id] || (first && suppressedFirst[id])) continue;
      const isEnd = id === decoding.endOfText;
      if (options.allowed && !options.allowed[id] && !(isEnd && !first)) continue;
      if (logits[id]! > bestLogit) {
        bestLogit = logits[id]!;
        best = id;
      }
    }
    if (best < 0 || best === decoding.endOfText) break;
    generated.push(best);
    tokens = new ort.Tensor('int64', BigInt64Array.of(BigInt(best)), [1, 1]);
    pastKv = out.present_kv!;
  }
  return generated;
}
