#!/usr/bin/env python3
"""Dev-set evaluation for Voxkey models (PyTorch checkpoints or exported ONNX).

  python3 -m training.voxkey_train.evaluate sv  --ckpt training/checkpoints/speaker_ecapa256.pt  --out training/results/sv-ecapa256.json
  python3 -m training.voxkey_train.evaluate sv  --onnx models/voxkey-speaker-v2.onnx --out ...
  python3 -m training.voxkey_train.evaluate cm  --ckpt training/checkpoints/spoof_lcnn.pt --out training/results/cm-....json

SV: EER, minDCF(P_target=0.01, C_miss=C_fa=1), Cllr (after the logistic calibration
fitted on the same dev trials - optimistic; the calibration itself is fitted here),
per corpus, and commonvoice same-language vs cross-language non-targets.
CM: EER overall, per corpus and per attack (each attack's spoofs vs all bona fide),
including the held-out attacks festival and yourtts-vc.
ONNX models are run with onnxruntime-node (training/work/ort) when available,
otherwise with onnx.reference (slow).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import time

import numpy as np
import torch

from .data import Cache, data_dir_arg
from .features import compute_fbank, energy_vad_concat
from . import metrics as M
from .families import family_of

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # training/

HELDOUT = ("festival", "yourtts-vc", "seed-tts")


def read_csv(p):
    with open(p) as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------------ SV
def sv_embed_torch(model, cache, paths):
    model.eval()
    out = {}
    with torch.no_grad():
        for p in paths:
            x = energy_vad_concat(cache.wav(cache.by_path[p]))
            out[p] = model(compute_fbank(x).unsqueeze(0))[0].numpy()
    return out


def sv_feats(cache, paths):
    return {p: compute_fbank(energy_vad_concat(cache.wav(cache.by_path[p]))).numpy() for p in paths}


def sv_score(embs, trials):
    s = []
    for t in trials:
        a, b = embs[t["enrol"]], embs[t["test"]]
        s.append(float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9)))
    return np.array(s)


def sv_report(scores, trials, cache, calib=None):
    lab = np.array([int(t["target"]) for t in trials])
    corp = np.array([cache.rows[cache.by_path[t["enrol"]]]["corpus"] for t in trials])
    corp2 = np.array([cache.rows[cache.by_path[t["test"]]]["corpus"] for t in trials])
    lang_same = np.array(["/" not in t["lang"] for t in trials])
    if calib is None:
        calib = M.fit_logistic(scores, lab, balanced=True)
    a, b = calib
    llr = a * scores + b

    def block(mask):
        if not mask.any():  # a corpus with no same-corpus trials (e.g. a spoof demo's few clips)
            return {"trials": 0, "targets": 0}
        e, thr = M.eer(scores[mask], lab[mask])
        return {"trials": int(mask.sum()), "targets": int(lab[mask].sum()), "eer": e, "eerThresholdCosine": thr,
                "minDcf01": M.min_dcf(scores[mask], lab[mask], 0.01),
                "cllr": M.cllr(llr[mask], lab[mask])}

    res = {"pooled": block(np.ones(len(lab), bool))}
    same = corp == corp2
    for c in sorted(set(corp)):
        res[f"corpus:{c}"] = block((corp == c) & same)
    res["cross-corpus-nontargets+all-targets"] = block((lab == 1) | ~same)
    cv = (corp == "commonvoice") & same
    res["commonvoice:same-lang-nontargets"] = block(cv & ((lab == 1) | lang_same))
    res["commonvoice:cross-lang-nontargets"] = block(cv & ((lab == 1) | ~lang_same))
    ms = 1 / (1 + np.exp(-llr))
    res["calibration"] = {"type": "logistic", "a": a, "b": b, "note": "match_score = sigmoid(a*cosine+b), fitted on dev trials, classes weighted equally"}
    res["matchScoreBands"] = {
        "target_above_0.85": float((ms[lab == 1] > 0.85).mean()), "nontarget_above_0.85": float((ms[lab == 0] > 0.85).mean()),
        "target_below_0.5": float((ms[lab == 1] < 0.5).mean()), "nontarget_below_0.5": float((ms[lab == 0] < 0.5).mean()),
    }
    # thresholds: EER point, and FAR ~1%
    e, thr_eer = M.eer(scores, lab)
    non = np.sort(scores[lab == 0])
    thr_far1 = float(non[int(np.ceil(0.99 * len(non))) - 1])
    far1 = {"cosine": thr_far1, "matchScore": float(1 / (1 + np.exp(-(a * thr_far1 + b)))),
            "frr": float((scores[lab == 1] <= thr_far1).mean()), "far": float((scores[lab == 0] > thr_far1).mean())}
    res["operatingPoints"] = {
        "eer": {"cosine": thr_eer, "matchScore": float(1 / (1 + np.exp(-(a * thr_eer + b))))},
        "far1pct": far1,
    }
    return res


def sv_eval_model_torch(model, data_dir, cache=None):
    cache = cache or Cache()
    trials = read_csv(os.path.join(data_dir, "trials", "sv-dev.csv"))
    paths = sorted({t["enrol"] for t in trials} | {t["test"] for t in trials})
    embs = sv_embed_torch(model, cache, paths)
    s = sv_score(embs, trials)
    return sv_report(s, trials, cache)


# ------------------------------------------------------------------ ONNX runner
ORT_JS = r"""
const ort = require(process.argv[2]);
const fs = require('fs');
(async () => {
  const sess = await ort.InferenceSession.create(process.argv[3], {intraOpNumThreads: 1, interOpNumThreads: 1});
  const req = JSON.parse(fs.readFileSync(process.argv[4]));
  const buf = fs.readFileSync(process.argv[5]);
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const out = []; let t0 = Date.now();
  for (const it of req.items) {
    const data = all.slice(it.off, it.off + it.shape.reduce((a, b) => a * b, 1));
    const r = await sess.run({[req.input]: new ort.Tensor('float32', data, it.shape)});
    out.push(Array.from(r[req.output].data));
  }
  fs.writeFileSync(process.argv[6], JSON.stringify({out, ms: Date.now() - t0}));
})();
"""


def ort_node_path():
    p = os.path.join(HERE, "work", "ort", "node_modules", "onnxruntime-node")
    if os.path.isdir(p):
        return p
    p = os.path.join(os.path.dirname(HERE), "node_modules", "onnxruntime-node")
    return p if os.path.isdir(p) else None


def run_onnx(onnx_path, input_name, output_name, arrays):
    """arrays: list of float32 np arrays (each includes batch dim). Returns list of np outputs."""
    ortp = ort_node_path()
    if ortp is None:
        from onnx.reference import ReferenceEvaluator  # needs onnx >= 1.13
        sess = ReferenceEvaluator(onnx_path)
        return [np.asarray(sess.run(None, {input_name: x.astype(np.float32)})[0]) for x in arrays]
    wd = os.path.join(HERE, "work", "ortrun")
    os.makedirs(wd, exist_ok=True)
    items, off = [], 0
    with open(os.path.join(wd, "in.f32"), "wb") as f:
        for x in arrays:
            x = np.ascontiguousarray(x, dtype=np.float32)
            f.write(x.tobytes())
            items.append({"off": off, "shape": list(x.shape)})
            off += x.size
    with open(os.path.join(wd, "req.json"), "w") as f:
        json.dump({"input": input_name, "output": output_name, "items": items}, f)
    with open(os.path.join(wd, "run.cjs"), "w") as f:
        f.write(ORT_JS)
    subprocess.run(["node", os.path.join(wd, "run.cjs"), ortp, os.path.abspath(onnx_path),
                    os.path.join(wd, "req.json"), os.path.join(wd, "in.f32"), os.path.join(wd, "out.json")], check=True)
    with open(os.path.join(wd, "out.json")) as f:
        d = json.load(f)
    return [np.array(o, dtype=np.float32) for o in d["out"]], d["ms"]


# ------------------------------------------------------------------ CM
def cm_windows(x, win=64000, hop=32000):
    """Engine-style sliding windows: 4 s, 2 s hop; shorter clips repeat-padded."""
    if len(x) < win:
        x = np.tile(x, int(np.ceil(win / max(len(x), 1))))[:win]
    n = 1 + (len(x) - win) // hop
    return np.stack([x[i * hop: i * hop + win] for i in range(n)]).astype(np.float32)


def cm_report(scores, rows):
    lab = np.array([1 if r["kind"] == "bonafide" else 0 for r in rows])
    res = {}
    e, thr = M.eer(scores, lab)
    res["pooled"] = {"eer": e, "eerThresholdLogit": thr, "bonafide": int(lab.sum()), "spoof": int((1 - lab).sum())}
    bona = lab == 1
    for att in sorted({r["attack"] for r in rows if r["kind"] == "spoof"}):
        m = bona | np.array([r["attack"] == att for r in rows])
        res[f"attack:{att}"] = {"eer": M.eer(scores[m], lab[m])[0], "spoof": int((~bona & m).sum())}
    # fairest check: same-speaker corpora
    for c in ("yourtts-pt", "yourtts-adapt"):
        m = np.array([r["corpus"] == c for r in rows])
        res[f"corpus:{c}"] = {"eer": M.eer(scores[m], lab[m])[0], "n": int(m.sum())}
    # non-commonvoice bona fide only vs all spoof (is the CM just detecting commonvoice?)
    m = ~bona | np.array([r["corpus"] != "commonvoice" for r in rows])
    res["bonafide-non-commonvoice-vs-all-spoof"] = {"eer": M.eer(scores[m], lab[m])[0]}
    prob = 1 / (1 + np.exp(-scores))
    res["at_p0.5"] = {"bonafide_rejected": float((prob[bona] < 0.5).mean()), "spoof_accepted": float((prob[~bona] >= 0.5).mean())}
    held = ~bona & np.array([r["attack"] in ("festival", "yourtts-vc") for r in rows])
    res["heldout(festival+yourtts-vc)"] = {"eer": M.eer(scores[bona | held], lab[bona | held])[0]}
    held = ~bona & np.array([r["attack"] in HELDOUT for r in rows])
    res["heldout(festival+yourtts-vc+seed-tts)"] = {"eer": M.eer(scores[bona | held], lab[bona | held])[0]}
    # attack families (families.py): each family's spoofs vs all bona fide (LOFO runs read the left-out one)
    fams = np.array([family_of(r["attack"]) if r["kind"] == "spoof" else "" for r in rows])
    for f in sorted(set(fams) - {""}):
        m = bona | (fams == f)
        res[f"family:{f}"] = {"eer": M.eer(scores[m], lab[m])[0], "spoof": int((fams == f).sum())}
    # bona fide flagged per real corpus at the pooled EER threshold and at the threshold that flags
    # at most 5% of the bona fide clips of every corpus with >= 10 of them
    corp = np.array([r["corpus"] for r in rows])
    big = [c for c in sorted(set(corp[bona])) if (bona & (corp == c)).sum() >= 10]
    thr5 = min(float(np.quantile(scores[bona & (corp == c)], 0.05)) for c in big)
    res["bonafideFlagged"] = {
        "thresholdPerCorpus5pctLogit": thr5,
        "atEerThreshold": {c: float((scores[bona & (corp == c)] < thr).mean()) for c in big},
        "atPerCorpus5pct": {c: float((scores[bona & (corp == c)] < thr5).mean()) for c in big},
        "spoofAcceptedAtPerCorpus5pct": float((scores[~bona] >= thr5).mean()),
    }
    return res


def cm_eval_torch(model, data_dir, cache=None):
    cache = cache or Cache()
    trials = read_csv(os.path.join(data_dir, "trials", "cm-dev.csv"))
    rows = [cache.rows[cache.by_path[t["path"]]] for t in trials]
    model.eval()
    scores = []
    with torch.no_grad():
        for t in trials:
            w = cm_windows(cache.wav(cache.by_path[t["path"]]))
            scores.append(float(model(torch.from_numpy(w)).mean()))
    return cm_report(np.array(scores), rows), np.array(scores)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["sv", "cm"])
    data_dir_arg(ap)
    ap.add_argument("--ckpt")
    ap.add_argument("--onnx")
    ap.add_argument("--out")
    a = ap.parse_args()
    data_dir = os.path.abspath(a.data_dir)
    cache = Cache()
    t0 = time.time()
    if a.task == "sv":
        if a.ckpt:
            from voxkey_train.models import build_model
            st = torch.load(a.ckpt, map_location="cpu")
            model = build_model(st["arch"]); model.load_state_dict(st["model"])
            res = sv_eval_model_torch(model, data_dir, cache)
            res["model"] = {"ckpt": os.path.relpath(a.ckpt, os.path.dirname(HERE)), "arch": st["arch"], "step": st["step"]}
        else:
            trials = read_csv(os.path.join(data_dir, "trials", "sv-dev.csv"))
            paths = sorted({t["enrol"] for t in trials} | {t["test"] for t in trials})
            feats = sv_feats(cache, paths)
            outs = run_onnx(a.onnx, "feats", "embs", [feats[p][None] for p in paths])
            if isinstance(outs, tuple):
                outs, ms = outs
            embs = {p: o.reshape(-1) for p, o in zip(paths, outs)}
            res = sv_report(sv_score(embs, trials), trials, cache)
            res["model"] = {"onnx": os.path.relpath(os.path.abspath(a.onnx), os.path.dirname(HERE))}
    else:
        trials = read_csv(os.path.join(data_dir, "trials", "cm-dev.csv"))
        rows = [cache.rows[cache.by_path[t["path"]]] for t in trials]
        if a.ckpt:
            from voxkey_train.spoof_model import build_cm
            st = torch.load(a.ckpt, map_location="cpu")
            model = build_cm(st["arch"]); model.load_state_dict(st["model"])
            res, _ = cm_eval_torch(model, data_dir, cache)
            res["model"] = {"ckpt": os.path.relpath(a.ckpt, os.path.dirname(HERE)), "arch": st["arch"], "step": st["step"]}
        else:
            arrs = [cm_windows(cache.wav(cache.by_path[t["path"]])) for t in trials]
            outs = run_onnx(a.onnx, "waveform", "logits", arrs)
            if isinstance(outs, tuple):
                outs, ms = outs
            res = cm_report(np.array([float(np.mean(o)) for o in outs]), rows)
            res["model"] = {"onnx": os.path.relpath(os.path.abspath(a.onnx), os.path.dirname(HERE))}
    res["evalSeconds"] = round(time.time() - t0, 1)
    js = json.dumps(res, indent=1)
    print(js)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(js)


if __name__ == "__main__":
    main()
