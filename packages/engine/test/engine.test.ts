import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type VoiceEngine } from '../src/runtime/engine.js';
import { EngineError } from '../src/errors.js';
import { encodeWav, parseWavHeader } from '../src/audio/wav.js';
import { audioBytes, FIXTURE_MODELS, rng, sine } from './helpers.js';

async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(EngineError);
    return (e as EngineError).code;
  }
  return 'no error';
}

function tempModels(edit: (m: { models: Record<string, unknown>[] }) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'voxkey-models-'));
  for (const f of ['tiny-speaker.onnx', 'tiny-spoof.onnx'])
    copyFileSync(join(FIXTURE_MODELS, f), join(dir, f));
  const manifest = JSON.parse(readFileSync(join(FIXTURE_MODELS, 'manifest.json'), 'utf8'));
  edit(manifest);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

describe('engine through the Piscina pool (fixture models)', () => {
  let engine: VoiceEngine;
  beforeAll(async () => {
    engine = await createEngine({ modelsDir: FIXTURE_MODELS, threads: 2, taskTimeoutMs: 20_000 });
  });
  afterAll(() => engine?.close());

  it('picks the manifest default models', () => {
    expect(engine.speakerModelId).toBe('tiny-speaker');
    expect(engine.spoofModelId).toBe('tiny-spoof');
    expect(engine.stats().threads).toBe(2);
  });

  it('enrols from WAV: voiceprint, quality, speech, spoof, timings', async () => {
    const r = await engine.enrol(audioBytes('alice_1.wav'));
    expect(r.voiceprint.modelId).toBe('tiny-speaker');
    expect(r.voiceprint.embedding).toBeInstanceOf(Float32Array);
    expect(r.voiceprint.embedding.length).toBe(64);
    const norm = Math.hypot(...r.voiceprint.embedding);
    expect(norm).toBeCloseTo(1, 5);
    expect(r.qualityScore).toBeGreaterThan(0);
    expect(r.qualityScore).toBeLessThanOrEqual(1);
    expect(r.netSpeechSeconds).toBeGreaterThan(5);
    expect(r.netSpeechSeconds).toBeLessThan(8.7);
    expect(r.consistency).not.toBeNull();
    expect(r.spoof.bonafideProbability).toBeGreaterThanOrEqual(0);
    expect(typeof r.spoof.deepfakeDetected).toBe('boolean');
    expect(r.timings.totalMs).toBeGreaterThan(0);
    expect(r.audio.format).toBe('wav');
  });

  it('verifies WAV and MP3 against a voiceprint; the same recording matches itself', async () => {
    const { voiceprint } = await engine.enrol(audioBytes('alice_1.wav'));
    const same = await engine.verify(audioBytes('alice_1.wav'), voiceprint);
    expect(same.cosine).toBeCloseTo(1, 4);
    expect(same.result).toBe('verified');
    expect(same.matchScore).toBeGreaterThan(0.85);
    const mp3 = await engine.verify(audioBytes('alice_1_44k_stereo.mp3'), voiceprint);
    expect(mp3.audio.format).toBe('mp3');
    expect(mp3.cosine).toBeGreaterThan(0.9); // same speech through MP3 + 44.1 kHz + resampling
    expect(['verified', 'rejected', 'inconclusive']).toContain(mp3.result);
    const strict = await engine.verify(audioBytes('bob_1.wav'), voiceprint, { threshold: 1 });
    expect(strict.result).toBe('rejected');
    expect(strict.threshold).toBe(1);
  });

  it('handles concurrent requests beyond the thread count', async () => {
    const rs = await Promise.all(
      ['alice_1.wav', 'alice_2.wav', 'bob_1.wav', 'alice_1_44k_stereo.mp3', 'alice_2.wav'].map(
        (f) => engine.enrol(audioBytes(f)),
      ),
    );
    expect(rs.every((r) => r.voiceprint.embedding.length === 64)).toBe(true);
    expect(engine.stats().completed).toBeGreaterThan(5);
  });

  it('inspectAudio is synchronous and validates', () => {
    expect(engine.inspectAudio(audioBytes('alice_1.wav')).durationSeconds).toBeCloseTo(8.69, 1);
    expect(() => engine.inspectAudio(new TextEncoder().encode('not audio at all'))).toThrow(
      EngineError,
    );
  });

  it('takes the header check from the request side and still fails safely on bytes that do not match it', async () => {
    const bytes = audioBytes('alice_1.wav');
    const audio = engine.inspectAudio(bytes);
    const { voiceprint } = await engine.enrol(bytes, { audio });
    expect(bytes.length).toBeGreaterThan(0); // copied by default: the caller's bytes stay usable
    const handed = audioBytes('alice_1.wav');
    const v = await engine.verify(handed, voiceprint, { audio, transfer: true });
    expect(v.cosine).toBeCloseTo(1, 4);
    expect(handed.length).toBe(0); // transferred to the worker
    const corrupt = audioBytes('alice_1.wav').slice(0, 40);
    expect(await errorCode(engine.enrol(corrupt, { audio }))).toBe('corrupt_audio');
    expect(
      await errorCode(
        engine.enrol(new Uint8Array(20_000), {
          audio: engine.inspectAudio(audioBytes('alice_1_44k_stereo.mp3')),
        }),
      ),
    ).toBe('corrupt_audio');
    expect(await errorCode(engine.enrol(new Uint8Array(20_000), { audio }))).toBe('corrupt_audio');
    await expect(engine.enrol('UklGRg==' as unknown as Uint8Array)).rejects.toThrow(TypeError);
  });

  it('takes PCM as it is (audio from a stream): the same analysis as the WAV it would have been wrapped in', async () => {
    const wav = audioBytes('alice_1.wav');
    const header = parseWavHeader(wav);
    const pcm = new Int16Array(
      wav.slice(header.dataOffset, header.dataOffset + header.dataBytes).buffer,
    );
    const audio = { pcm, sampleRate: header.sampleRate };
    const { voiceprint } = await engine.enrol(audioBytes('alice_2.wav'));
    const [fromWav, fromPcm] = await Promise.all([
      engine.verify(wav, voiceprint),
      engine.verify(audio, voiceprint),
    ]);
    expect(fromPcm.audio).toMatchObject({ format: 'pcm', channels: 1, sampleRate: 16000 });
    expect(fromPcm.matchScore).toBe(fromWav.matchScore);
    expect(fromPcm.netSpeechSeconds).toBe(fromWav.netSpeechSeconds);
    const [checkWav, checkPcm] = await Promise.all([
      engine.checkAudio(wav),
      engine.checkAudio({ pcm: pcm.subarray(0, 16000), sampleRate: 16000 }),
    ]);
    expect(checkPcm.audio.durationSeconds).toBe(1);
    expect(checkPcm.problems.map((p) => p.code)).toContain('audio_too_short');
    expect(checkWav.netSpeechSeconds).toBeGreaterThan(checkPcm.netSpeechSeconds);
    expect(pcm.length).toBeGreaterThan(0); // copied: the caller's samples stay usable
    const long = { pcm: new Int16Array(16000 * 61), sampleRate: 16000 };
    expect(await errorCode(engine.verify(long, voiceprint))).toBe('audio_too_long');
    const short = { pcm: pcm.subarray(0, 16000), sampleRate: 16000 };
    expect(await errorCode(engine.verify(short, voiceprint))).toBe('audio_too_short');
  });

  it('rejects speech-content failures with typed errors', async () => {
    const r = rng(3);
    const silence = encodeWav(new Float32Array(16000 * 4), 16000);
    const clipped = encodeWav(sine(4, 16000, 200, 3), 16000);
    const noise = encodeWav(
      new Float32Array(16000 * 4).map(() => 0.05 * (r() - 0.5)),
      16000,
    );
    expect(await errorCode(engine.enrol(silence))).toBe('silent_audio');
    expect(await errorCode(engine.enrol(clipped))).toBe('clipped_audio');
    expect(await errorCode(engine.enrol(noise))).toBe('insufficient_speech');
    const { voiceprint } = await engine.enrol(audioBytes('alice_2.wav'));
    expect(await errorCode(engine.verify(noise, voiceprint))).toBe('insufficient_speech');
  });

  it('returns inconclusive when the SNR is too low for a reliable decision', async () => {
    const { decodeWav } = await import('../src/audio/wav.js');
    const r = rng(11);
    const noisy = decodeWav(audioBytes('alice_1.wav')).samples.map((v) => v + 0.35 * (r() - 0.5));
    const { voiceprint } = await engine.enrol(audioBytes('alice_2.wav'));
    const v = await engine.verify(encodeWav(noisy, 16000), voiceprint);
    expect(v.snrDb).toBeLessThan(5);
    expect(v.netSpeechSeconds).toBeGreaterThan(3);
    expect(v.result).toBe('inconclusive');
    expect(v.inconclusiveReason).toMatch(/SNR/);
  });

  it('rejects intake failures before queueing', async () => {
    expect(
      await errorCode(engine.enrol(new TextEncoder().encode('this is not audio at all'))),
    ).toBe('unsupported_format');
    expect(await errorCode(engine.enrol(encodeWav(sine(4, 8000), 8000)))).toBe(
      'sample_rate_too_low',
    );
    expect(await errorCode(engine.enrol(encodeWav(sine(1), 16000)))).toBe('audio_too_short');
    expect(await errorCode(engine.enrol(encodeWav(sine(61), 16000)))).toBe('audio_too_long');
  });

  it('never compares voiceprints from another model', async () => {
    const embedding = new Float32Array(64).fill(0.125);
    expect(
      await errorCode(
        engine.verify(audioBytes('alice_1.wav'), { modelId: 'other-model', embedding }),
      ),
    ).toBe('voiceprint_model_mismatch');
    expect(
      await errorCode(
        engine.verify(audioBytes('alice_1.wav'), {
          modelId: 'tiny-speaker',
          embedding: new Float32Array(10),
        }),
      ),
    ).toBe('invalid_voiceprint');
    expect(
      await errorCode(
        engine.verify(audioBytes('alice_1.wav'), {
          modelId: 'tiny-speaker',
          embedding: [1, 2] as unknown as Float32Array,
        }),
      ),
    ).toBe('invalid_voiceprint');
  });

  it('honours abort signals', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await errorCode(engine.enrol(audioBytes('alice_1.wav'), { signal: ac.signal }))).toBe(
      'aborted',
    );
    const ac2 = new AbortController();
    const p = engine.enrol(audioBytes('bob_1.wav'), { signal: ac2.signal });
    setTimeout(() => ac2.abort(), 5);
    expect(await errorCode(p)).toBe('aborted');
    // the pool keeps working
    expect((await engine.enrol(audioBytes('alice_1.wav'))).voiceprint.modelId).toBe('tiny-speaker');
  });
});

