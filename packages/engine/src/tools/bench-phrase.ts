import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeWav, encodeWav } from '../audio/wav.js';
import type { Voiceprint, VoiceEngine } from '../runtime/engine.js';
import { PACKAGE_DIR } from '../package-dir.js';
import { median } from './args.js';

/** A real English recording (Harvard sentences), cut to 5 s, and what those 5 s say. */
const CLIP = join(PACKAGE_DIR, 'test', 'fixtures', 'audio', 'alice_1.wav');
const CLIP_5S_TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark';

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

/** What a phrase check adds to a 5 s verification, timed in alternation with the same verification without one. */
export async function benchPhraseCheck(
  engine: VoiceEngine,
  voiceprint: Voiceprint,
  runs: number,
): Promise<PhraseCost | null> {
  if (!engine.phraseLanguages.includes('en')) return null;
  const { samples, sampleRate } = decodeWav(new Uint8Array(readFileSync(CLIP)));
  const clip = encodeWav(samples.subarray(0, 5 * sampleRate), sampleRate);
  const phrase = { expected: CLIP_5S_TEXT, vocabulary: 'free' as const };
  let last = await engine.verify(clip, voiceprint, { phrase });
  await engine.verify(clip, voiceprint);
  const withMs: number[] = [];
  const withoutMs: number[] = [];
  const added: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t1 = performance.now();
    last = await engine.verify(clip, voiceprint, { phrase });
    const t2 = performance.now();
    await engine.verify(clip, voiceprint);
    const t3 = performance.now();
    withMs.push(t2 - t1);
    withoutMs.push(t3 - t2);
    added.push(t2 - t1 - (t3 - t2));
  }
  return {
    withPhraseMs: median(withMs),
    withoutPhraseMs: median(withoutMs),
    addedMs: median(added),
    encoderMs: last.timings.encoderMs,
    decodeMs: last.timings.phraseMs,
    matched: last.phrase?.matched ?? false,
  };
}
