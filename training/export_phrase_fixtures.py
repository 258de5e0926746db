#!/usr/bin/env python3
"""Write the phrase checker's reference fixtures for the engine's TypeScript port (issue 32): what
voxkey_train/phrase_text.py and the Python recogniser (training/voxkey_train/phrase_check.py) compute.

Usage (from repo root): $VOXKEY_VENV/bin/python training/export_phrase_fixtures.py
Writes packages/engine/test/fixtures/phrase-text/phrase-text.json with
- `decode`: seeded token-id sequences (ordinary, special and timestamp ids, byte tokens that form invalid UTF-8)
  and the text BpeVocab.decode gives;
- `normalize`: texts (corpus transcripts, Whisper-style outputs, digits, punctuation, brackets) and normalize();
- `matchScore`: (expected, heard, score);
- `recognise`: two dev clips (path under the data folder): the token ids and text the shipped encoder + decoder
  give with the clip padded with silence to 10 s (greedy, the model's suppress lists, cap 3 x words + 10).
"""
from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from phrase_check import MODEL_DIR, Recogniser, STEP, CROSS, max_new_tokens  # noqa: E402
from voxkey_train.audio_io import load_audio  # noqa: E402
from voxkey_train.phrase_text import BpeVocab, match_score, normalize  # noqa: E402
from voxkey_train.pretrained import DATA_DIR, MODELS, REPO  # noqa: E402

OUT = REPO / "packages" / "engine" / "test" / "fixtures" / "phrase-text" / "phrase-text.json"
SERVE_MODE = "pad10"

TEXTS = [
    " Three, five, one.", "351", "3 5 1", "ZERO THREE-FIVE ONE", " I'm sure it's 100% right!", " (upbeat music)",
    "[BLANK_AUDIO]", " Hmm, uh, we call it bear.", " Don't stop — café déjà vu…", "  Multiple   spaces\tand\nlines ",
    " 4th of July, 1776", "O'Brien & Sons", " ｆｕｌｌｗｉｄｔｈ　ＡＢＣ　１２３", "I'M ON 2ND FLOOR", "",
]
SCORES = [
    ("three five one", "3 5 1"), ("three five one two", "351"), ("seven two nine four one eight", "7 2 9 4 1 8 8"),
    ("seven two nine four one eight", "seven two nine for one eight"), ("the economy is far from sound", "The economy is far from sound."),
    ("we call it bear", "We call it Bill."), ("a b", "x y z w"), ("", "anything"), ("one", ""),
]


def main() -> None:
    vocab = BpeVocab.from_vocabulary_txt(MODEL_DIR / "vocabulary.txt")
    rng = random.Random(32)
    sequences = [[rng.randrange(50256) for _ in range(rng.randrange(1, 16))] for _ in range(30)]
    sequences += [[50257, 50362, 314, 716, 845, 13, 50256], [50257, 50362, 50363, 40, 50400, 50256],
                  [171, 162, 228], [171, 162], [19526, 254, 25001, 121], [50256], []]
    with open(DATA_DIR / "texts.csv", newline="", encoding="utf-8") as f:
        english = [r["text"] for r in csv.DictReader(f) if r["lang"] == "en"]
    texts = TEXTS + rng.sample(english, 15)
    rec = Recogniser(MODELS / STEP, MODELS / CROSS)
    clips = [("speech/speechocean762/0001/000010011.mp3", "WE CALL IT BEAR"),
             ("speech/speechocean762/0001/000010035.mp3", "ZERO THREE FIVE ONE")]
    recognise = []
    for path, text in clips:
        ids = rec.decode(rec.encode(Recogniser.mel(load_audio(str(DATA_DIR / path)), SERVE_MODE)), max_new_tokens(text))
        heard = vocab.decode(ids)
        recognise.append({"path": path, "expected": text, "mode": SERVE_MODE, "maxNewTokens": max_new_tokens(text),
                          "tokens": ids, "text": heard, "matchScore": match_score(text, heard)})
    doc = {
        "description": "Phrase checker reference (training/export_phrase_fixtures.py; voxkey_train/phrase_text.py)",
        "decode": [{"ids": s, "text": vocab.decode(s)} for s in sequences],
        "normalize": [{"text": t, "normalized": normalize(t)} for t in texts],
        "matchScore": [{"expected": e, "heard": h, "score": match_score(e, h)} for e, h in SCORES],
        "recognise": recognise,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    for r in recognise:
        print(r["expected"], "->", repr(r["text"]), r["matchScore"])


if __name__ == "__main__":
    main()
