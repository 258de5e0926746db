#!/usr/bin/env python3
"""Deepfake-check evaluation on dev as the engine scores it, with both operating points (issue 25).

  $VOXKEY_VENV/bin/python -m training.voxkey_train.spoof_v4.evaluate --onnx models/voxkey-spoof-v3.onnx --out training/results/cm-v4-eval-voxkey-spoof-v3.json
  $VOXKEY_VENV/bin/python -m training.voxkey_train.spoof_v4.evaluate --ckpt <training checkpoint> --gen-families gen:piper --out ...
  $VOXKEY_VENV/bin/python -m training.voxkey_train.spoof_v4.evaluate --bench models/voxkey-spoof-v3.onnx models/voxkey-spoof-v4.onnx

--bench: the cost of the deepfake check for a 5 s clip on one core (onnxruntime, one thread, engine windows:
2 x 4 s): the median and p90 of 200 runs per model, interleaved so that machine load hits both alike.

Scoring mirrors packages/engine/src/spoof.ts: the whole decoded clip (no VAD), 4 s windows with a 2 s hop, a
last window aligned to the end when the tail is >= 0.5 s, clips shorter than 4 s repeat-padded; the mean
window logit is logit P(bona fide). ONNX files run in Python onnxruntime (one thread).
Thresholds (P(bona fide) below which audio is flagged) use the engine's rule (`npm run eval --
--write-spoof-threshold`): the highest threshold that flags at most a share of the real dev clips of EVERY
corpus with >= 10 real clips and of the smaller corpora pooled, rounded down to 1e-6:
  verification (defaultThreshold): 3% (issue 25's target; the v3 rule was 5%, also reported)
  enrolment (enrolmentThreshold): 0.5%
Per family: EER of the family's dev spoofs vs all dev bona fide, and the share of its spoofs accepted at each
threshold. --gen-families: also score the generated clips of those families (spoof_v4/gen.py, train speakers'
speech; clean and channel versions) against all dev bona fide: the held-out check for a generated family.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import time

import numpy as np

from ..data import WORK, Cache, data_dir_arg
from ..families import family_of
from .. import metrics as M

WIN, HOP = 64000, 32000
SHARES = {"verification3pct": 0.03, "verification5pct": 0.05, "enrolment0.5pct": 0.005}


def engine_windows(x):
    if len(x) <= WIN:
        return np.tile(x, int(np.ceil(WIN / max(len(x), 1))))[None, :WIN].astype(np.float32)
    starts = list(range(0, len(x) - WIN + 1, HOP))
    last = len(x) - WIN
    if starts[-1] < last and last - starts[-1] >= HOP // 4:
        starts.append(last)
    return np.stack([x[s: s + WIN] for s in starts]).astype(np.float32)


def scorer(a):
    if a.onnx:
        import onnxruntime as ort
        so = ort.SessionOptions(); so.intra_op_num_threads = a.threads; so.inter_op_num_threads = 1
        s = ort.InferenceSession(a.onnx, so, providers=["CPUExecutionProvider"])
        return lambda w: float(np.mean(s.run(None, {"waveform": w})[0]))
    import torch
    from ..spoof_model import build_cm
    torch.set_num_threads(a.threads)
    st = torch.load(a.ckpt, map_location="cpu", weights_only=False)  # our own checkpoint
    m = build_cm(st["arch"]); m.load_state_dict(st["model"]); m.eval()

    def f(w):
        with torch.no_grad():
            return float(m(torch.from_numpy(w)).mean())
    return f


def threshold(scores_by_group, share):
    thr = np.inf
    for xs in scores_by_group.values():
        xs = np.sort(xs)
        thr = min(thr, xs[int(np.floor(share * len(xs) + 1e-9))])
    p = np.floor(1 / (1 + np.exp(-thr)) * 1e6) / 1e6
    return float(p)


def bench(paths):
    """Median and p90 ms of the engine windows of a 5 s clip per model (20 warm-up runs, then 200)."""
    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
    sess = {p: ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]) for p in paths}
    w = engine_windows((np.random.default_rng(0).standard_normal(80000) * 0.1).astype(np.float32))
    ts = {p: [] for p in sess}
    for i in range(220):
        for p, s in sess.items():
            t = time.perf_counter(); s.run(None, {"waveform": w}); dt = (time.perf_counter() - t) * 1000
            if i >= 20:
                ts[p].append(dt)
    for p, x in ts.items():
        print(f"{p}: windows {len(w)}, median {np.median(x):.2f} ms, p90 {np.percentile(x, 90):.2f} ms")


def main():
    ap = argparse.ArgumentParser()
    data_dir_arg(ap)
    ap.add_argument("--onnx"); ap.add_argument("--ckpt"); ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gen-families", default="")
    ap.add_argument("--spoofgen", default=os.path.join(WORK, "spoofgen-v4"))
    ap.add_argument("--bench", nargs="+", metavar="MODEL.onnx", help="only time these waveform-input models (see above)")
    ap.add_argument("--score-real-corpora", default="",
                    help="also score every other real clip of these corpora (a leave-one-corpus-out fold's held-out "
                    "clips; 'small': the corpora of families.SMALL_CORPORA_FOLD), into scores-<out>-held-out.npz")
    a = ap.parse_args()
    if a.bench:
        return bench(a.bench)
    data_dir = os.path.abspath(a.data_dir)
    t0 = time.time()
    cache = Cache()
    corpora: set[str] = set()
    if a.score_real_corpora:  # refused before any scoring
        from ..families import real_corpora_named
        try:
            corpora = real_corpora_named(a.score_real_corpora, cache.rows)
        except ValueError as e:
            ap.error(f"--score-real-corpora: {e}")
    with open(os.path.join(data_dir, "trials", "cm-dev.csv")) as f:
        trials = list(csv.DictReader(f))
    rows = [cache.rows[cache.by_path[t["path"]]] for t in trials]
    score = scorer(a)
    s = np.array([score(engine_windows(cache.wav(cache.by_path[t["path"]]))) for t in trials])
    lab = np.array([r["kind"] == "bonafide" for r in rows])
    corp = np.array([r["corpus"] for r in rows])
    fams = np.array([family_of(r["attack"]) if r["kind"] == "spoof" else "" for r in rows])
    res = {"model": a.onnx or a.ckpt, "trials": len(trials)}
    res["pooledEer"] = M.eer(s, lab.astype(int))[0]
    # the engine's groups for flagged real speech: corpora with >= 10 real dev clips, the rest pooled
    groups = {}
    for c in sorted(set(corp[lab])):
        m = lab & (corp == c)
        if m.sum() >= 10:
            groups[c] = s[m]
    small = lab & ~np.isin(corp, list(groups))
    if small.sum() >= 10:
        groups["other corpora with < 10 real clips each (pooled)"] = s[small]
    res["thresholds"] = {k: threshold(groups, v) for k, v in SHARES.items()}
    if a.gen_families:
        wave = np.load(os.path.join(a.spoofgen, "wave.npy"), mmap_mode="r")
        with open(os.path.join(a.spoofgen, "index.csv")) as f:
            idx = [r for r in csv.DictReader(f) if r["family"] in a.gen_families.split(",")]
        gs, gf = [], []
        for r in idx:
            for o, n in ((int(r["off"]), int(r["len"])), (int(r["ch_off"]), int(r["ch_len"]))):
                gs.append(score(engine_windows(np.asarray(wave[o: o + n], np.float32) / 32768.0)))
                gf.append(r["family"])
        s_all = np.concatenate([s, gs])
        lab_all = np.concatenate([lab, np.zeros(len(gs), bool)])
        fams_all = np.concatenate([fams, np.array(gf)])
    else:
        s_all, lab_all, fams_all = s, lab, fams
    ops = {k: np.log(p / (1 - p)) for k, p in res["thresholds"].items()}
    fam_res = {}
    for f in sorted(set(fams_all) - {""}):
        m = fams_all == f
        fam_res[f] = {"spoof": int(m.sum()), "eer": M.eer(s_all[lab_all | m], lab_all[lab_all | m].astype(int))[0],
                      **{f"acceptedAt_{k}": float((s_all[m] >= t).mean()) for k, t in ops.items()}}
    res["families"] = fam_res
    attacks = sorted({r["attack"] for r in rows if r["kind"] == "spoof"})
    res["attacks"] = {at: M.eer(s[lab | (np.array([r["attack"] for r in rows]) == at)],
                                lab[lab | (np.array([r["attack"] for r in rows]) == at)].astype(int))[0] for at in attacks}
    res["bonafideFlagged"] = {k: {g: float((xs < t).mean()) for g, xs in groups.items()} for k, t in ops.items()}
    res["bonafideClips"] = {g: int(len(xs)) for g, xs in groups.items()}
    res["spoofAccepted"] = {k: float((s[~lab] >= t).mean()) for k, t in ops.items()}
    res["evalSeconds"] = round(time.time() - t0, 1)
    np.save(os.path.join(WORK, "scores-" + os.path.basename(a.out or "x").replace(".json", ".npy")), s)
    if a.score_real_corpora:
        in_trials = {t["path"] for t in trials}
        held = [i for i, r in enumerate(cache.rows)
                if r["kind"] == "bonafide" and r["corpus"] in corpora and r["path"] not in in_trials]
        np.savez(os.path.join(WORK, "scores-" + os.path.basename(a.out or "x").replace(".json", "-held-out.npz")),
                 paths=np.array([cache.rows[i]["path"] for i in held]),
                 logits=np.array([score(engine_windows(cache.wav(i))) for i in held]))
    js = json.dumps(res, indent=1)
    print(js)
    if a.out:
        with open(a.out, "w") as f:
            f.write(js + "\n")


if __name__ == "__main__":
    main()
