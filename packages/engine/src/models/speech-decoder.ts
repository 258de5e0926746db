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
  /**
   * Ordinary token ids of the text the recording is expected to say, given to the decoder as preceding
   * text (Whisper's `<|startofprev|>` prompt), so that an accent or a rare word is read as the words asked
   * for; ignored when the decoding config has no `startOfPrevious` token.
   */
  context?: readonly number[];
  /** Tokens the recording is expected to produce, checked in the first call (decodeTokens). */
  draft?: readonly number[];
}

function mask(ids: readonly number[], size: number): Uint8Array {
  const m = new Uint8Array(size);
  for (const id of ids) if (id < size) m[id] = 1;
  return m;
}

interface SuppressMasks {
  always: Uint8Array;
  first: Uint8Array;
}
/** The decoding config's suppress lists as masks, built once per decoder and vocabulary size. */
const masksOf = new WeakMap<DecodingConfig, SuppressMasks>();
function suppressMasks(decoding: DecodingConfig, vocabularySize: number): SuppressMasks {
  let masks = masksOf.get(decoding);
  if (!masks || masks.always.length !== vocabularySize) {
    masks = {
      always: mask(decoding.suppressIds, vocabularySize),
      first: mask(decoding.suppressIdsBegin, vocabularySize),
    };
    masksOf.set(decoding, masks);
  }
  return masks;
}

/** The greedy choice from one position's logits: the highest not suppressed (and allowed); -1 when none is. */
function greedyChoice(
  logits: Float32Array,
  decoding: DecodingConfig,
  masks: SuppressMasks,
  first: boolean,
  allowed: Uint8Array | undefined,
): number {
  let best = -1;
  let bestLogit = -Infinity;
  for (let id = 0; id < logits.length; id++) {
    if (masks.always[id] || (first && masks.first[id])) continue;
    const isEnd = id === decoding.endOfText;
    if (allowed && !allowed[id] && !(isEnd && !first)) continue;
    if (logits[id]! > bestLogit) {
      bestLogit = logits[id]!;
      best = id;
    }
  }
  return best;
}

/** The first `keep` positions of a [layers, 2, 1, positions, dim] key/value cache. */
function keepPositions(kv: ort.Tensor, keep: number): ort.Tensor {
  const [layers, pair, batch, positions, dim] = kv.dims as number[];
  if (keep === positions) return kv;
  const data = kv.data as Float32Array;
  const out = new Float32Array(layers! * pair! * batch! * keep * dim!);
  const blocks = layers! * pair! * batch!;
  for (let b = 0; b < blocks; b++)
    out.set(data.subarray(b * positions! * dim!, (b * positions! + keep) * dim!), b * keep * dim!);
  return new ort.Tensor('float32', out, [layers!, pair!, batch!, keep, dim!]);
}

/** Whisper keeps at most this many tokens of preceding text (n_text_ctx / 2 - 1): the latest ones. */
const MAX_CONTEXT_TOKENS = 223;
/** The decoder's positions (Whisper's n_text_ctx): prompt and generated tokens together. */
const MAX_POSITIONS = 448;
/** Draft tokens checked in the first call: each returns a row of 51,864 logits (96 rows: 20 MB). */
const MAX_DRAFT_TOKENS = 96;

const int64 = (ids: readonly number[]) => BigInt64Array.from(ids, BigInt);

/**
 * Greedy decoding, timestamps off (training/voxkey_train/whisper_decoder.py greedy_decode): at each step the
 * highest logit among the tokens not suppressed (and allowed), until end-of-text or `maxNewTokens`.
 * With a `draft` (the tokens the recording is expected to say), the first call feeds the prompt and the whole
 * draft and reads the logits after every draft token: the draft's tokens are kept for as long as each is
 * what greedy decoding would have chosen there, and decoding goes on one token a step from the first that is
 * not. The result is greedy decoding's, except that the int8 graph quantises its activations per call, so a
 * near tie can break differently in one call over many positions than in many calls (docs/decisions.md,
 * "Phrase check"); it takes one call instead of one a token when the recording says the expected text.
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
  // Everything the decoder reads fits its 448 positions: the context gives way (its latest tokens kept).
  const contextRoom = Math.max(
    0,
    Math.min(MAX_CONTEXT_TOKENS, MAX_POSITIONS - 1 - decoding.prompt.length - options.maxNewTokens),
  );
  const prompt =
    options.context?.length && decoding.startOfPrevious !== undefined && contextRoom > 0
      ? [decoding.startOfPrevious, ...options.context.slice(-contextRoom), ...decoding.prompt]
      : decoding.prompt;
  const draft = (options.draft ?? []).slice(0, Math.min(options.maxNewTokens, MAX_DRAFT_TOKENS));
  const fed = [...prompt, ...draft];
  checkpoint?.();
  const first = await decoder.step.run({
    tokens: new ort.Tensor('int64', int64(fed), [1, fed.length]),
    past_kv: new ort.Tensor('float32', new Float32Array(0), [layers!, pair!, 1, 0, dim!]),
    cross_kv: crossKv,
    logit_positions: new ort.Tensor(
      'int64',
      int64(Array.from({ length: draft.length + 1 }, (_, k) => prompt.length - 1 + k)),
      [draft.length + 1],
    ),
  });
  const allLogits = first.logits!.data as Float32Array;
  const vocabularySize = allLogits.length / (draft.length + 1);
  const masks = suppressMasks(decoding, vocabularySize);
  const choose = (logits: Float32Array, isFirst: boolean) =>
    greedyChoice(logits, decoding, masks, isFirst, options.allowed);

  const generated: number[] = [];
  let next = -1;
  for (let k = 0; k <= draft.length; k++) {
    const row = allLogits.subarray(k * vocabularySize, (k + 1) * vocabularySize);
    next = choose(row, generated.length === 0);
    if (k < draft.length && next === draft[k] && next !== decoding.endOfText) generated.push(next);
    else break;
  }
  let pastKv = keepPositions(first.present_kv!, prompt.length + generated.length);
  const lastPosition = new ort.Tensor('int64', BigInt64Array.of(0n), [1]);
  while (generated.length < options.maxNewTokens) {
    if (next < 0 || next === decoding.endOfText) break;
    generated.push(next);
    if (generated.length >= options.maxNewTokens) break;
    checkpoint?.();
    const out = await decoder.step.run({
      tokens: new ort.Tensor('int64', BigInt64Array.of(BigInt(next)), [1, 1]),
      past_kv: pastKv,
      cross_kv: crossKv,
      logit_positions: lastPosition,
    });
    next = choose(out.logits!.data as Float32Array, false);
    pastKv = out.present_kv!;
  }
  return generated;
}
