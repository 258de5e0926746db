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
import { DIGIT_WORDS, phraseWords } from '../phrase/normalise.js';

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
      ...phraseHints(checker.vocabulary, request),
    },
    checkpoint,
  );
  return phraseOutcome(request, checker.vocabulary.decode(tokens));
}

/** A digit challenge's words as the digits Whisper writes ("three five one" -> "3 5 1"). */
function asDigits(expected: string): string {
  return phraseWords(expected)
    .map((word) => DIGIT_WORDS.indexOf(word as (typeof DIGIT_WORDS)[number]))
    .filter((digit) => digit >= 0)
    .join(' ');
}

/**
 * What the decoder is told of the expected text: the text as shown, as its preceding text (context), and
 * the tokens it should then produce as the first call's draft (a digit challenge's as digits, the form a
 * digits-only decode writes).
 */
function phraseHints(
  vocabulary: WhisperVocabulary,
  request: PhraseRequest,
): { context: number[]; draft: number[] } {
  const context = vocabulary.encode(' ' + request.expected.trim());
  return {
    context,
    draft:
      request.vocabulary === 'digits'
        ? vocabulary.encode(' ' + asDigits(request.expected))
        : context,
  };
}
