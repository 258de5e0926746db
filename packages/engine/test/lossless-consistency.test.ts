import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type VoiceEngine } from '../src/runtime/engine.js';
import { losslessVerdicts, scoreLosslessPairs } from '../src/tools/lossless-pairs.js';
import { datasetPresentFor } from './helpers.js';

// Issue 30: coding alone never changes a deepfake verdict. Every real recording of the data set's
// lossless/ folder (300, as recorded and as its MP3 twin) through the default spoof model, at both of
// its thresholds: what `npm run check:lossless` reports, here as a test so that a new default fails
// it instead of a report. Reads ../shared/datasets (skipped when absent; in CI it is always there).
const DATASET_DIR =
  process.env.VOXKEY_DATASET_DIR ??
  fileURLToPath(new URL('../../../../shared/datasets', import.meta.url));
const HAS_LOSSLESS = datasetPresentFor(
  import.meta.url,
  'the default spoof model gives a lossless recording and its MP3 twin one verdict',
  existsSync(path.join(DATASET_DIR, 'lossless', 'manifest.csv')),
);

describe.skipIf(!HAS_LOSSLESS)(
  'the default spoof model gives a lossless recording and its MP3 twin one verdict (reads ../shared/datasets)',
  () => {
    let engine: VoiceEngine;
    beforeAll(async () => {
      engine = await createEngine({ threads: 2, maxQueue: 1024 });
    });
    afterAll(() => engine?.close());

    it('at the verification and the enrolment threshold, on all 300 pairs', async () => {
      const pairs = await scoreLosslessPairs(engine, DATASET_DIR);
      expect(pairs).toHaveLength(300);
      for (const threshold of [
        1 - engine.defaultDeepfakeThreshold,
        1 - engine.defaultEnrolmentDeepfakeThreshold,
      ])
        expect(losslessVerdicts(pairs, threshold).flaggedInOneFormOnly).toEqual([]);
    }, 240_000);
  },
);
