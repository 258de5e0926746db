import { describe, expect, it } from 'vitest';
import { createEngine } from '../src/runtime/engine.js';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  selectModel,
} from '../src/models/manifest.js';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import { audioBytes } from './helpers.js';

async function bundledDefaultsPresent(): Promise<boolean> {
  try {
    const m = await loadManifest(defaultManifestPath());
    selectModel(m, 'speaker', defaultModelsDir());
    selectModel(m, 'spoof', defaultModelsDir());
    return true;
  } catch {
    return false;
  }
}

const present = prerequisite({
  testFile: import.meta.url,
  tests: 'bundled default models in models/',
  missing: 'the default speaker and spoof models in models/ (manifest.json and their files)',
  present: await bundledDefaultsPresent(),
});

describe.skipIf(!present)(
  'bundled default models in models/ (skipped until they are present)',
  () => {
    it('a variant that shares an embedding space (voiceprintModel) verifies the voiceprints of that model and makes voiceprints it verifies', async () => {
      const manifest = await loadManifest(defaultManifestPath());
      const variant = manifest.models.find((m) => m.kind === 'speaker' && m.voiceprintModel);
      if (!variant) return;
      const [a, b] = await Promise.all([
        createEngine({ threads: 1, speakerModel: variant.name }),
        createEngine({ threads: 1, speakerModel: variant.voiceprintModel }),
      ]);
      try {
        expect(a.speakerModelId).toBe(variant.voiceprintModel);
        expect(a.speakerModels.map((m) => m.name)).not.toContain(variant.voiceprintModel);
        const byShared = (await b.enrol(audioBytes('alice_1.wav'))).voiceprint;
        const byVariant = (await a.enrol(audioBytes('alice_1.wav'))).voiceprint;
        expect(byVariant.modelId).toBe(byShared.modelId);
        for (const [engine, voiceprint] of [
          [a, byShared],
          [b, byVariant],
        ] as const) {
          const r = await engine.verify(audioBytes('alice_1_44k_stereo.mp3'), voiceprint);
          expect(r.speakerModelId).toBe(variant.voiceprintModel);
          expect(r.upgradeSample).toBeUndefined();
          expect(r.cosine).toBeGreaterThan(0.8);
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('load with their manifest sha256 and run enrol/verify end to end', async () => {
      const engine = await createEngine({ threads: 1 });
      try {
        const e = await engine.enrol(audioBytes('alice_1.wav'));
        expect(e.voiceprint.modelId).toBe(engine.speakerModelId);
        expect(e.voiceprint.embedding.length).toBeGreaterThan(16);
        const same = await engine.verify(audioBytes('alice_1.wav'), e.voiceprint);
        expect(same.cosine).toBeGreaterThan(0.99);
        expect(same.matchScore).toBeGreaterThan(0.5);
        const other = await engine.verify(audioBytes('alice_1_44k_stereo.mp3'), e.voiceprint);
        expect(other.cosine).toBeGreaterThan(0.8);
      } finally {
        await engine.close();
      }
    });
  },
);
