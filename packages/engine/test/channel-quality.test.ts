import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type VoiceEngine } from '../src/runtime/engine.js';
import {
  channelFeatures,
  channelTerm,
  fitTailWeights,
  meanQuality,
  type RecordingQuality,
} from '../src/scoring/calibration.js';
import { sigmoid } from '../src/math.js';
import { audioBytes, FIXTURE_MODELS, rng } from './helpers.js';

// The fixtures: the first 4 s of alice_1.wav as it is and through four channels (python -m training.voxkey_train.fixtures channel).
describe('channel quality measures (features/channel-quality.ts) on one recording through four channels', () => {
  let engine: VoiceEngine;
  const q: Record<string, RecordingQuality> = {};
  beforeAll(async () => {
    engine = await createEngine({ modelsDir: FIXTURE_MODELS, threads: 1, taskTimeoutMs: 20_000 });
    for (const name of ['', '_band-300-3400', '_gsm', '_noise-white-10db', '_room-0.7']) {
      q[name || 'clean'] = (
        await engine.embedBytes(audioBytes(`alice_1_4s${name}.wav`))
      ).recordingQuality;
    }
  });
  afterAll(() => engine?.close());

  it('the recording as it is: wideband, clean, dry', () => {
    expect(q.clean!.bandwidthHz).toBeGreaterThan(7000);
    expect(q.clean!.snrDb).toBeGreaterThan(40);
    expect(q.clean!.decayRateDbPerS).toBeGreaterThan(400);
  });
  it('band-limited (300-3400 Hz): the bandwidth falls, the rest stays', () => {
    const b = q['_band-300-3400']!;
    expect(b.bandwidthHz).toBeLessThan(q.clean!.bandwidthHz - 2000);
    expect(b.decayRateDbPerS).toBeGreaterThan(0.8 * q.clean!.decayRateDbPerS);
  });
  it('coded (GSM at 8 kHz): narrowband, with more spectral holes', () => {
    const g = q._gsm!;
    expect(g.bandwidthHz).toBeLessThanOrEqual(4700);
    expect(g.spectralHoleRatio).toBeGreaterThan(1.5 * q.clean!.spectralHoleRatio);
  });
  it('noisy (white noise at 10 dB): the SNR falls to about 10 dB and the noise fills the holes', () => {
    const n = q['_noise-white-10db']!;
    expect(n.snrDb).toBeGreaterThan(5);
    expect(n.snrDb).toBeLessThan(16);
    expect(n.spectralHoleRatio).toBeLessThan(q.clean!.spectralHoleRatio);
  });
  it('reverberant (RT60 0.7 s): the speech decays far more slowly, band and SNR stay', () => {
    const r = q['_room-0.7']!;
    expect(r.decayRateDbPerS).toBeLessThan(0.4 * q.clean!.decayRateDbPerS);
    expect(Math.abs(r.bandwidthHz - q.clean!.bandwidthHz)).toBeLessThan(500);
    expect(r.snrDb).toBeGreaterThan(40);
  });
});

