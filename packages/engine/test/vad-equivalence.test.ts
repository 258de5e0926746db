import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compareVad,
  devClips,
  MIN_FRAME_AGREEMENT,
  NET_SPEECH_TOLERANCE_SECONDS,
  summariseVadComparison,
} from '../src/tools/vad-check.js';
import { DATASET_DIR, datasetPresentFor } from './helpers.js';

const datasetDir = DATASET_DIR;
const present = datasetPresentFor(
  import.meta.url,
  'VAD output against the reference VAD',
  existsSync(join(datasetDir, 'trials', 'sv-dev.csv')) &&
    existsSync(join(datasetDir, 'trials', 'cm-dev.csv')),
);

// `npm run check:vad` runs every dev clip; this runs every 40th.
describe.skipIf(!present)(
  'VAD output against the reference VAD on dev clips (skipped without ../shared/datasets)',
  () => {
    it(`keeps ${MIN_FRAME_AGREEMENT * 100}% of the frames and net speech within ${NET_SPEECH_TOLERANCE_SECONDS} s per clip of the VAD before (scan)`, async () => {
      const results = await compareVad(datasetDir, devClips(datasetDir, 40));
      expect(results.length).toBeGreaterThan(10);
      for (const r of results)
        expect(r.netSpeechDifferenceSeconds, r.clip).toBeLessThanOrEqual(
          NET_SPEECH_TOLERANCE_SECONDS,
        );
      expect(summariseVadComparison(results).frameAgreement).toBeGreaterThanOrEqual(
        MIN_FRAME_AGREEMENT,
      );
    });
  },
);
