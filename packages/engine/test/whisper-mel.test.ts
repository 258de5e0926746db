import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WHISPER_MEL_BINS, whisperLogMel } from '../src/features/whisper-mel.js';

interface Fixture {
  samples: number[];
  mel: number[][];
}

const dir = join(import.meta.dirname, 'fixtures', 'whisper-mel');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as Fixture] as const);

describe("Whisper log-mel vs the numpy rebuild of Whisper's front-end (python -m training.voxkey_train.fixtures whisper-mel)", () => {
  it('has reference fixtures', () => expect(fixtures.length).toBeGreaterThanOrEqual(3));
  for (const [name, doc] of fixtures) {
    it(`${name}: same frames, within 1e-3 (max abs)`, async () => {
      const { data, frames } = await whisperLogMel(Float32Array.from(doc.samples));
      expect(frames).toBe(doc.mel[0]!.length);
      expect(data).toHaveLength(WHISPER_MEL_BINS * frames);
      let worst = 0;
      doc.mel.forEach((row, b) =>
        row.forEach((v, t) => (worst = Math.max(worst, Math.abs(data[b * frames + t]! - v)))),
      );
      expect(worst).toBeLessThan(1e-3);
    });
  }

  it('gives floor(n / 160) frames for any length, even shorter than one window', async () => {
    for (const n of [1, 150, 160, 399, 401, 16000]) {
      const { frames } = await whisperLogMel(new Float32Array(n).fill(0.01));
      expect(frames).toBe(Math.floor(n / 160));
    }
  });
});
