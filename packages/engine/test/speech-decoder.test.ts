import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeInput, DEFAULT_INTAKE_LIMITS } from '../src/audio/intake.js';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  selectModel,
  speechDecoderParts,
} from '../src/models/manifest.js';
import { openSession } from '../src/models/sessions.js';
import {
  decodeTokens,
  type EncoderOutput,
  type SpeechDecoderSessions,
} from '../src/models/speech-decoder.js';
import { encodeSpeech } from '../src/models/speech-encoder.js';
import { FREE_PHRASE_PASS, phraseTokenBudget } from '../src/phrase/check.js';
import { matchScore } from '../src/phrase/match.js';
import { loadVocabulary, type WhisperVocabulary } from '../src/phrase/vocabulary.js';
import { PHRASE_PAD_SAMPLES } from '../src/runtime/phrase-check.js';
import { audioBytes } from './helpers.js';

/** What alice_1.wav says (Harvard sentences, list 1), and what alice_2.wav says. */
const ALICE_1 =
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well.';
const ALICE_2 =
  'These days a chicken leg is a rare dish. Rice is often served in round bowls. The juice of lemons makes fine punch.';

describe('greedy decoding with a draft (the expected text checked in one call)', () => {
  let decoder: SpeechDecoderSessions;
  let vocabulary: WhisperVocabulary;
  let encoded: EncoderOutput;

  beforeAll(async () => {
    const manifest = await loadManifest(defaultManifestPath());
    const modelsDir = defaultModelsDir();
    const entry = selectModel(manifest, 'speech-decoder', modelsDir);
    const parts = speechDecoderParts(entry);
    const encoderEntry = manifest.models.find((m) => m.name === parts.encoder)!;
    const [step, crossKv, encoder] = await Promise.all([
      openSession(join(modelsDir, entry.file), 1, 'speech-decoder'),
      openSession(join(modelsDir, parts.crossKv.file), 1, 'cross-kv'),
      openSession(join(modelsDir, encoderEntry.file), 1, 'speech-encoder'),
    ]);
    decoder = { step, crossKv, decoding: parts.decoding };
    vocabulary = loadVocabulary(join(modelsDir, parts.vocabulary.file));
    const audio = await decodeInput(audioBytes('alice_1.wav'), DEFAULT_INTAKE_LIMITS);
    encoded = (
      await encodeSpeech(encoder, audio.samples, undefined, {
        padToSamples: PHRASE_PAD_SAMPLES,
        final: true,
      })
    ).final!;
  }, 60_000);

  const decode = async (draftText: string | null, contextText: string | null, max = 60) =>
    vocabulary.decode(
      await decodeTokens(decoder, encoded, {
        maxNewTokens: max,
        ...(draftText === null ? {} : { draft: vocabulary.encode(' ' + draftText) }),
        ...(contextText === null ? {} : { context: vocabulary.encode(' ' + contextText) }),
      }),
    );

  // The int8 step graph quantises its activations per call, so one call over the draft and one call a token
  // can break a near tie differently: the draft changes the cost, not what is heard beyond such a tie. Where
  // the tie falls depends on the CPU's int8 kernels: on an AVX2 host without VNNI the plain decode ends "the nip
  // can run well" and the drafted one "the nip in the well" (2 of 27 words), on VNNI hosts at most 1 word differs.
  // speech-decoder-draft.test.ts checks exact equality on deterministic stand-in graphs.
  it('hears what step-by-step greedy decoding hears, whatever the draft says', async () => {
    const plain = await decode(null, null);
    expect(plain.toLowerCase()).toContain('dark blue background');
    for (const draft of [ALICE_1, ALICE_2, plain.trim()])
      expect(matchScore(plain, await decode(draft, null))).toBeGreaterThanOrEqual(0.9);
  });

  it('with the expected text as context, hears it, and an impostor text still does not match', async () => {
    const withContext = await decode(null, ALICE_1);
    expect(matchScore(ALICE_1, withContext)).toBeGreaterThanOrEqual(0.95);
    expect(matchScore(ALICE_1, await decode(ALICE_1, ALICE_1))).toBeGreaterThanOrEqual(0.95);
    expect(matchScore(ALICE_1, await decode(ALICE_2, ALICE_1))).toBeGreaterThanOrEqual(0.95);
    const impostor = await decode(ALICE_2, ALICE_2);
    expect(matchScore(ALICE_2, impostor)).toBeLessThan(FREE_PHRASE_PASS);
  });

  it('takes the longest expected text a phrase may have (60 long words) as context and draft', async () => {
    const long = Array.from({ length: 60 }, () => 'Llanfairpwllgwyngyllgogerych').join(' ');
    const budget = phraseTokenBudget(long);
    expect(vocabulary.encode(' ' + long).length).toBeGreaterThan(223);
    await expect(decode(long, long, budget)).resolves.toEqual(expect.any(String));
  });

  it('stops at the token budget with or without a draft', async () => {
    for (const draft of [null, ALICE_1]) {
      const capped = await decode(draft, ALICE_1, 5);
      expect(vocabulary.encode(capped)).toHaveLength(5);
    }
  });
});
