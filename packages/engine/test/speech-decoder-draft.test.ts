import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import type { DecodingConfig } from '../src/models/manifest.js';
import {
  decodeTokens,
  type EncoderOutput,
  type SpeechDecoderSessions,
} from '../src/models/speech-decoder.js';

/**
 * A deterministic stand-in for the decoder's two graphs, with the real graphs' inputs and outputs: the logits at a
 * position are a function of every token up to it (a hash), and the key/value cache carries those tokens. So the
 * draft path (one call over prompt and draft, logits at several positions, the cache cut back after the first
 * rejected draft token) can be checked for exact equality with step-by-step greedy decoding, which the int8 graph
 * cannot give (it quantises activations per call).
 */
const VOCABULARY = 40;
const END = 39;
const START_OF_PREVIOUS = 38;
const decoding: DecodingConfig = {
  prompt: [37, 36],
  startOfPrevious: START_OF_PREVIOUS,
  endOfText: END,
  suppressIds: [35, 34],
  suppressIdsBegin: [33, END],
};

function logitsAfter(history: readonly number[], stopAt: number): Float32Array {
  let h = 2166136261;
  for (const t of history) h = Math.imul(h ^ (t + 1), 16777619) >>> 0;
  const logits = new Float32Array(VOCABULARY);
  for (let id = 0; id < VOCABULARY; id++)
    logits[id] = ((Math.imul(h ^ id, 2654435761) >>> 0) % 1000) / 100;
  // End-of-text wins once the history is long enough, so every decode ends.
  if (history.length >= stopAt) logits[END] = 100;
  return logits;
}

function mockDecoder(stopAt: number): SpeechDecoderSessions & { calls: number } {
  const calls = { calls: 0 };
  const crossKv = {
    run: async () => ({
      cross_kv: new ort.Tensor('float32', new Float32Array(2), [1, 2, 1, 1, 1]),
    }),
  };
  const step = {
    run: async (feeds: Record<string, ort.Tensor>) => {
      calls.calls++;
      const past = feeds.past_kv!;
      const pastTokens = Array.from((past.data as Float32Array).subarray(0, past.dims[3]!));
      const fed = Array.from(feeds.tokens!.data as BigInt64Array, Number);
      const history = [...pastTokens, ...fed];
      const positions = Array.from(feeds.logit_positions!.data as BigInt64Array, Number);
      const logits = new Float32Array(positions.length * VOCABULARY);
      positions.forEach((q, k) =>
        logits.set(
          logitsAfter(history.slice(0, pastTokens.length + q + 1), stopAt),
          k * VOCABULARY,
        ),
      );
      // [layers 1, pair 2, batch 1, positions, dim 1]: both halves hold the token ids
      const kv = new Float32Array([...history, ...history]);
      return {
        logits: new ort.Tensor('float32', logits, [1, positions.length, VOCABULARY]),
        present_kv: new ort.Tensor('float32', kv, [1, 2, 1, history.length, 1]),
      };
    },
  };
  return Object.assign(calls, {
    crossKv: crossKv as unknown as ort.InferenceSession,
    step: step as unknown as ort.InferenceSession,
    decoding,
  });
}

const encoded: EncoderOutput = { data: new Float32Array(4), frames: 1, dim: 4 };

describe('decodeTokens with a draft against step-by-step greedy decoding (deterministic stand-in graphs)', () => {
  it('gives exactly the greedy tokens for a right, a partly right, a wrong, a too long and an empty draft', async () => {
    for (const stopAt of [6, 12, 30]) {
      for (const context of [undefined, [1, 2, 3]]) {
        const options = { maxNewTokens: 20, ...(context ? { context } : {}) };
        const greedy = await decodeTokens(mockDecoder(stopAt), encoded, options);
        expect(greedy.length).toBeGreaterThan(0);
        const wrongAt = (k: number) => greedy.map((t, i) => (i === k ? (t + 1) % 30 : t));
        const drafts = [
          greedy,
          greedy.slice(0, Math.ceil(greedy.length / 2)),
          wrongAt(0),
          wrongAt(greedy.length - 1),
          wrongAt(Math.floor(greedy.length / 2)),
          [...greedy, 5, 6, 7],
          [...greedy, END, 5, 6],
          [greedy[0]!, END, ...greedy.slice(1)],
          [],
        ];
        for (const draft of drafts)
          expect(
            await decodeTokens(mockDecoder(stopAt), encoded, { ...options, draft }),
            JSON.stringify({ stopAt, context, draft }),
          ).toEqual(greedy);
      }
    }
  });

  it('takes one call when the recording says the draft, and one call a token without it', async () => {
    const options = { maxNewTokens: 20 };
    const greedy = await decodeTokens(mockDecoder(10), encoded, options);
    const withDraft = mockDecoder(10);
    await decodeTokens(withDraft, encoded, { ...options, draft: greedy });
    expect(withDraft.calls).toBe(1);
    const without = mockDecoder(10);
    await decodeTokens(without, encoded, options);
    expect(without.calls).toBe(greedy.length + 1);
  });

  it('keeps to the allowed tokens and the token budget along the draft path too', async () => {
    const allowed = new Uint8Array(VOCABULARY);
    for (const id of [3, 5, 7, 11, 13]) allowed[id] = 1;
    for (const maxNewTokens of [3, 20]) {
      const options = { maxNewTokens, allowed };
      const greedy = await decodeTokens(mockDecoder(8), encoded, options);
      expect(greedy.every((t) => allowed[t] === 1)).toBe(true);
      expect(greedy.length).toBeLessThanOrEqual(maxNewTokens);
      for (const draft of [greedy, [3, 4, 5], [...greedy, 3, 3, 3, 3]])
        expect(await decodeTokens(mockDecoder(8), encoded, { ...options, draft })).toEqual(greedy);
    }
  });
});
