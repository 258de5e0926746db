import { phraseWords } from './normalise.js';

/**
 * The phrase match score (port of training/voxkey_train/phrase_text.py `match_score`):
 * 1 - word edit distance(normalised expected, normalised heard) / max(expected words, 1), clipped to [0, 1].
 * Substitutions, insertions and deletions cost 1. training/results/phrase-check.md: 6-digit challenges
 * decoded digits-only pass at >= 0.66 (at most 2 of 6 digits wrong); free sentences at >= 0.26.
 */

/** Levenshtein distance between two word sequences. */
export function wordEditDistance(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur.push(
        Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)),
      );
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Edit distance of `ref` to the best-matching contiguous stretch of `hyp` (words before and after it are
 * free): forgives Whisper's repetition loops and extra words around the phrase.
 */
export function windowWordEditDistance(ref: readonly string[], hyp: readonly string[]): number {
  let prev: number[] = new Array<number>(hyp.length + 1).fill(0);
  for (let i = 1; i <= ref.length; i++) {
    const cur = [i];
    for (let j = 1; j <= hyp.length; j++)
      cur.push(
        Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)),
      );
    prev = cur;
  }
  return prev.reduce((best, d) => Math.min(best, d));
}

export interface MatchOptions {
  /** Score against the best-matching stretch of what was heard (windowWordEditDistance); default false. */
  window?: boolean;
}

/** 1 - word edit distance / expected words, clipped to [0, 1], on the normalised texts. */
export function matchScore(expected: string, heard: string, options: MatchOptions = {}): number {
  const ref = phraseWords(expected);
  const hyp = phraseWords(heard);
  const dist = options.window ? windowWordEditDistance(ref, hyp) : wordEditDistance(ref, hyp);
  return Math.min(1, Math.max(0, 1 - dist / Math.max(ref.length, 1)));
}
