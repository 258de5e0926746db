"""Kokoro as an unseen deepfake family: the shipped spoof models on gen_kokoro.py's clips vs the real dev clips.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.kokoro_unseen [--real 0] [--asr 20] [--dir DIR]

Scores (Python onnxruntime, one thread): voxkey-spoof-v5 on the Whisper tiny.en encoder's hidden states
(spoof_v5.hidden_states, the whole clip) and voxkey-spoof-v4 on the engine's band features
(spoof_model.SpecFrontEnd over equal 4-8 s segments, repeat-padded to 4 s, mean logit; as engine spoof.ts).
A clip is flagged when sigmoid(logit) < the model's threshold in models/manifest.json (defaultThreshold:
verification, enrolmentThreshold: enrolment). Real: every bona fide dev clip of manifest.csv (MP3), or a
seeded subset of --real of them. EER: Kokoro clips vs those real clips.
Intelligibility: Whisper tiny.en (the CTranslate2 model of phrase_check.MODEL_DIR, greedy) on --asr seeded
Kokoro clips; WER = word edit distance / reference words (phrase_text normalisation), summed over the clips.

Per-clip scores are kept in DIR/scores.csv (a rerun only scores new clips). Writes training/results/kokoro-unseen.json.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import metrics
from .gen_kokoro import OUT
from .phrase_check import MODEL_DIR
from .phrase_text import BpeVocab, edit_distance, match_score, words
from .pretrained import DATA_DIR, MODELS, REPO, ort_session
from .spoof_v5 import encoder_session, hidden_states, load
from .whisper import CHUNK_SECONDS, SAMPLE_RATE, log_mel

RESULTS = REPO / "training" / "results" / "kokoro-unseen.json"
SEED = 30
WINDOW, MAX_SEGMENT = 4 * SAMPLE_RATE, 8 * SAMPLE_RATE


def manifest_entry(name: str) -> dict:
    return next(m for m in json.loads((MODELS / "manifest.json").read_text())["models"] if m["name"] == name)


def segments(x: np.ndarray) -> list[np.ndarray]:
    """Equal segments of 4-8 s that do not overlap; a clip up to 4 s repeated to fill 4 s."""
    if len(x) <= WINDOW:
        return [np.resize(x, WINDOW)]
    count = -(-len(x) // MAX_SEGMENT)
    length = len(x) // count
    return [x[i * length:(i + 1) * length] for i in range(count)]


class Scorers:
    def __init__(self):
        import torch
        from .spoof_model import SpecFrontEnd
        self.torch = torch
        self.front = SpecFrontEnd().eval()
        self.encoder = encoder_session()
        self.v5 = ort_session(MODELS / manifest_entry("voxkey-spoof-v5")["file"])
        self.v4 = ort_session(MODELS / manifest_entry("voxkey-spoof-v4")["file"])

    def logits(self, x: np.ndarray) -> dict[str, float]:
        v5 = float(self.v5.run(["logit"], {"hidden_states": hidden_states(self.encoder, x)[None]})[0].reshape(-1)[0])
        with self.torch.no_grad():
            feats = self.front(self.torch.from_numpy(np.stack(segments(x)).astype(np.float32))).numpy()
        v4 = float(np.mean(self.v4.run(["logits"], {"features": feats})[0]))
        return {"voxkey-spoof-v5": v5, "voxkey-spoof-v4": v4}


def real_dev(limit: int) -> list[str]:
    with open(DATA_DIR / "manifest.csv", newline="", encoding="utf-8") as f:
        paths = sorted(r["path"] for r in csv.DictReader(f)
                       if r["split"] == "dev" and r["kind"] == "bonafide" and not r["attack"])
    if limit and limit < len(paths):
        paths = sorted(np.random.default_rng(SEED).choice(paths, limit, replace=False).tolist())
    return paths


def score_all(clips: dict[str, Path], cache: Path) -> dict[str, dict[str, float]]:
    done: dict[str, dict[str, float]] = {}
    if cache.exists():
        with open(cache, newline="") as f:
            done = {r["key"]: {k: float(v) for k, v in r.items() if k != "key"} for r in csv.DictReader(f)}
    todo = [k for k in clips if k not in done]
    if todo:
        scorers, t0 = Scorers(), time.time()
        new = not cache.exists()
        with open(cache, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["key", "voxkey-spoof-v5", "voxkey-spoof-v4"])
            if new:
                w.writeheader()
            for i, key in enumerate(todo):
                done[key] = scorers.logits(load(clips[key]))
                w.writerow({"key": key, **done[key]})
                if i % 100 == 0:
                    f.flush()
                    print(f"scored {i + 1}/{len(todo)}, {time.time() - t0:.0f} s", flush=True)
    return {k: done[k] for k in clips}


def transcribe(paths: list[Path]) -> list[str]:
    import ctranslate2
    model = ctranslate2.models.Whisper(str(MODEL_DIR), device="cpu", compute_type="float32", intra_threads=1)
    vocab = BpeVocab.from_tokenizer_json(MODEL_DIR / "tokenizer.json")
    ids = {t["content"]: t["id"] for t in json.loads((MODEL_DIR / "tokenizer.json").read_text())["added_tokens"]}
    prompt = [ids["<|startoftranscript|>"], ids["<|notimestamps|>"]]
    out = []
    for p in paths:
        x = load(p)[: CHUNK_SECONDS * SAMPLE_RATE]
        mel = log_mel(np.pad(x, (0, CHUNK_SECONDS * SAMPLE_RATE - len(x))))
        result = model.generate(ctranslate2.StorageView.from_array(np.ascontiguousarray(mel[None])), [prompt],
                                beam_size=1, max_length=120)
        out.append(vocab.decode([t for t in result[0].sequences_ids[0] if t < ids["<|endoftext|>"]]))
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=str(OUT), help="gen_kokoro.py's output folder")
    ap.add_argument("--real", type=int, default=0, help="seeded subset of real dev clips (0 = all)")
    ap.add_argument("--asr", type=int, default=20, help="Kokoro clips to transcribe (0 = none)")
    args = ap.parse_args()
    t0 = time.time()
    folder = Path(args.dir)
    with open(folder / "index.csv", newline="", encoding="utf-8") as f:
        index = list(csv.DictReader(f))
    real = real_dev(args.real)
    clips = {"kokoro:" + r["path"]: folder / r["path"] for r in index} | {"real:" + p: DATA_DIR / p for p in real}
    scores = score_all(clips, folder / "scores.csv")
    is_real = np.array([k.startswith("real:") for k in scores])
    result = {
        "command": " ".join(["python -m training.voxkey_train.kokoro_unseen", *sys.argv[1:]]),
        "generation": "python -m training.voxkey_train.gen_kokoro --n %d" % len(index),
        "date": datetime.date.today().isoformat(),
        "loadAverage": [round(v, 2) for v in os.getloadavg()],
        "kokoroClips": len(index),
        "kokoroSeconds": round(sum(float(r["duration_s"]) for r in index), 1),
        "realDevClips": int(is_real.sum()),
        "realDevSelection": f"seeded subset, numpy default_rng({SEED})" if args.real else "every bona fide dev clip (MP3)",
        "rule": "flagged when sigmoid(logit) < threshold; pass = not flagged; EER of Kokoro (negative) vs real dev (positive)",
        "models": {},
    }
    for name in ("voxkey-spoof-v5", "voxkey-spoof-v4"):
        entry = manifest_entry(name)
        logit = np.array([s[name] for s in scores.values()])
        p = sigmoid(logit)
        fake = p[~is_real]
        eer, thr = metrics.eer(logit, is_real.astype(int))
        result["models"][name] = {
            "defaultThreshold": entry["defaultThreshold"],
            "enrolmentThreshold": entry["enrolmentThreshold"],
            "kokoroPassingAtVerification": round(float(np.mean(fake >= entry["defaultThreshold"])), 4),
            "kokoroPassingAtEnrolment": round(float(np.mean(fake >= entry["enrolmentThreshold"])), 4),
            "realFlaggedAtVerification": round(float(np.mean(p[is_real] < entry["defaultThreshold"])), 4),
            "realFlaggedAtEnrolment": round(float(np.mean(p[is_real] < entry["enrolmentThreshold"])), 4),
            "eerKokoroVsRealDev": round(eer, 4),
            "eerThresholdProbability": float(sigmoid(np.array(thr))),
            "kokoroMedianBonafideProbability": float(np.median(fake)),
        }
        by_voice = {}
        for voice in sorted({r["voice_a"] for r in index}):
            mask = np.array([r["voice_a"] == voice and not r["voice_b"] for r in index])
            if mask.any():
                by_voice[voice] = round(float(np.mean(fake[mask] >= entry["defaultThreshold"])), 4)
        mixed = np.array([bool(r["voice_b"]) for r in index])
        by_voice["mixes"] = round(float(np.mean(fake[mixed] >= entry["defaultThreshold"])), 4)
        result["models"][name]["kokoroPassingAtVerificationBySingleVoice"] = by_voice
        print(name, json.dumps(result["models"][name]))
    if args.asr:
        picked = sorted(np.random.default_rng(SEED).choice(len(index), min(args.asr, len(index)), replace=False).tolist())
        heard = transcribe([folder / index[i]["path"] for i in picked])
        errors = sum(edit_distance(words(index[i]["text"]), words(h)) for i, h in zip(picked, heard))
        ref_words = sum(len(words(index[i]["text"])) for i in picked)
        result["whisperTinyEn"] = {
            "clips": len(picked),
            "wer": round(errors / ref_words, 4),
            "meanMatchScore": round(float(np.mean([match_score(index[i]["text"], h) for i, h in zip(picked, heard)])), 4),
            "decoding": "CTranslate2 Whisper tiny.en (phrase_check.MODEL_DIR), greedy, clip padded to 30 s",
            "examples": [{"path": index[i]["path"], "text": index[i]["text"], "heard": h} for i, h in zip(picked, heard)],
        }
        print(f"Whisper tiny.en on {len(picked)} Kokoro clips: WER {errors / ref_words:.3f}")
    result["wallSeconds"] = round(time.time() - t0, 1)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
