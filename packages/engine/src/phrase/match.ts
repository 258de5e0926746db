import { phraseWords } from './normalise.js';

/**
 * The phrase match score: `matchScore` is the port of training/voxkey_train/phrase_text.py `match_score`;
 * the engine scores with `loopTolerantMatchScore` (below; engine only), which also forgives a trailing loop:
 * 1 - word edit distance(normalised expected, normalised heard) / max(expected words, 1), clipped to [0, 1].
 * Substitutions, insertions and deletions cost 1. training/results/phrase-check.md: 6-digit challenges
 * decoded digits-only pass at >= 0.66 (at most 2 of 6 digits wrong); free sentences at >= 0.3 (phrase/check.ts).
 */

/**
 * The word edit distance of `ref` to every prefix of `hyp` (entry j: to hyp[0 .. j)), the last row of the
 * Levenshtein table; with `freeStart`, words of `hyp` before the match cost nothing.
 */
function prefixEditDistances(
  ref: readonly string[],
  hyp: readonly string[],
  freeStart = false,
): number[] {
  let prev = Array.from({ length: hyp.length + 1 }, (_, j) => (freeStart ? 0 : j));
  for (let i = 1; i <= ref.length; i++) {
    const cur = [i];
    for (let j = 1; j <= hyp.length; j++)
      cur.push(
        Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)),
      );
    prev = cur;
  }
  return prev;
}

/** Levenshtein distance between two word sequences. */
export function wordEditDistance(a: readonly string[], b: readonly string[]): number {
  return prefixEditDistances(a, b)[b.length]!;
}

/**
 * Edit distance of `ref` to the best-matching contiguous stretch of `hyp` (words before and after it are
 * free): forgives Whisper's repetition loops and extra words around the phrase.
 */
export function windowWordEditDistance(ref: readonly string[], hyp: readonly string[]): number {
  return Math.min(...prefixEditDistances(ref, hyp, true));
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

/**
 * How many of the heard words a reading may keep when what follows them is a repetition loop. Given the
 * expected text as context, Whisper sometimes says the text and then says it again until the token budget
 * ("it is a good point it is a good point it is a"): where words[s:] repeats with a period p at least twice
 * (the last word may be cut short by the budget), words[0 .. s + p) and every longer prefix whose rest is
 * still that loop are readings. Always includes words.length (the words as heard).
 */
export function loopReadingLengths(words: readonly string[]): number[] {
  const n = words.length;
  const lengths = new Set<number>([n]);
  const same = (i: number, j: number) =>
    words[i] === words[j] || (i === n - 1 && words[j]!.startsWith(words[i]!));
  for (let p = 1; 2 * p <= n; p++) {
    // the earliest start of a periodic tail; every later start is one too
    let start = n - p;
    while (start > 0 && same(start - 1 + p, start - 1)) start--;
    for (let s = start; s + 2 * p <= n; s++) lengths.add(s + p);
  }
  return [...lengths].sort((a, b) => a - b);
}

/** matchScore with a trailing repetition loop forgiven: the best score over the loop readings of what was heard. */
export function loopTolerantMatchScore(expected: string, heard: string): number {
  const ref = phraseWords(expected);
  const hyp = phraseWords(heard);
  const toPrefix = prefixEditDistances(ref, hyp);
  const best = Math.min(...loopReadingLengths(hyp).map((length) => toPrefix[length]!));
  return Math.min(1, Math.max(0, 1 - best / Math.max(ref.length, 1)));
}
