import {
  decodeTokens,
  type EncoderOutput,
  type SpeechDecoderSessions,
} from '../models/speech-decoder.js';
import {
  phraseOutcome,
  phraseTokenBudget,
  type PhraseOutcome,
  type PhraseRequest,
} from '../phrase/check.js';
import type { WhisperVocabulary } from '../phrase/vocabulary.js';

/** What a worker holds to check phrases: the decoder's two graphs and the tokenizer's vocabulary. */
export interface PhraseChecker {
  decoder: SpeechDecoderSessions;
  vocabulary: WhisperVocabulary;
  /** Tokens a digit challenge may be heard as (WhisperVocabulary.digitTokens), computed once. */
  digitTokens: Uint8Array;
}

/** Silence appended up to 10 s before encoding for the decoder (training/results/phrase-check.md: pad10). */
export const PHRASE_PAD_SAMPLES = 10 * 16000;

export async function checkPhrase(
  checker: PhraseChecker,
  encoded: EncoderOutput,
  request: PhraseRequest,
  checkpoint?: () => void,
): Promise<PhraseOutcome> {
  const tokens = await decodeTokens(
    checker.decoder,
    encoded,
    {
      maxNewTokens: phraseTokenBudget(request.expected),
      ...(request.vocabulary === 'digits' ? { allowed: checker.digitTokens } : {}),
    },
    checkpoint,
  );
  return phraseOutcome(request, checker.vocabulary.decode(tokens));
}