describe('engine pool limits and failures', () => {
  it('a crashed worker fails only its task and the pool recovers; a full queue is typed', async () => {
    const engine = await createEngine({
      modelsDir: FIXTURE_MODELS,
      threads: 1,
      maxQueue: 2,
      taskTimeoutMs: 30_000,
      testHooks: true,
      warmup: false,
    });
    try {
      const crash = engine.runRaw({ kind: 'crash' });
      const after = engine.enrol(audioBytes('alice_1.wav'));
      expect(await errorCode(crash)).toBe('worker_crashed');
      expect((await after).voiceprint.embedding.length).toBe(64);

      const busy = [
        engine.runRaw({ kind: 'sleep', ms: 300 }),
        engine.runRaw({ kind: 'sleep', ms: 300 }),
        engine.runRaw({ kind: 'sleep', ms: 300 }),
      ];
      expect(await errorCode(engine.runRaw({ kind: 'sleep', ms: 300 }))).toBe('queue_full');
      await Promise.all(busy);
      expect(await errorCode(engine.runRaw({ kind: 'bogus' } as never))).toBe('internal');
    } finally {
      await engine.close();
    }
    expect(await errorCode(engine.enrol(audioBytes('alice_1.wav')))).toBe('engine_closed');
  });

  it('times out a task that runs past taskTimeoutMs and keeps serving', async () => {
    const engine = await createEngine({
      modelsDir: FIXTURE_MODELS,
      threads: 1,
      taskTimeoutMs: 2000,
      testHooks: true,
    });
    try {
      const t = performance.now();
      expect(await errorCode(engine.runRaw({ kind: 'sleep', ms: 60_000 }))).toBe('timeout');
      expect(performance.now() - t).toBeLessThan(20_000);
      await expect(engine.runRaw({ kind: 'sleep', ms: 10 })).resolves.toBeNull();
    } finally {
      await engine.close();
    }
  });

  it('refuses a calibration fitted on PLDA scores for a model that compares cosines, unless told to ignore it', async () => {
    const dir = tempModels((m) => {
      m.models[0]!.calibration = { type: 'logistic', score: 'plda', a: 0.2, b: 9 };
    });
    await expect(createEngine({ modelsDir: dir, warmup: false })).rejects.toMatchObject({
      code: 'manifest_invalid',
      message: expect.stringContaining('fitted on plda scores'),
    });
    // what npm run eval -- --write-calibration does to refit it
    const refitting = await createEngine({
      modelsDir: dir,
      warmup: false,
      ignoreCalibration: true,
    });
    await refitting.close();
  });

  it('refuses a model whose sha256 does not match the manifest', async () => {
    const dir = tempModels((m) => (m.models[0]!.sha256 = 'a'.repeat(64)));
    expect(await errorCode(createEngine({ modelsDir: dir, warmup: false }))).toBe(
      'model_integrity',
    );
  });

  it('fails with model_missing when no default model file is present, naming how to get one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxkey-empty-'));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ models: [] }));
    await expect(createEngine({ modelsDir: dir })).rejects.toMatchObject({
      code: 'model_missing',
      message: /no default speaker model/,
    });
    expect(await errorCode(createEngine({ modelsDir: join(dir, 'nowhere') }))).toBe(
      'model_missing',
    );
  });

  it('rejects unknown or wrong-kind model names and a broken model file', async () => {
    expect(await errorCode(createEngine({ modelsDir: FIXTURE_MODELS, speakerModel: 'nope' }))).toBe(
      'model_not_found',
    );
    expect(
      await errorCode(createEngine({ modelsDir: FIXTURE_MODELS, speakerModel: 'tiny-spoof' })),
    ).toBe('model_invalid');
    const dir = tempModels(() => {});
    writeFileSync(join(dir, 'tiny-speaker.onnx'), 'garbage');
    const { sha256File } = await import('../src/models/manifest.js');
    const sha = await sha256File(join(dir, 'tiny-speaker.onnx'));
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    manifest.models[0].sha256 = sha;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    expect(await errorCode(createEngine({ modelsDir: dir, warmup: false }))).toBe('model_invalid');
  });

  it('falls back to the session first input/output when manifest names differ', async () => {
    const dir = tempModels((m) => {
      (m.models[0]!.input as Record<string, unknown>).name = 'fbank';
      (m.models[0]!.output as Record<string, unknown>).name = 'embedding';
    });
    const engine = await createEngine({ modelsDir: dir, threads: 1, warmup: false });
    try {
      expect((await engine.enrol(audioBytes('alice_1.wav'))).voiceprint.embedding.length).toBe(64);
    } finally {
      await engine.close();
    }
  });
});
