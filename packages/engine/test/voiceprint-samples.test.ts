import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type VoiceEngine } from '../src/runtime/engine.js';
import { EngineError } from '../src/errors.js';
import {
  cosineSimilarity,
  DEFAULT_SAMPLE_SCORING_RULE,
  matchScore,
  meanEmbedding,
  scoreAgainstSamples,
} from '../src/scoring/scoring.js';
import { encodeWav } from '../src/audio/wav.js';
import { audioBytes, FIXTURE_MODELS, sine } from './helpers.js';

describe('scoreAgainstSamples', () => {
  const a = Float32Array.from([1, 0, 0]);
  const b = Float32Array.from([0, 1, 0]);
  const probe = Float32Array.from([0.8, 0.6, 0]);

  it('one sample scores exactly as a single voiceprint, whatever the rule', () => {
    for (const rule of ['mean_embedding', 'mean_score', 'best_of'] as const) {
      const { matchScore: score, cosine } = scoreAgainstSamples([a], probe, rule);
      expect(cosine).toBeCloseTo(cosineSimilarity(a, probe), 6);
      expect(score).toBeCloseTo(matchScore(cosineSimilarity(a, probe)), 6);
    }
  });

  it('mean embedding, mean of scores and best of differ as they should', () => {
    const mean = scoreAgainstSamples([a, b], probe, 'mean_embedding');
    expect(mean.cosine).toBeCloseTo(cosineSimilarity(probe, meanEmbedding([a, b])), 6);
    const best = scoreAgainstSamples([a, b], probe, 'best_of');
    expect(best.cosine).toBeCloseTo(0.8, 6);
    const averaged = scoreAgainstSamples([a, b], probe, 'mean_score');
    expect(averaged.matchScore).toBeCloseTo((matchScore(0.8) + matchScore(0.6)) / 2, 6);
    expect(best.matchScore).toBeGreaterThan(averaged.matchScore);
    expect(DEFAULT_SAMPLE_SCORING_RULE).toBe('mean_embedding');
    expect(() => scoreAgainstSamples([], probe)).toThrow(RangeError);
    // The engine's own scorer sees each comparison: the mean embedding, or every sample.
    const seen: number[] = [];
    scoreAgainstSamples(
      [a, b],
      probe,
      'best_of',
      (cosine, enrolled) => (seen.push(enrolled.length), cosine),
    );
    expect(seen).toEqual([3, 3]);
    expect(
      scoreAgainstSamples([a, b], probe, 'mean_embedding', (cosine) => cosine / 2).matchScore,
    ).toBeCloseTo(mean.cosine / 2, 6);
  });
});

describe('engine: several samples and the audio pre-check (fixture models)', () => {
  let engine: VoiceEngine;
  beforeAll(async () => {
    engine = await createEngine({ modelsDir: FIXTURE_MODELS, threads: 1, taskTimeoutMs: 20_000 });
  });
  afterAll(() => engine?.close());

  it('verifies against every sample of a voiceprint, with the default rule', async () => {
    const one = (await engine.enrol(audioBytes('alice_1.wav'))).voiceprint;
    const two = (await engine.enrol(audioBytes('alice_2.wav'))).voiceprint;
    const probe = audioBytes('alice_1.wav');
    const single = await engine.verify(probe, [one]);
    expect(single.cosine).toBeCloseTo((await engine.verify(probe, one)).cosine, 6);
    const both = await engine.verify(probe, [one, two]);
    expect(both.cosine).toBeCloseTo(
      cosineSimilarity(meanEmbedding([one.embedding, two.embedding]), one.embedding),
      4,
    );
    const best = await engine.verify(probe, [one, two], { rule: 'best_of' });
    expect(best.cosine).toBeCloseTo(1, 4);
    await expect(engine.verify(probe, [])).rejects.toMatchObject({ code: 'invalid_voiceprint' });
    // A sample of a model this engine does not load is left out while the default model has samples...
    const partly = await engine.verify(probe, [one, { ...two, modelId: 'other' }]);
    expect(partly).toMatchObject({ speakerModelId: engine.speakerModelId, cosine: single.cosine });
    // ...and a voiceprint made only by such a model is never compared.
    await expect(engine.verify(probe, [{ ...two, modelId: 'other' }])).rejects.toMatchObject({
      code: 'voiceprint_model_mismatch',
    });
    expect(engine.defaultDeepfakeThreshold).toBeGreaterThan(0);
    expect(engine.defaultDeepfakeThreshold).toBeLessThan(1);
  });

  it('a speech recording: measured, usable', async () => {
    const check = await engine.checkAudio(audioBytes('alice_1.wav'));
    expect(check.audio).toMatchObject({ format: 'wav', sampleRate: 16000 });
    expect(check.netSpeechSeconds).toBeGreaterThan(5);
    expect(check.snrDb).toEqual(expect.any(Number));
    expect(check.problems).toEqual([]);
    expect(check.timings.totalMs).toBeGreaterThan(0);
    const mp3 = await engine.checkAudio(audioBytes('alice_1_44k_stereo.mp3'));
    expect(mp3.audio).toMatchObject({ format: 'mp3', sampleRate: 44100 });
  });

  it('problems: silent, too short, clipped, sample rate too low; a file that is not audio throws', async () => {
    const codes = async (samples: Float32Array, rate = 16000) =>
      (await engine.checkAudio(encodeWav(samples, rate))).problems.map((p) => p.code);
    expect(await codes(new Float32Array(16000 * 4))).toEqual([
      'silent_audio',
      'insufficient_speech',
    ]);
    const speech = audioBytes('alice_1.wav');
    const short = await engine.checkAudio(
      encodeWav(decodePcm16(speech).subarray(0, 16000 * 1.5), 16000),
    );
    expect(short.problems.map((p) => p.code)).toEqual(['audio_too_short', 'insufficient_speech']);
    expect(short.audio.durationSeconds).toBeCloseTo(1.5, 2);
    expect(await codes(sine(4, 16000, 200, 3))).toContain('clipped_audio');
    const lowRate = await engine.checkAudio(encodeWav(sine(4, 8000), 8000));
    expect(lowRate.problems.map((p) => p.code)).toEqual(['sample_rate_too_low']);
    expect(lowRate.audio.sampleRate).toBe(8000);
    for (const p of [...short.problems, ...lowRate.problems])
      expect(p.message.length).toBeGreaterThan(10);
    await expect(
      engine.checkAudio(new TextEncoder().encode('hello, not audio at all')),
    ).rejects.toBeInstanceOf(EngineError);
    await expect(
      engine.checkAudio(new TextEncoder().encode('RIFF....WAVE but nothing else')),
    ).rejects.toMatchObject({ category: 'invalid_input' });
  });

  it('the pre-check can be aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      engine.checkAudio(audioBytes('alice_1.wav'), { signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'aborted' });
  });
});

/** The samples of a 16-bit mono WAV fixture. */
function decodePcm16(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  while (offset < bytes.length - 8) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    if (id === 'data') {
      const out = new Float32Array(size / 2);
      for (let i = 0; i < out.length; i++) out[i] = view.getInt16(offset + 8 + i * 2, true) / 32768;
      return out;
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}
