import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CHALLENGE_DIGITS,
  generateDigitChallenge,
  MAX_CHALLENGE_DIGITS,
} from '../src/phrase/challenge.js';
import {
  loopReadingLengths,
  loopTolerantMatchScore,
  matchScore,
  windowWordEditDistance,
  wordEditDistance,
} from '../src/phrase/match.js';
import { DIGIT_WORDS, normalizePhrase, phraseWords } from '../src/phrase/normalise.js';
import {
  bytesToUnicode,
  loadVocabulary,
  parseVocabulary,
  WHISPER_FIRST_SPECIAL,
  WHISPER_VOCABULARY_FILE,
} from '../src/phrase/vocabulary.js';

interface Fixtures {
  decode: { ids: number[]; text: string }[];
  normalize: { text: string; normalized: string }[];
  matchScore: { expected: string; heard: string; score: number }[];
  recognise: {
    path: string;
    expected: string;
    tokens: number[];
    text: string;
    matchScore: number;
  }[];
}

const fixtures = JSON.parse(
  readFileSync(join(import.meta.dirname, 'fixtures', 'phrase-text', 'phrase-text.json'), 'utf8'),
) as Fixtures;
const vocabularyPath = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'models',
  WHISPER_VOCABULARY_FILE,
);
const vocab = loadVocabulary(vocabularyPath);
const encodeFixtures = JSON.parse(
  readFileSync(join(import.meta.dirname, 'fixtures', 'phrase-text', 'phrase-encode.json'), 'utf8'),
) as { encode: { text: string; ids: number[] }[] };

describe('phrase text vs the Python reference (python -m training.voxkey_train.fixtures phrase, voxkey_train/phrase_text.py)', () => {
  it('has the fixtures', () => {
    expect(fixtures.decode.length).toBeGreaterThanOrEqual(30);
    expect(fixtures.normalize.length).toBeGreaterThanOrEqual(15);
    expect(fixtures.matchScore.length).toBeGreaterThanOrEqual(9);
    expect(fixtures.recognise).toHaveLength(2);
  });

  it('decodes every fixture token sequence to the same text', () => {
    for (const { ids, text } of fixtures.decode)
      expect(vocab.decode(ids), JSON.stringify(ids)).toBe(text);
  });

  it("encodes every fixture text to the wheel tokenizer's ids (python -m training.voxkey_train.fixtures phrase-encode)", () => {
    expect(encodeFixtures.encode.length).toBeGreaterThanOrEqual(200);
    for (const { text, ids } of encodeFixtures.encode)
      expect(vocab.encode(text), JSON.stringify(text)).toEqual(ids);
  });

  it('decodes what it encodes', () => {
    for (const { text } of encodeFixtures.encode)
      expect(vocab.decode(vocab.encode(text))).toBe(text);
  });

  it('normalises every fixture text the same way', () => {
    for (const { text, normalized } of fixtures.normalize)
      expect(normalizePhrase(text), JSON.stringify(text)).toBe(normalized);
  });

  it('gives the same match score for every fixture pair (exactly)', () => {
    for (const { expected, heard, score } of fixtures.matchScore)
      expect(matchScore(expected, heard), `${expected} | ${heard}`).toBe(score);
  });

  it("decodes the two recognised clips' token ids to the Python's text, with the same match score", () => {
    for (const clip of fixtures.recognise) {
      const heard = vocab.decode(clip.tokens);
      expect(heard, clip.path).toBe(clip.text);
      expect(matchScore(clip.expected, heard), clip.path).toBe(clip.matchScore);
    }
    expect(vocab.decode(fixtures.recognise[1]!.tokens)).toBe(' 0.3.5.1');
    expect(normalizePhrase(' 0.3.5.1')).toBe('zero three five one');
  });
});

