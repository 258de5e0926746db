import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type VoiceEngine } from '../src/runtime/engine.js';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  selectModel,
} from '../src/models/manifest.js';
import { FREE_PHRASE_PASS, phraseOutcome, phraseTokenBudget } from '../src/phrase/check.js';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import { audioBytes, DATASET_DIR, datasetPresentFor } from './helpers.js';

/** What alice_1.wav says (Harvard sentences, list 1). */
const ALICE_1 =
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well.';
/** What alice_2.wav says. */
const ALICE_2 =
  'These days a chicken leg is a rare dish. Rice is often served in round bowls. The juice of lemons makes fine punch.';
/** A speechocean762 dev clip that reads four digits. */
const DIGIT_CLIP = 'speech/speechocean762/0003/000030040.mp3';
const DIGIT_CLIP_TEXT = 'TWO SIX FOUR EIGHT';

async function bundledDecoderPresent(): Promise<boolean> {
  try {
    const m = await loadManifest(defaultManifestPath());
    for (const kind of ['speaker', 'spoof', 'speech-decoder'] as const)
      selectModel(m, kind, defaultModelsDir());
    return true;
  } catch {
    return false;
  }
}

describe('phrase outcome', () => {
  it('matches on normalised words at the vocabulary threshold', () => {
    expect(
      phraseOutcome({ expected: 'four seven one nine zero two', vocabulary: 'digits' }, '471-902'),
    ).toEqual({
      expected: 'four seven one nine zero two',
      transcript: '471-902',
      matchScore: 1,
      matched: true,
    });
    // two of six digits wrong passes a digit challenge (0.67), three do not
    expect(
      phraseOutcome({ expected: '4 7 1 9 0 2', vocabulary: 'digits' }, '4 7 1 9 5 5').matched,
    ).toBe(true);
    expect(
      phraseOutcome({ expected: '4 7 1 9 0 2', vocabulary: 'digits' }, '4 7 1 5 5 5').matched,
    ).toBe(false);
    expect(
      phraseOutcome({ expected: 'the cat sat down', vocabulary: 'free' }, ' The cat. '),
    ).toMatchObject({
      transcript: 'The cat.',
      matchScore: 0.5,
      matched: true,
    });
  });
  it('budgets three tokens a word plus ten before calling it a loop', () => {
    expect(phraseTokenBudget('four seven one nine zero two')).toBe(28);
  });
});

const present = prerequisite({
  testFile: import.meta.url,
  tests: 'the phrase check with the bundled Whisper decoder',
  missing: 'the bundled speaker, spoof and speech-decoder models in models/',
  present: await bundledDecoderPresent(),
});

describe.skipIf(!present)('phrase check with the bundled Whisper decoder', () => {
  let engine: VoiceEngine;
  beforeAll(async () => {
    engine = await createEngine({ threads: 1 });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('serves English and reports the phrase of an enrolment and a verification', async () => {
    expect(engine.phraseLanguages).toEqual(['en']);
    const enrolment = await engine.enrol(audioBytes('alice_1.wav'), {
      phrase: { expected: ALICE_1, vocabulary: 'free' },
    });
    expect(enrolment.phrase).toMatchObject({ expected: ALICE_1, matched: true });
    expect(enrolment.phrase!.transcript).toMatch(/dark blue background/i);
    expect(enrolment.timings.phraseMs).toBeGreaterThan(0);

    const other = await engine.verify(audioBytes('alice_1.wav'), enrolment.voiceprint, {
      phrase: { expected: ALICE_2, vocabulary: 'free' },
    });
    expect(other.result).toBe('verified');
    expect(other.phrase).toMatchObject({ expected: ALICE_2, matched: false });
    expect(other.phrase!.matchScore).toBeLessThan(FREE_PHRASE_PASS);

    const none = await engine.verify(audioBytes('alice_1.wav'), enrolment.voiceprint);
    expect(none.phrase).toBeNull();
    expect(none.timings.phraseMs).toBe(0);
  });

  it('scores the spoof check on the same encoder run, close to the run without a phrase', async () => {
    const plain = await engine.embedBytes(audioBytes('alice_2.wav'));
    const withPhrase = await engine.embedBytes(audioBytes('alice_2.wav'), {
      phrase: { expected: ALICE_2, vocabulary: 'free' },
    });
    expect(withPhrase.phrase!.matched).toBe(true);
    expect(Math.abs(withPhrase.spoofLogit - plain.spoofLogit)).toBeLessThan(5);
  });

  it('verifies without the deepfake check when asked (a stream probe): no encoder run, no spoof score', async () => {
    const { voiceprint } = await engine.enrol(audioBytes('alice_1.wav'));
    const full = await engine.verify(audioBytes('alice_2.wav'), voiceprint);
    const voiceOnly = await engine.verify(audioBytes('alice_2.wav'), voiceprint, {
      spoofCheck: false,
    });
    expect(voiceOnly.matchScore).toBe(full.matchScore);
    expect(voiceOnly.result).toBe(full.result);
    expect(voiceOnly.deepfakeDetected).toBe(false);
    expect(voiceOnly.bonafideProbability).toBeNaN();
    expect(full.timings.encoderMs).toBeGreaterThan(1);
    expect(voiceOnly.timings.encoderMs).toBeLessThan(1);
  });

  it('refuses a malformed phrase request', async () => {
    await expect(
      engine.embedBytes(audioBytes('alice_1.wav'), {
        phrase: { expected: ' ... ', vocabulary: 'free' },
      }),
    ).rejects.toThrow(TypeError);
    await expect(
      engine.embedBytes(audioBytes('alice_1.wav'), {
        phrase: { expected: 'one two', vocabulary: 'spoken' as 'free' },
      }),
    ).rejects.toThrow(TypeError);
  });

  it('without a decoder, a phrase request is model_missing and the rest works', async () => {
    const plain = await createEngine({ threads: 1, phraseDecoder: false, warmup: false });
    try {
      expect(plain.phraseLanguages).toEqual([]);
      expect(plain.phraseDecoder).toBeNull();
      await expect(
        plain.enrol(audioBytes('alice_1.wav'), {
          phrase: { expected: ALICE_1, vocabulary: 'free' },
        }),
      ).rejects.toMatchObject({ code: 'model_missing' });
      expect((await plain.enrol(audioBytes('alice_1.wav'))).phrase).toBeNull();
    } finally {
      await plain.close();
    }
  });

  describe.skipIf(
    !datasetPresentFor(
      import.meta.url,
      'a digit challenge read by a real speaker',
      existsSync(join(DATASET_DIR, DIGIT_CLIP)),
    ),
  )('a digit challenge read by a real speaker (reads ../shared/datasets)', () => {
    it('matches its own digits, decoded digits-only, and not other digits', async () => {
      const bytes = new Uint8Array(readFileSync(join(DATASET_DIR, DIGIT_CLIP)));
      const own = await engine.embedBytes(bytes, {
        phrase: { expected: DIGIT_CLIP_TEXT, vocabulary: 'digits' },
      });
      expect(own.phrase).toMatchObject({ matchScore: 1, matched: true });
      expect(own.phrase!.transcript).toMatch(/^[0-9 ,.-]+$/);
      const other = await engine.embedBytes(bytes, {
        phrase: { expected: 'one one nine seven', vocabulary: 'digits' },
      });
      expect(other.phrase!.matched).toBe(false);
    });
  });
});
