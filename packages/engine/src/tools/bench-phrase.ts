import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { decodeWav, encodeWav } from '../audio/wav.js';
import type { VerificationAnalysis, Voiceprint, VoiceEngine } from '../runtime/engine.js';
import type { PhraseRequest } from '../phrase/check.js';
import { PACKAGE_DIR } from '../package-dir.js';
import { timePaired } from './args.js';

/** A real English recording (Harvard sentences), cut to 5 s, and what those 5 s say. */
const CLIP = join(PACKAGE_DIR, 'test', 'fixtures', 'audio', 'alice_1.wav');
const CLIP_5S_TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark';
/** A real digit string (5.6 s, a speechocean762 dev speaker) read as a digit challenge, when the data set is here. */
const DIGIT_CLIP = 'speech/speechocean762/0044/000440049.mp3';
const DIGIT_CLIP_TEXT = 'seven three four nine';
const DATASET_DIR =
  process.env.VOXKEY_DATASET_DIR ?? resolve(PACKAGE_DIR, '..', '..', '..', 'shared', 'datasets');

export interface PhraseCost {
  /** Verification of the 5 s recording with its text as the phrase, and without a phrase (alternating). */
  withPhraseMs: number;
  withoutPhraseMs: number;
  addedMs: number;
  /** The worker's own stage times of the last phrase run. */
  encoderMs: number;
  decodeMs: number;
  matched: boolean;
}

/** What a phrase check adds to a verification, timed in alternation with the same verification without one. */
async function timePhrase(
  engine: VoiceEngine,
  voiceprint: Voiceprint,
  runs: number,
  clip: Uint8Array,
  phrase: PhraseRequest,
): Promise<PhraseCost> {
  let last: VerificationAnalysis | undefined;
  const paired = await timePaired(
    runs,
    async () => (last = await engine.verify(clip, voiceprint, { phrase })),
    () => engine.verify(clip, voiceprint),
  );
  return {
    withPhraseMs: paired.aMs,
    withoutPhraseMs: paired.bMs,
    addedMs: paired.differenceMs,
    encoderMs: last!.timings.encoderMs,
    decodeMs: last!.timings.phraseMs,
    matched: last!.phrase?.matched ?? false,
  };
}

/**
 * The phrase check's cost: a 5 s English sentence (a predefined text, decoded freely) and, when the data set is
 * beside the repository, a real digit string read as a digit challenge (decoded digits-only).
 */
export async function benchPhraseCheck(
  engine: VoiceEngine,
  voiceprint: Voiceprint,
  runs: number,
): Promise<{ sentence: PhraseCost; digits: PhraseCost | null } | null> {
  if (!engine.phraseLanguages.includes('en')) return null;
  const { samples, sampleRate } = decodeWav(new Uint8Array(readFileSync(CLIP)));
  const sentence = await timePhrase(
    engine,
    voiceprint,
    runs,
    encodeWav(samples.subarray(0, 5 * sampleRate), sampleRate),
    { expected: CLIP_5S_TEXT, vocabulary: 'free' },
  );
  const digitPath = join(DATASET_DIR, DIGIT_CLIP);
  const digits = existsSync(digitPath)
    ? await timePhrase(engine, voiceprint, runs, new Uint8Array(readFileSync(digitPath)), {
        expected: DIGIT_CLIP_TEXT,
        vocabulary: 'digits',
      })
    : null;
  return { sentence, digits };
}
