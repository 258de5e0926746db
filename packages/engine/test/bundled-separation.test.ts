import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type VoiceEngine } from '../src/runtime/engine.js';
import { cosineSimilarity as cosine } from '../src/scoring/scoring.js';
import { datasetPresentFor } from './helpers.js';

// The committed default models, on real recordings of two dev speakers from ../shared/datasets
// (skipped when the data set is absent; in CI it is always there). Nothing is trained here.
const DATASET_DIR =
  process.env.VOXKEY_DATASET_DIR ??
  fileURLToPath(new URL('../../../../shared/datasets', import.meta.url));
const HAS_DATASET = datasetPresentFor(
  import.meta.url,
  'committed default models separate two dev speakers',
  existsSync(path.join(DATASET_DIR, 'manifest.csv')),
);

function devSpeakers(count: number, clipsEach: number): string[][] {
  const [, ...rows] = readFileSync(path.join(DATASET_DIR, 'manifest.csv'), 'utf8')
    .trim()
    .split('\n');
  const bySpeaker = new Map<string, string[]>();
  for (const row of rows) {
    const [file, corpus, speaker, kind, , duration, , , , , split] = row.split(',');
    if (
      corpus !== 'commonvoice' ||
      kind !== 'bonafide' ||
      split !== 'dev' ||
      Number(duration) < 4.5
    )
      continue;
    bySpeaker.set(speaker!, [...(bySpeaker.get(speaker!) ?? []), file!]);
  }
  // The speakers with the most long clips, chosen without looking at any score.
  return [...bySpeaker.values()]
    .sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!))
    .slice(0, count)
    .map((clips) => clips.slice(0, clipsEach));
}

describe.skipIf(!HAS_DATASET)(
  'committed default models separate two dev speakers (reads ../shared/datasets)',
  () => {
    let engine: VoiceEngine;
    beforeAll(async () => {
      engine = await createEngine({ threads: 1 });
    });
    afterAll(() => engine?.close());

    it('load by default, give finite embeddings, and score the same speaker above another one', async () => {
      expect(engine.speakerModel.bundled).toBe(true);
      expect(engine.spoofModel.bundled).toBe(true);
      const speakers = devSpeakers(2, 3);
      const embeddings: Float32Array[][] = [];
      for (const clips of speakers) {
        const row: Float32Array[] = [];
        for (const clip of clips) {
          const { embedding, bonafideProbability } = await engine.embedBytes(
            readFileSync(path.join(DATASET_DIR, clip)),
          );
          expect(embedding.every(Number.isFinite)).toBe(true);
          expect(Number.isFinite(bonafideProbability)).toBe(true);
          row.push(embedding);
        }
        embeddings.push(row);
      }
      const [a, b] = embeddings as [Float32Array[], Float32Array[]];
      const same: number[] = [];
      for (const speaker of [a, b])
        for (let i = 0; i < speaker.length; i++)
          for (let j = i + 1; j < speaker.length; j++) same.push(cosine(speaker[i]!, speaker[j]!));
      const cross = a.flatMap((x) => b.map((y) => cosine(x, y)));
      const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
      console.log(
        `same-speaker cosine ${mean(same).toFixed(3)}, other-speaker cosine ${mean(cross).toFixed(3)}`,
      );
      expect(mean(same)).toBeGreaterThan(mean(cross) + 0.1);
      expect(Math.min(...same)).toBeGreaterThan(Math.max(...cross) - 0.2);
    });
  },
);
