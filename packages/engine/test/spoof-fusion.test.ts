import { describe, expect, it } from 'vitest';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  selectModel,
  spoofFusion,
  validateManifest,
} from '../src/models/manifest.js';
import { fuseSpoofScores, type SpoofScore } from '../src/models/spoof.js';
import { createEngine } from '../src/runtime/engine.js';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import { audioBytes } from './helpers.js';

const spoofEntry = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  file: `${name}.onnx`,
  sha256: '0'.repeat(64),
  kind: 'spoof',
  bundled: true,
  input: { features: 'spoof-lfb64-mn' },
  output: {},
  license: 'test',
  source: 'test',
  ...over,
});
const fusion = (over: Record<string, unknown> = {}, withOver: Record<string, unknown> = {}) => ({
  centre: 15,
  spread: 10,
  with: { model: 'cnn', weight: 0.5, centre: 2, spread: 2, ...withOver },
  ...over,
});
const encoderReader = (name: string) =>
  spoofEntry(name, { input: { features: 'whisper-hidden-states', encoder: 'enc' } });

describe('a fused spoof model in the manifest', () => {
  it('is accepted when its partner is a spoof model that reads the audio itself', () => {
    const doc = validateManifest({
      models: [spoofEntry('cnn'), { ...encoderReader('head'), fusion: fusion() }],
    });
    expect(spoofFusion(doc.models[1]!)?.with.model).toBe('cnn');
    expect(spoofFusion(doc.models[0]!)).toBeNull();
  });

  it('is refused, naming the field, when the partner or the parameters do not fit', () => {
    const bad = [
      [spoofEntry('cnn'), { ...encoderReader('head'), fusion: fusion({}, { model: 'missing' }) }],
      [encoderReader('cnn'), { ...encoderReader('head'), fusion: fusion() }],
      [
        { ...spoofEntry('cnn'), fusion: fusion({}, { model: 'head' }) },
        { ...encoderReader('head'), fusion: fusion() },
      ],
      [spoofEntry('cnn'), { ...encoderReader('head'), fusion: fusion({}, { weight: 1 }) }],
      [spoofEntry('cnn'), { ...encoderReader('head'), fusion: fusion({}, { weight: 0 }) }],
      [spoofEntry('cnn'), { ...encoderReader('head'), fusion: fusion({ spread: 0 }) }],
      [spoofEntry('cnn'), { ...encoderReader('head'), fusion: fusion({}, { centre: 'x' }) }],
      [spoofEntry('cnn'), { ...encoderReader('head'), fusion: { centre: 1, spread: 1 } }],
      [
        spoofEntry('cnn'),
        { ...spoofEntry('spk', { kind: 'speaker', input: {} }), fusion: fusion() },
      ],
    ];
    for (const models of bad)
      expect(() => validateManifest({ models }), JSON.stringify(models)).toThrow(
        expect.objectContaining({
          code: 'manifest_invalid',
          message: expect.stringMatching(/fusion/),
        }),
      );
  });
});

describe('fuseSpoofScores', () => {
  const score = (meanLogit: number, windows = 1): SpoofScore => ({
    meanLogit,
    bonafideProbability: 1 / (1 + Math.exp(-meanLogit)),
    windows,
  });
  const f = { centre: 15, spread: 10, with: { model: 'cnn', weight: 0.5, centre: 2, spread: 2 } };

  it('averages the standardised logits and puts the result on the own model scale', () => {
    // own at its centre, partner one spread above its centre: half a spread above the own centre
    const fused = fuseSpoofScores(score(15), score(4), f);
    expect(fused.meanLogit).toBeCloseTo(20, 10);
    expect(fused.bonafideProbability).toBeCloseTo(1 / (1 + Math.exp(-20)), 12);
    // weight 0.2 on the partner
    expect(
      fuseSpoofScores(score(5), score(0), { ...f, with: { ...f.with, weight: 0.2 } }).meanLogit,
    ).toBeCloseTo(15 + 10 * (0.8 * -1 + 0.2 * -1), 10);
  });

  it('leaves a recording the own model could not score undecided', () => {
    const none = { meanLogit: 0, bonafideProbability: 0.5, windows: 0 };
    expect(fuseSpoofScores(none, score(-30), f)).toEqual(none);
  });
});

async function defaultIsFusion(): Promise<boolean> {
  try {
    const manifest = await loadManifest(defaultManifestPath());
    const entry = selectModel(manifest, 'spoof', defaultModelsDir());
    const partner = spoofFusion(entry);
    if (!partner) return false;
    selectModel(manifest, 'spoof', defaultModelsDir(), partner.with.model);
    return true;
  } catch {
    return false;
  }
}

const present = prerequisite({
  testFile: import.meta.url,
  tests: 'the bundled fused spoof model against its two models run alone',
  missing: 'a default spoof model with a fusion in models/manifest.json, and both models files',
  present: await defaultIsFusion(),
});

describe.skipIf(!present)('the bundled fused spoof model', () => {
  it('scores a recording as the fusion of its two models run alone', async () => {
    const manifest = await loadManifest(defaultManifestPath());
    const fused = selectModel(manifest, 'spoof', defaultModelsDir());
    const params = spoofFusion(fused)!;
    const own = manifest.models.find(
      (m) => m.kind === 'spoof' && m.sha256 === fused.sha256 && !m.fusion,
    );
    expect(own, 'the manifest also lists the fused graph on its own').toBeDefined();
    const engines = await Promise.all(
      [fused.name, own!.name, params.with.model].map((spoofModel) =>
        createEngine({ threads: 1, spoofModel, phraseDecoder: false }),
      ),
    );
    try {
      for (const clip of ['alice_1.wav', 'alice_1_44k_stereo.mp3']) {
        const [f, o, p] = await Promise.all(engines.map((e) => e.embedBytes(audioBytes(clip))));
        const expected =
          params.centre +
          params.spread *
            (((1 - params.with.weight) * (o!.spoofLogit - params.centre)) / params.spread +
              (params.with.weight * (p!.spoofLogit - params.with.centre)) / params.with.spread);
        expect(f!.spoofLogit).toBeCloseTo(expected, 4);
      }
      expect(engines[0]!.spoofModelKey).not.toBe(engines[1]!.spoofModelKey);
      expect(engines[1]!.spoofModelKey).toBe(own!.sha256);
    } finally {
      await Promise.all(engines.map((e) => e.close()));
    }
  });
});