describe('channel terms of the calibration (calibration.ts)', () => {
  const neutral: RecordingQuality = {
    netSpeechSeconds: 3,
    snrDb: 40,
    bandwidthHz: 6000,
    spectralHoleRatio: 0.05,
    decayRateDbPerS: 450,
  };
  const terms = {
    weights: { minBandwidthKHz: -0.02, bandwidthGapKHz: -0.01, minDecayHundredDbPerS: -0.005 },
    neutral,
  };
  const wideband: RecordingQuality = { ...neutral, bandwidthHz: 7800 };
  const telephone: RecordingQuality = { ...neutral, bandwidthHz: 3600 };

  it('no channel terms, or no test quality: no shift (old manifests score as before)', () => {
    expect(channelTerm({}, wideband, telephone)).toBe(0);
    expect(channelTerm({ quality: { enrolSamplesLog: -0.04 } }, wideband, telephone)).toBe(0);
    expect(channelTerm({ quality: { channel: terms } }, wideband, null)).toBe(0);
  });
  it('sums weight x feature of both sides; a side without a measured quality counts as neutral', () => {
    const f = channelFeatures(wideband, telephone, neutral);
    expect(f.minBandwidthKHz).toBeCloseTo(3.6);
    expect(f.bandwidthGapKHz).toBeCloseTo(4.2);
    expect(channelTerm({ quality: { channel: terms } }, wideband, telephone)).toBeCloseTo(
      -0.02 * 3.6 - 0.01 * 4.2 - 0.005 * 4.5,
    );
    expect(channelTerm({ quality: { channel: terms } }, null, telephone)).toBeCloseTo(
      channelTerm({ quality: { channel: terms } }, neutral, telephone),
    );
    expect(meanQuality([null, undefined])).toBeNull();
    expect(meanQuality([wideband, null, telephone])!.bandwidthHz).toBeCloseTo(5700);
  });
  it('the narrowband feature: how far below 5.5 kHz the narrower side is', () => {
    expect(channelFeatures(wideband, wideband, neutral).narrowEitherKHz).toBe(0);
    expect(channelFeatures(wideband, telephone, neutral).narrowEitherKHz).toBeCloseTo(1.9);
    expect(
      channelFeatures({ ...telephone, bandwidthHz: 4000 }, wideband, neutral).narrowEitherKHz,
    ).toBeCloseTo(1.5);
  });
  it('the tail weights level the impostor scores: a feature that lifts their 99th percentile gets minus that lift', () => {
    const r = rng(31);
    const gauss = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
    // impostor cosines 0.2 + 0.05 * feature + noise: the tail moves by 0.05 per unit of the feature
    const nontargets = Array.from({ length: 20000 }, () => {
      const q = [r() * 4, r()];
      return { s: 0.2 + 0.05 * q[0]! + 0.1 * gauss(), q };
    });
    const [w0, w1] = fitTailWeights(nontargets, 0.99);
    expect(w0).toBeCloseTo(-0.05, 2);
    expect(Math.abs(w1!)).toBeLessThan(0.01);
  });
});

describe('verification with channel terms (fixture models)', () => {
  let engine: VoiceEngine;
  const calibration = {
    type: 'logistic' as const,
    a: 12,
    b: -9,
    quality: {
      channel: {
        weights: { minBandwidthKHz: -0.05, minDecayHundredDbPerS: -0.02 },
        neutral: {
          netSpeechSeconds: 3,
          snrDb: 40,
          bandwidthHz: 6000,
          spectralHoleRatio: 0.05,
          decayRateDbPerS: 450,
        },
      },
    },
  };
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxkey-models-'));
    for (const f of ['tiny-speaker.onnx', 'tiny-spoof.onnx'])
      copyFileSync(join(FIXTURE_MODELS, f), join(dir, f));
    const manifest = JSON.parse(readFileSync(join(FIXTURE_MODELS, 'manifest.json'), 'utf8'));
    manifest.models.find((m: { name: string }) => m.name === 'tiny-speaker').calibration =
      calibration;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    engine = await createEngine({ modelsDir: dir, threads: 1, taskTimeoutMs: 20_000 });
  });
  afterAll(() => engine?.close());

  it('the enrolment reports its quality; a voiceprint with it and one without (stored earlier) both verify, each with its terms', async () => {
    const enrolment = await engine.enrol(audioBytes('alice_1.wav'));
    expect(enrolment.recordingQuality.bandwidthHz).toBeGreaterThan(7000);
    const probe = audioBytes('alice_1_4s_gsm.wav');
    const withQuality = await engine.verify(probe, {
      ...enrolment.voiceprint,
      quality: enrolment.recordingQuality,
    });
    const stored = await engine.verify(probe, enrolment.voiceprint);
    expect(withQuality.recordingQuality.bandwidthHz).toBeLessThan(4700);
    const expected = (enrol: RecordingQuality | null, r: typeof stored) =>
      sigmoid(
        calibration.a * (r.cosine + channelTerm(calibration, enrol, r.recordingQuality)) +
          calibration.b,
      );
    expect(withQuality.matchScore).toBeCloseTo(
      expected(enrolment.recordingQuality, withQuality),
      6,
    );
    expect(stored.matchScore).toBeCloseTo(expected(null, stored), 6);
    expect(stored.cosine).toBeCloseTo(withQuality.cosine, 6);
  });
});