describe('vocabulary', () => {
  it('is the wheel file, byte for byte: 51,864 tokens, <|endoftext|> at 50256', () => {
    expect(createHash('sha256').update(readFileSync(vocabularyPath)).digest('hex')).toBe(
      'ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf',
    );
    expect(vocab.size).toBe(51864);
    expect(vocab.tokens[WHISPER_FIRST_SPECIAL]).toBe('<|endoftext|>');
    expect(vocab.tokens[50257]).toBe('<|startoftranscript|>');
    expect(vocab.tokens[51863]).toBe('<|30.00|>');
  });

  it("GPT-2's byte table maps the 256 bytes to 256 distinct characters", () => {
    const table = bytesToUnicode();
    expect(new Set(table).size).toBe(256);
    expect(table[0x41]).toBe('A');
    expect(table[0x20]).toBe('\u0120'); // 'Ġ', the space marker
    expect(table[0x0a]).toBe('\u010a');
    expect(table[0xad]).toBe(String.fromCharCode(0x100 + 67)); // the 68th byte moved, the last one
  });

  it('skips special tokens (from 50256, end-of-text included), timestamps and ids with no token', () => {
    expect(vocab.decode([50257, 50362, 40, 716, 50256])).toBe('I am');
    expect(vocab.decode([50256])).toBe('');
    expect(vocab.decode([50363, 40, 51863])).toBe('I');
    expect(vocab.decode([-1, 40, 1e9, 716, 1.5, Number.NaN])).toBe('I am');
    expect(vocab.decode([])).toBe('');
  });

  it('takes int64 ids (bigint) as an ONNX decoder gives them', () => {
    expect(vocab.decode(BigInt64Array.from([50257n, 775n, 869n, 340n, 3941n, 13n, 50256n]))).toBe(
      ' We call it Bill.',
    );
  });

  it('replaces invalid UTF-8 like Python (maximal subparts), and joins multi-token characters', () => {
    expect(vocab.decode([171, 162])).toBe('\ufffd\ufffd');
    expect(vocab.decode([19526, 254, 25001, 121])).toBe('你好');
  });

  it("marks the digits-only decode's tokens: 1,691, as phrase-check.md", () => {
    const mask = vocab.digitTokens();
    expect(mask).toHaveLength(vocab.size);
    const ids = [...mask].flatMap((on, id) => (on ? [id] : []));
    expect(ids).toHaveLength(1691);
    for (const id of ids) expect(vocab.decode([id])).toMatch(/^[0-9 ,.-]*[0-9][0-9 ,.-]*$/);
    expect(mask[vocab.tokens.indexOf('Ġ3')]).toBe(1);
    expect(mask[13]).toBe(0); // '.' alone has no digit
    expect(mask[WHISPER_FIRST_SPECIAL]).toBe(0);
  });

  it('parses CRLF copies and rejects a token outside the byte alphabet', () => {
    expect(parseVocabulary('A\r\nĠB\r\n').decode([0, 1])).toBe('A B');
    expect(parseVocabulary('A\nĠB\n').size).toBe(2);
    expect(() => parseVocabulary('A\n\u4f60\n')).toThrow(/token 1/);
  });
});

describe('normalisation edge cases', () => {
  it('canonicalises digits written as numerals, separated or as words, to one word per digit', () => {
    const forms = [
      'four seven one',
      '471',
      '4 7 1',
      '4-7-1',
      '4.7.1',
      '4, 7, 1.',
      'Four, seven, one!',
      'FOUR SEVEN 1',
      '４７１',
    ];
    for (const form of forms) expect(normalizePhrase(form), form).toBe('four seven one');
    expect(normalizePhrase('10')).toBe('one zero');
  });

  it('drops brackets, fillers and apostrophes inside words; keeps non-ASCII letters', () => {
    expect(normalizePhrase(' [BLANK_AUDIO] Um, (coughs) we’re here, mhm.')).toBe('were here');
    expect(normalizePhrase("'quoted' rock 'n' roll")).toBe('quoted rock n roll');
    expect(normalizePhrase('Ünïcödé ÇA')).toBe('ünïcödé ça');
    expect(phraseWords('  ')).toEqual([]);
  });
});

