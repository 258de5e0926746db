import { readFileSync } from 'node:fs';

/**
 * Whisper tiny.en's vocabulary: token id -> text (port of training/voxkey_train/phrase_text.py `BpeVocab`).
 * Whisper's tokenizer is GPT-2's byte-level BPE: every token is a string of characters that each stand for
 * one byte (GPT-2's byte decoder, `bytesToUnicode` below), so decoding is: map ids to token strings, the
 * strings' characters to bytes, and read the bytes as UTF-8 (invalid sequences replaced by U+FFFD).
 * Special tokens (id >= 50256: end-of-text, start-of-transcript, languages, tasks, timestamps) are dropped.
 */

/** `<|endoftext|>`; every id from here on is a special token in Whisper's English vocabulary. */
export const WHISPER_FIRST_SPECIAL = 50256;
/** The vocabulary's file in the models folder: CTranslate2's vocabulary.txt, line i = token i (51,864 tokens). */
export const WHISPER_VOCABULARY_FILE = 'voxkey-whisper-tiny-en-vocabulary.txt';

/** The characters a digits-only decode may write besides digits (what Whisper puts between digits). */
const DIGIT_TOKEN_CHARS = /^[0-9 ,.\-]*$/;

/**
 * GPT-2's table, byte -> character: printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to
 * themselves, the other 68 bytes to U+0100 onwards, in byte order.
 */
export function bytesToUnicode(): string[] {
  const keep = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) table.push(String.fromCharCode(keep(b) ? b : 256 + extra++));
  return table;
}

/** Replaces invalid sequences like Python's errors="replace"; keeps a leading BOM, as Python's "utf-8" codec does. */
const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const BYTE_OF: ReadonlyMap<string, number> = new Map(
  bytesToUnicode().map((c, b) => [c, b] as const),
);
const CHAR_OF_BYTE = bytesToUnicode();
const UTF8_ENCODER = new TextEncoder();
/** GPT-2's pre-tokenizer: BPE never merges across these pieces (contractions, letters, numbers, other). */
const GPT2_PIECES = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

export class WhisperVocabulary {
  /** Token i's bytes; undefined for ids without a token (an empty line) and for special tokens. */
  private readonly bytes: (Uint8Array | undefined)[];
  /** Token strings as stored (byte-level characters), including the special tokens'. */
  readonly tokens: readonly string[];

  /**
   * From the token strings, index = id; an empty string is no token (as the Python skips empty lines).
   * Throws if an ordinary token (id < 50256) has a character outside GPT-2's byte table.
   */
  constructor(tokens: readonly string[]) {
    this.tokens = tokens;
    this.bytes = tokens.map((token, id) => {
      if (id >= WHISPER_FIRST_SPECIAL || token === '') return undefined;
      const out = new Uint8Array(token.length);
      for (let k = 0; k < token.length; k++) {
        const b = BYTE_OF.get(token[k]!);
        if (b === undefined)
          throw new Error(
            `vocabulary: token ${id} (${JSON.stringify(token)}) has a character outside the byte-level alphabet`,
          );
        out[k] = b;
      }
      return out;
    });
  }

  /** Ordinary token string -> id; an id is also the token's merge rank (GPT-2 numbers tokens in merge order). */
  private ranks?: Map<string, number>;

  /**
   * Text -> token ids, as Whisper's tokenizer (tiktoken's byte-level BPE over GPT-2's pieces): within each
   * piece, the adjacent pair whose join has the lowest rank is merged until no join is a token.
   */
  encode(text: string): number[] {
    const ranks = (this.ranks ??= new Map(
      this.tokens
        .slice(0, WHISPER_FIRST_SPECIAL)
        .map((token, id) => [token, id] as const)
        .filter(([token]) => token !== ''),
    ));
    const ids: number[] = [];
    for (const [piece] of text.matchAll(GPT2_PIECES)) {
      const parts = Array.from(UTF8_ENCODER.encode(piece), (b) => CHAR_OF_BYTE[b]!);
      for (;;) {
        let best = -1;
        let bestRank = Infinity;
        for (let i = 0; i + 1 < parts.length; i++) {
          const rank = ranks.get(parts[i]! + parts[i + 1]!);
          if (rank !== undefined && rank < bestRank) {
            bestRank = rank;
            best = i;
          }
        }
        if (best < 0) break;
        parts.splice(best, 2, parts[best]! + parts[best + 1]!);
      }
      for (const part of parts) {
        const id = ranks.get(part);
        if (id === undefined) throw new Error(`vocabulary: no token for ${JSON.stringify(part)}`);
        ids.push(id);
      }
    }
    return ids;
  }

  /** Number of ids (ordinary and special). */
  get size(): number {
    return this.tokens.length;
  }

  /**
   * Token ids -> text. Special tokens (>= 50256) and ids with no token (negative, past the end, empty line)
   * are skipped; the bytes are joined and read as UTF-8 with invalid sequences replaced.
   */
  decode(ids: Iterable<number | bigint>): string {
    const parts: Uint8Array[] = [];
    let length = 0;
    for (const raw of ids) {
      const id = Number(raw);
      if (!Number.isInteger(id) || id < 0 || id >= WHISPER_FIRST_SPECIAL) continue;
      const b = this.bytes[id];
      if (!b) continue;
      parts.push(b);
      length += b.length;
    }
    const joined = new Uint8Array(length);
    let at = 0;
    for (const p of parts) {
      joined.set(p, at);
      at += p.length;
    }
    return UTF8.decode(joined);
  }

  /**
   * One flag per id: tokens made only of digits, spaces and the separators Whisper writes between digits
   * (",", ".", "-"), with at least one digit: the vocabulary of a constrained digit-challenge decode
   * (Python `BpeVocab.digit_tokens`; 1,691 tokens in tiny.en's vocabulary). Special tokens are 0.
   */
  digitTokens(): Uint8Array {
    const mask = new Uint8Array(this.size);
    for (let id = 0; id < Math.min(this.size, WHISPER_FIRST_SPECIAL); id++) {
      if (!this.bytes[id]) continue;
      const text = this.decode([id]);
      mask[id] = /[0-9]/.test(text) && DIGIT_TOKEN_CHARS.test(text) ? 1 : 0;
    }
    return mask;
  }
}

/** Parse a vocabulary.txt's text: one token a line, line i = token i (a trailing newline adds no token). */
export function parseVocabulary(text: string): WhisperVocabulary {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return new WhisperVocabulary(lines);
}

/**
 * Load a vocabulary.txt (e.g. join(modelsDir, WHISPER_VOCABULARY_FILE); the repository's copy is
 * models/voxkey-whisper-tiny-en-vocabulary.txt).
 */
export function loadVocabulary(path: string): WhisperVocabulary {
  return parseVocabulary(readFileSync(path, 'utf8'));
}
