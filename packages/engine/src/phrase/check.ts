import { DIGIT_CHALLENGE_PASS } from './challenge.js';
import { loopTolerantMatchScore } from './match.js';
import { phraseWords } from './normalise.js';

/**
 * What the user was asked to say. `digits`: a digit challenge, decoded with only digit tokens allowed;
 * `free`: any sentence (a predefined text), decoded freely (training/results/phrase-check.md).
 */
export interface PhraseRequest {
  /** The text as shown to the user. */
  expected: string;
  vocabulary: PhraseVocabulary;
}
export type PhraseVocabulary = 'digits' | 'free';

export interface PhraseOutcome {
  expected: string;
  /** What the recogniser heard. */
  transcript: string;
  /**
   * 1 - word edit distance / expected words, in [0, 1], on normalised words (normalise.ts), with a trailing
   * repetition loop of the transcript forgiven (match.ts loopTolerantMatchScore).
   */
  matchScore: number;
  matched: boolean;
}

/**
 * A free sentence passes at this match score: the lowest with at most 0.5% of other adult texts passing, each
 * decoded with its own text as the context (docs/accuracy.md, "Phrase check").
 */
export const FREE_PHRASE_PASS = 0.3;
export const PHRASE_PASS: Record<PhraseVocabulary, number> = {
  digits: DIGIT_CHALLENGE_PASS,
  free: FREE_PHRASE_PASS,
};
/** The longest expected text a phrase check takes, in normalised words. */
export const MAX_PHRASE_WORDS = 60;

/** Tokens the decoder may generate before it counts as a repetition loop: 3 per expected word, plus 10. */
export function phraseTokenBudget(expected: string): number {
  return 3 * phraseWords(expected).length + 10;
}

export function phraseOutcome(request: PhraseRequest, transcript: string): PhraseOutcome {
  const score = loopTolerantMatchScore(request.expected, transcript);
  return {
    expected: request.expected,
    transcript: transcript.trim(),
    matchScore: score,
    matched: score >= PHRASE_PASS[request.vocabulary],
  };
}
