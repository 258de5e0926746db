/**
 * The normaliser for comparing phrases (port of training/voxkey_train/phrase_text.py `normalize`): a subset
 * of Whisper's EnglishTextNormalizer with one canonical form for numbers, every digit spelled as its own
 * word ("351", "3 5 1", "3-5-1" and "three five one" all become "three five one").
 *
 * Steps, in order: Unicode NFKC; lowercase; drop text in [brackets] and (parentheses) (Whisper's
 * "(upbeat music)", "[BLANK_AUDIO]"); "%" -> " percent "; "&" -> " and "; apostrophes (' and U+2019) dropped
 * between word characters ("don't" -> "dont"); every ASCII digit becomes " <word> "; every other character
 * that is not a letter or number (Unicode categories L*, N*) becomes a space; filler words (hmm, mm, mhm,
 * mmm, uh, um) removed; whitespace collapsed. Not done: spelling maps, "twenty one" <-> "21", currencies,
 * ordinals ("4th" -> "four th"); challenge texts avoid them.
 */

export const DIGIT_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
] as const;
export const FILLER_WORDS: ReadonlySet<string> = new Set(['hmm', 'mm', 'mhm', 'mmm', 'uh', 'um']);

const BRACKETS = /\[[^\]]*\]|\([^)]*\)/g;
/** Python's Unicode `\w` is [\p{L}\p{N}_] (str.isalnum() or "_"). */
const APOSTROPHE_IN_WORD = /(?<=[\p{L}\p{N}_])['\u2019](?=[\p{L}\p{N}_])/gu;
const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;

/** The normalised text: words of lowercase letters and numbers joined by single spaces ('' if none). */
export function normalizePhrase(text: string): string {
  const s = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(BRACKETS, ' ')
    .replaceAll('%', ' percent ')
    .replaceAll('&', ' and ')
    .replace(APOSTROPHE_IN_WORD, '');
  let out = '';
  for (const ch of s) {
    if (ch >= '0' && ch <= '9') out += ` ${DIGIT_WORDS[ch.charCodeAt(0) - 48]} `;
    else out += LETTER_OR_NUMBER.test(ch) ? ch : ' ';
  }
  return phraseWordsOf(out).join(' ');
}

/** The normalised text's words. */
export function phraseWords(text: string): string[] {
  return phraseWordsOf(normalizePhrase(text));
}

function phraseWordsOf(spaced: string): string[] {
  return spaced.split(' ').filter((w) => w !== '' && !FILLER_WORDS.has(w));
}
