import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeAudio, DEFAULT_INTAKE_LIMITS } from '../src/audio/intake.js';
import { DATASET_DIR, datasetPresentFor } from './helpers.js';

describe.skipIf(
  !datasetPresentFor(import.meta.url, 'Common Voice MP3 decoding', existsSync(DATASET_DIR)),
)('dataset (reads ../shared/datasets): Common Voice MP3 decoding', () => {
  it('decodes 30 dev MP3s (MPEG-2 Layer III, 16 kHz) to the durations in manifest.csv', async () => {
    const [header, ...rows] = readFileSync(join(DATASET_DIR, 'manifest.csv'), 'utf8')
      .trim()
      .split('\n');
    const cols = header!.split(',');
    const at = (r: string[], c: string) => r[cols.indexOf(c)]!;
    const mp3s = rows
      .map((l) => l.split(','))
      .filter((r) => at(r, 'corpus') === 'commonvoice' && at(r, 'split') === 'dev')
      .filter((_, i) => i % 20 === 0)
      .slice(0, 30);
    expect(mp3s.length).toBe(30);
    for (const r of mp3s) {
      const bytes = new Uint8Array(readFileSync(join(DATASET_DIR, at(r, 'path'))));
      const d = await decodeAudio(bytes, { ...DEFAULT_INTAKE_LIMITS, minDurationSeconds: 0 });
      expect(d.info.format).toBe('mp3');
      // the LAME/Info header's encoder delay and padding are honoured (gapless): within 30 ms
      expect(
        Math.abs(d.samples.length / 16000 - Number(at(r, 'duration_s'))),
        at(r, 'path'),
      ).toBeLessThan(0.03);
    }
  });
});
