import { randomInt } from 'node:crypto';
import { DIGIT_WORDS, normalizePhrase } from './normalise.js';

/**
 * Prompted-phrase challenges (training/results/phrase-check.md): N random digits shown as words
 * ("four seven one nine zero two"), decoded digits-only and passed at matchScore >= DIGIT_CHALLENGE_PASS.
 * A random other 6-digit string is within 2 digits of the challenge with probability 0.13%.
 */

export const DEFAULT_CHALLENGE_DIGITS = 6;
/** Pass threshold for a digit challenge: at most 2 of 6 digits wrong. */
export const DIGIT_CHALLENGE_PASS = 0.66;
/** Longest challenge accepted (a guard on the argument; the recommended length is 6). */
export const MAX_CHALLENGE_DIGITS = 20;

export interface DigitChallenge {
  /** The digits drawn, e.g. "471902". */
  digits: string;
  /** What the user is shown and reads: the digits as words, e.g. "four seven one nine zero two". */
  text: string;
  /** normalizePhrase(text): what matchScore compares against (equal to `text`). */
  expected: string;
}

/** Draw `length` digits (default 6), each uniform in 0-9 from crypto.randomInt. */
export function generateDigitChallenge(length: number = DEFAULT_CHALLENGE_DIGITS): DigitChallenge {
  if (!Number.isInteger(length) || length < 1 || length > MAX_CHALLENGE_DIGITS) {
    throw new RangeError(
      `challenge length must be an integer from 1 to ${MAX_CHALLENGE_DIGITS}, got ${length}`,
    );
  }
  let digits = '';
  for (let k = 0; k < length; k++) digits += String(randomInt(10));
  const text = [...digits].map((d) => DIGIT_WORDS[Number(d)]!).join(' ');
  return { digits, text, expected: normalizePhrase(text) };
}