describe('match score edge cases', () => {
  const six = 'four seven one nine zero two';

  it('is 0 for an empty transcript, 1 for an exact one in any digit form', () => {
    expect(matchScore(six, '')).toBe(0);
    expect(matchScore(six, '[BLANK_AUDIO]')).toBe(0);
    expect(matchScore(six, '471902')).toBe(1);
    expect(matchScore(six, ' 4 7 1 9 0 2.')).toBe(1);
    expect(matchScore(six, 'Four, seven, one, nine, zero, two.')).toBe(1);
    expect(matchScore('', '')).toBe(1); // nothing expected, nothing heard: distance 0 over max(0, 1)
  });

  it('counts substitutions, deletions and extra words (1 each), clipped at 0', () => {
    expect(matchScore(six, '471903')).toBeCloseTo(5 / 6, 15);
    expect(matchScore(six, '47190')).toBeCloseTo(5 / 6, 15);
    expect(matchScore(six, 'uh the code is 471902')).toBeCloseTo(1 - 3 / 6, 15); // "the code is"; "uh" is a filler
    expect(matchScore(six, '4719022')).toBeCloseTo(5 / 6, 15);
    expect(matchScore('one', 'two three four five')).toBe(0);
    // the recommended pass at 0.66: 2 of 6 digits wrong passes, 3 do not
    expect(matchScore(six, '471988')).toBeGreaterThanOrEqual(0.66);
    expect(matchScore(six, '471888')).toBeLessThan(0.66);
  });

  it("penalises Whisper's repetition loops, unless scored against the best window", () => {
    const loop =
      'four seven one nine zero two four seven one nine zero two four seven one nine zero two';
    expect(matchScore(six, loop)).toBe(0);
    expect(matchScore(six, loop, { window: true })).toBe(1);
    expect(matchScore('we call it bear', 'We call it bear. We call it bear.')).toBe(0);
    expect(matchScore('we call it bear', 'So we call it Bill, okay', { window: true })).toBe(0.75);
  });

  it('forgives a trailing repetition loop, and nothing else', () => {
    const kept = (t: string) => {
      const words = t.split(' ');
      return loopReadingLengths(words).map((n) => words.slice(0, n).join(' '));
    };
    expect(kept('it is a good point it is a good point it is a')).toContain('it is a good point');
    // the budget may cut the last word short
    expect(kept('long way to run long way to run long wa')).toContain('long way to run');
    expect(kept('firefox firefox firefox')).toEqual([
      'firefox',
      'firefox firefox',
      'firefox firefox firefox',
    ]);
    expect(kept('possible for me to me to me to me')).toContain('possible for me to');
    expect(kept('the cat sat on the mat')).toEqual(['the cat sat on the mat']);
    expect(loopReadingLengths([])).toEqual([0]);

    expect(loopTolerantMatchScore('one zero one zero', '1 0 1 0')).toBe(1);
    expect(loopTolerantMatchScore('one zero one zero', '1 0 1 0 1 0 1')).toBe(1);
    // no better than the plain score when there is no loop; words around the phrase still cost
    expect(loopTolerantMatchScore('we call it bear', 'So we call it Bill, okay')).toBe(
      matchScore('we call it bear', 'So we call it Bill, okay'),
    );
    expect(loopTolerantMatchScore('we call it bear', 'We call it bear. And more.')).toBe(0.5);
  });

  it('edit distances: Levenshtein on words, and the window form frees words around the match', () => {
    expect(wordEditDistance([], [])).toBe(0);
    expect(wordEditDistance(['a'], [])).toBe(1);
    expect(wordEditDistance([], ['a', 'b'])).toBe(2);
    expect(wordEditDistance(['a', 'b', 'c'], ['a', 'c', 'd'])).toBe(2);
    expect(windowWordEditDistance(['b', 'c'], ['a', 'b', 'c', 'd'])).toBe(0);
    expect(windowWordEditDistance(['b', 'c'], [])).toBe(2);
    expect(windowWordEditDistance([], ['a'])).toBe(0);
  });
});

describe('digit challenge', () => {
  it('draws 6 digits by default, written as digit words, whose normalised form is itself and the digits', () => {
    for (let k = 0; k < 50; k++) {
      const c = generateDigitChallenge();
      expect(c.digits).toMatch(/^[0-9]{6}$/);
      const words = c.text.split(' ');
      expect(words).toHaveLength(DEFAULT_CHALLENGE_DIGITS);
      for (const w of words) expect(DIGIT_WORDS).toContain(w);
      expect(
        words.map((w) => DIGIT_WORDS.indexOf(w as (typeof DIGIT_WORDS)[number])).join(''),
      ).toBe(c.digits);
      expect(c.expected).toBe(c.text);
      expect(normalizePhrase(c.text)).toBe(c.expected);
      expect(normalizePhrase(c.digits)).toBe(c.expected);
      expect(matchScore(c.expected, c.text)).toBe(1);
      expect(matchScore(c.expected, c.digits)).toBe(1);
    }
  });

  it('takes other lengths and rejects bad ones', () => {
    expect(generateDigitChallenge(1).text.split(' ')).toHaveLength(1);
    expect(generateDigitChallenge(MAX_CHALLENGE_DIGITS).digits).toHaveLength(MAX_CHALLENGE_DIGITS);
    for (const bad of [0, -1, 2.5, Number.NaN, MAX_CHALLENGE_DIGITS + 1])
      expect(() => generateDigitChallenge(bad)).toThrow(RangeError);
  });

  it('two draws differ (a 20-digit collision has probability 1e-20) and digits are spread over 0-9', () => {
    expect(generateDigitChallenge(20).digits).not.toBe(generateDigitChallenge(20).digits);
    const draws = new Set(Array.from({ length: 20 }, () => generateDigitChallenge().digits));
    expect(draws.size).toBeGreaterThan(1); // all 20 six-digit draws equal: probability 1e-114
    const counts = new Array<number>(10).fill(0);
    for (let k = 0; k < 1000; k++)
      for (const d of generateDigitChallenge().digits) counts[Number(d)]!++;
    // 6,000 digits, 600 expected each (sd 23): outside 450-750 has probability below 1e-9
    for (const n of counts) {
      expect(n).toBeGreaterThan(450);
      expect(n).toBeLessThan(750);
    }
  });
});
