#!/usr/bin/env python3
"""Does a user channel alone make real speech look like a deepfake? (issue 25, item 2)

Puts a fixed sample of dev clips (real and spoofed; every k-th of trials/cm-dev.csv) through each user channel of
the generation stage (voxkey_train.channels: Opus, MP3, GSM, G.726, Speex; an ffmpeg encode/decode round trip back
to 16 kHz WAV) into a small data set outside the repository, scores it with the engine (`npm run eval`), and prints per
channel the share of real clips flagged at the default spoof model's verification and enrolment thresholds, the
share of spoofs that pass, and the EER.

  $VOXKEY_VENV/bin/python -m training.voxkey_train.channel_check prepare   # $VOXKEY_WORK/channel-dev (speech/, trials/, manifest.csv)
  npm run eval -- --cm $VOXKEY_WORK/channel-dev/trials/cm-channels.csv --out $TMPDIR/channel-eval.json --threads 2
  $VOXKEY_VENV/bin/python -m training.voxkey_train.channel_check report    # reads the eval's per-clip cache -> training/results/channel-check.json

Each "corpus" of the prepared set is a channel (`speech/<channel>/...`), so the eval's per-corpus table is per channel.
"""
from __future__ import annotations

import csv
import glob
import hashlib
import json
import math
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import audio_io as io
from . import metrics
from .channels import apply_channel
from .data import DATA_DIR, WORK

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = DATA_DIR
OUT = os.path.join(WORK, "channel-dev")
CHANNELS = ["none", "opus-6k", "opus-16k", "mp3-32k", "gsm", "g726-16k", "speex"]  # names of channels.CHANNELS
REAL_EVERY, SPOOF_EVERY = 14, 7


def sample():
    rows = list(csv.DictReader(open(os.path.join(DATA, "trials", "cm-dev.csv"))))
    real = [r for r in rows if r["label"] == "bonafide"][::REAL_EVERY]
    spoof = [r for r in rows if r["label"] == "spoof"][::SPOOF_EVERY]
    return real + spoof


def _one(job):
    row, name = job
    rel = f"speech/{name}/{row['path'][len('speech/'):]}"
    dst = os.path.join(OUT, rel)
    if name == "none":
        if not os.path.exists(dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(os.path.join(DATA, row["path"]), "rb") as f, open(dst, "wb") as g:
                g.write(f.read())
        return rel, row
    rel = rel.rsplit(".", 1)[0] + ".wav"
    dst = os.path.join(OUT, rel)
    if not os.path.exists(dst):
        x = io.load_audio(os.path.join(DATA, row["path"]))
        y = apply_channel(x, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        io.save_wav(dst + ".tmp", y)
        os.replace(dst + ".tmp", dst)
    return rel, row


def prepare(jobs=1):
    meta = {r["path"]: r for r in csv.DictReader(open(os.path.join(DATA, "manifest.csv")))}
    work = [(r, name) for r in sample() for name in CHANNELS]
    os.makedirs(os.path.join(OUT, "trials"), exist_ok=True)
    with ProcessPoolExecutor(jobs) as pool:
        done = list(pool.map(_one, work, chunksize=8))
    with open(os.path.join(OUT, "trials", "cm-channels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "label", "attack", "corpus", "source_corpus"])
        for rel, r in done:
            w.writerow([rel, r["label"], r["attack"], rel.split("/")[1], r["corpus"]])
    fields = list(next(iter(meta.values())).keys())
    with open(os.path.join(OUT, "manifest.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for rel, r in done:
            w.writerow({**meta[r["path"]], "path": rel, "corpus": rel.split("/")[1]})
    print(f"{len(done)} clips ({len(done) // len(CHANNELS)} per channel) in {OUT}")


def report():
    manifest = json.load(open(os.path.join(ROOT, "models", "manifest.json")))
    spoof_model = next(m for m in manifest["models"] if m["kind"] == "spoof" and m.get("default"))
    key = spoof_model["sha256"][:12]
    data_key = hashlib.sha1(OUT.encode()).hexdigest()[:8]
    caches = glob.glob(os.path.join(tempfile.gettempdir(), "voxkey-eval-cache", f"*-{key}-{data_key}.json"))
    if not caches:
        sys.exit(f"no eval cache for spoof model {spoof_model['name']} and {OUT}: run npm run eval first")
    cache = json.load(open(caches[0]))
    rows = list(csv.DictReader(open(os.path.join(OUT, "trials", "cm-channels.csv"))))
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    thr = {"verification": spoof_model["defaultThreshold"], "enrolment": spoof_model["enrolmentThreshold"]}
    out = {"spoofModel": spoof_model["name"], "thresholds": thr, "realEvery": REAL_EVERY, "spoofEvery": SPOOF_EVERY,
           "channels": {}}
    dev = list(csv.DictReader(open(os.path.join(DATA, "trials", "cm-dev.csv"))))
    real_per_corpus = {}
    for r in dev:
        if r["label"] == "bonafide":
            real_per_corpus[r["corpus"]] = real_per_corpus.get(r["corpus"], 0) + 1
    small = {c for c, n in real_per_corpus.items() if n < 10}  # the demo-page references, as the eval pools them
    print(f"| channel | real clips | real flagged (verification {thr['verification']}) | real refused (enrolment "
          f"{thr['enrolment']}) | of those, demo-page references | spoofs | spoofs passing verification | EER |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in CHANNELS:
        sel = [r for r in rows if r["corpus"] == name and r["path"] in cache]
        bona = [cache[r["path"]]["logit"] for r in sel if r["label"] == "bonafide"]
        demo = [cache[r["path"]]["logit"] for r in sel if r["label"] == "bonafide" and r["source_corpus"] in small]
        spoof = [cache[r["path"]]["logit"] for r in sel if r["label"] == "spoof"]
        c = {"real": len(bona), "spoof": len(spoof),
             "realFlaggedVerification": float(np.mean([b < logit(thr["verification"]) for b in bona])),
             "realRefusedEnrolment": float(np.mean([b < logit(thr["enrolment"]) for b in bona])),
             "demoReferences": len(demo),
             "flaggedDemoReferencesVerification": sum(b < logit(thr["verification"]) for b in demo),
             "refusedDemoReferencesEnrolment": sum(b < logit(thr["enrolment"]) for b in demo),
             "spoofPassingVerification": float(np.mean([s >= logit(thr["verification"]) for s in spoof])),
             "eer": metrics.eer(np.array(bona + spoof), np.array([1] * len(bona) + [0] * len(spoof)))[0]}
        out["channels"][name] = c
        print(f"| {name} | {c['real']} | {100 * c['realFlaggedVerification']:.1f}% | {100 * c['realRefusedEnrolment']:.1f}% | "
              f"{c['flaggedDemoReferencesVerification']} / {c['refusedDemoReferencesEnrolment']} of {c['demoReferences']} | "
              f"{c['spoof']} | {100 * c['spoofPassingVerification']:.1f}% | {100 * c['eer']:.1f}% |")
    path = os.path.join(ROOT, "training", "results", "channel-check.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"written {path}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "prepare"
    if what == "prepare":
        prepare(int(os.environ.get("JOBS", "1")))
    elif what == "report":
        report()
    else:
        sys.exit(__doc__)
