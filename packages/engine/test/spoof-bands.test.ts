import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPOOF_BANDS, spoofBands, spoofFrames } from '../src/features/spoof-bands.js';
import { spoofSegments, SPOOF_MAX_SEGMENT, SPOOF_WINDOW } from '../src/models/spoof.js';

interface Fixture {
  samples: number[];
  bands: number[][];
}

const dir = join(import.meta.dirname, 'fixtures', 'spoof-bands');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as Fixture] as const);

describe('spoof band features vs the in-graph front-end the models were trained with (python -m training.voxkey_train.fixtures spoof-bands)', () => {
  it('has reference fixtures', () => expect(fixtures.length).toBeGreaterThanOrEqual(3));
  for (const [name, doc] of fixtures) {
    it(`${name}: within 1e-3 (max abs)`, () => {
      const samples = Float32Array.from(doc.samples);
      const frames = spoofFrames(samples.length);
      expect(frames).toBe(doc.bands[0]!.length);
      const bands = spoofBands(samples);
      let worst = 0;
      doc.bands.forEach((row, b) =>
        row.forEach((v, t) => (worst = Math.max(worst, Math.abs(bands[b * frames + t]! - v)))),
      );
      expect(bands).toHaveLength(SPOOF_BANDS * frames);
      expect(worst).toBeLessThan(1e-3);
    });
  }

  it('writes into a shared batch at an offset', () => {
    const samples = Float32Array.from(fixtures[0]![1].samples);
    const size = SPOOF_BANDS * spoofFrames(samples.length);
    const batch = new Float32Array(2 * size);
    spoofBands(samples, batch, size);
    expect(batch.subarray(size)).toEqual(spoofBands(samples));
    expect(batch.subarray(0, size).every((v) => v === 0)).toBe(true);
  });
});

describe('spoof segments for feature-input models', () => {
  it('repeat-pads a short recording to 4 s', () => {
    const short = Float32Array.from({ length: 24000 }, (_, i) => i + 1);
    const [s] = spoofSegments(short);
    expect(s).toHaveLength(SPOOF_WINDOW);
    expect(s![24000]).toBe(1);
  });
  it('covers a recording once with equal segments of 4-8 s', () => {
    expect(spoofSegments(new Float32Array(0))).toHaveLength(0);
    expect(spoofSegments(new Float32Array(5 * 16000)).map((s) => s.length)).toEqual([80000]);
    expect(spoofSegments(new Float32Array(SPOOF_MAX_SEGMENT)).map((s) => s.length)).toEqual([
      SPOOF_MAX_SEGMENT,
    ]);
    expect(spoofSegments(new Float32Array(SPOOF_MAX_SEGMENT + 1)).map((s) => s.length)).toEqual([
      64000, 64000,
    ]);
    const thirty = spoofSegments(new Float32Array(30 * 16000));
    expect(thirty.map((s) => s.length)).toEqual([120000, 120000, 120000, 120000]);
    for (const n of [64001, 100000, 200000, 480001]) {
      const segs = spoofSegments(new Float32Array(n));
      expect(
        segs.every(
          (s) =>
            s.length >= SPOOF_WINDOW &&
            s.length <= SPOOF_MAX_SEGMENT &&
            s.length === segs[0]!.length,
        ),
      ).toBe(true);
      expect(n - segs.length * segs[0]!.length).toBeLessThan(segs.length);
    }
  });
});
