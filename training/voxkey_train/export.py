"""Export a trained checkpoint to ONNX (opset 17, dynamic axes), verify against PyTorch
(onnx.reference and onnxruntime-node when available), evaluate on dev, fit speaker calibration,
and write the model's manifest entry.

  /usr/bin/python3 -m training.voxkey_train.export speaker --ckpt training/checkpoints/speaker_ecapa256.pt --name voxkey-speaker-v1
  /usr/bin/python3 -m training.voxkey_train.export spoof   --ckpt training/checkpoints/spoof_lcnn-lfb64.pt --name voxkey-spoof-v1
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np
import torch

from .data import Cache, TRAIN_DIR, data_dir_arg
from . import update_manifest

ROOT = os.path.dirname(TRAIN_DIR)
sys.path.insert(0, TRAIN_DIR)
import evaluate as EV  # noqa: E402

TRAINING_DATA = ("Voxkey dev-data bundle (../shared/datasets, train split only): Mozilla Common Voice 6.1 sample (CC0-1.0), "
                 "LibriSpeech train-clean-100 sample (CC BY 4.0), EmoDB (research use only), VoxForge (GPL), "
                 "YourTTS demo samples incl. MLS/Common Voice speakers (CC BY-NC-ND 4.0 / CC BY 4.0), "
                 "VCTK-derived VoiceLoop/WORLD samples (CC BY-NC 4.0), Debian TTS output; plus locally generated "
                 "augmentation and spoofs. Several sources are non-commercial/research-only: see models/README.md.")


def sha256(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def verify(onnx_path, model, inp_name, out_name, inputs):
    import onnx
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    report = {"opset": int(m.opset_import[0].version)}
    with torch.no_grad():
        tout = [model(torch.from_numpy(x)).numpy() for x in inputs]
    try:  # onnx >= 1.13 only
        from onnx.reference import ReferenceEvaluator
        ref = ReferenceEvaluator(m)
        rout = [ref.run(None, {inp_name: x})[0] for x in inputs]
        report["onnxReferenceMaxAbsDiff"] = float(max(np.abs(a - b).max() for a, b in zip(tout, rout)))
    except ImportError:
        report["onnxReference"] = "unavailable (onnx < 1.13)"
    try:
        r = EV.run_onnx(onnx_path, inp_name, out_name, inputs)
        if isinstance(r, tuple):
            oout, ms = r
            report["onnxruntimeNodeMaxAbsDiff"] = float(max(np.abs(a.reshape(-1) - b.reshape(-1)).max() for a, b in zip(tout, oout)))
            report["onnxruntimeNodeTotalMs"] = ms
    except Exception as e:  # noqa: BLE001
        report["onnxruntimeNodeError"] = str(e)[:200]
    report["shapes"] = {str(list(x.shape)): list(o.shape) for x, o in zip(inputs, tout)}
    return report


def export_speaker(a):
    from .models import build_model
    st = torch.load(a.ckpt, map_location="cpu")
    model = build_model(st["arch"]); model.load_state_dict(st["model"]); model.eval()
    out = os.path.join(ROOT, "models", f"{a.name}.onnx")
    dummy = torch.randn(1, 300, 80)
    torch.onnx.export(model, dummy, out, input_names=["feats"], output_names=["embs"], opset_version=17,
                      dynamic_axes={"feats": {0: "B", 1: "T"}, "embs": {0: "B"}}, do_constant_folding=True)
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal((1, t, 80)).astype(np.float32) * 3 for t in (120, 500)]
    ver = verify(out, model, "feats", "embs", ins)
    print("verify", ver, flush=True)
    t0 = time.time()
    res = EV.sv_eval_model_torch(model, os.path.abspath(a.data_dir))
    res["model"] = {"name": a.name, "arch": st["arch"], "step": st["step"], "ckpt": os.path.relpath(a.ckpt, ROOT)}
    res["export"] = ver
    res["evalSeconds"] = round(time.time() - t0, 1)
    os.makedirs(os.path.join(TRAIN_DIR, "results"), exist_ok=True)
    with open(os.path.join(TRAIN_DIR, "results", f"sv-{a.name}.json"), "w") as f:
        json.dump(res, f, indent=1)
    cal = res["calibration"]
    thr = res["operatingPoints"][a.threshold_point]["matchScore"]
    p = res["pooled"]
    entry = {
        "name": a.name, "file": f"{a.name}.onnx", "sha256": sha256(out), "kind": "speaker", "bundled": True,
        "default": True,
        "input": {"name": "feats", "shape": [1, "T", 80], "features": "kaldi-fbank-80-cmn"},
        "output": {"name": "embs", "dim": 192},
        "calibration": {"type": "logistic", "a": round(cal["a"], 5), "b": round(cal["b"], 5)},
        "defaultThreshold": round(thr, 4),
        "thresholdNote": ("match_score at the dev EER operating point" if a.threshold_point == "eer"
                          else "match_score at FAR=1% on dev non-target trials"),
        "license": "Apache-2.0", "trainingData": TRAINING_DATA, "source": "trained by training/ in this repo",
        "architecture": f"{st['arch']} (AAM-softmax), {sum(q.numel() for q in model.parameters())/1e6:.2f}M params",
        "metrics": {"devEer": round(p["eer"], 4), "minDcf01": round(p["minDcf01"], 4), "cllr": round(p["cllr"], 4),
                    "devEerCommonVoiceSameLang": round(res["commonvoice:same-lang-nontargets"]["eer"], 4),
                    "evaluation": "trials/sv-dev.csv (17822 trials), training/results/" + f"sv-{a.name}.json"},
    }
    update_manifest.update([entry])
    print(json.dumps(entry, indent=1))


def export_spoof(a):
    from .spoof_model import build_cm
    st = torch.load(a.ckpt, map_location="cpu")
    model = build_cm(st["arch"]); model.load_state_dict(st["model"]); model.eval()
    out = os.path.join(ROOT, "models", f"{a.name}.onnx")
    dummy = torch.randn(2, 64000) * 0.1
    torch.onnx.export(model, dummy, out, input_names=["waveform"], output_names=["logits"], opset_version=17,
                      dynamic_axes={"waveform": {0: "B"}, "logits": {0: "B"}}, do_constant_folding=True)
    rng = np.random.default_rng(0)
    ins = [(rng.standard_normal((b, 64000)) * 0.1).astype(np.float32) for b in (1, 3)]
    ver = verify(out, model, "waveform", "logits", ins)
    print("verify", ver, flush=True)
    t0 = time.time()
    res, scores = EV.cm_eval_torch(model, os.path.abspath(a.data_dir))
    res["model"] = {"name": a.name, "arch": st["arch"], "step": st["step"], "ckpt": os.path.relpath(a.ckpt, ROOT)}
    res["export"] = ver
    res["evalSeconds"] = round(time.time() - t0, 1)
    with open(os.path.join(TRAIN_DIR, "results", f"cm-{a.name}.json"), "w") as f:
        json.dump(res, f, indent=1)
    # threshold on P(bona fide): at the dev EER point
    thr_logit = res["pooled"]["eerThresholdLogit"]
    thr = float(1 / (1 + np.exp(-thr_logit)))
    entry = {
        "name": a.name, "file": f"{a.name}.onnx", "sha256": sha256(out), "kind": "spoof", "bundled": True,
        "default": True,
        "input": {"name": "waveform", "shape": ["B", 64000], "sampleRate": 16000, "windowSeconds": 4, "hopSeconds": 2},
        "output": {"name": "logits"},
        "defaultThreshold": round(thr, 4),
        "thresholdNote": "P(bona fide) at the pooled dev EER point (mean window logit); below it deepfake_detected=true",
        "license": "Apache-2.0", "trainingData": TRAINING_DATA, "source": "trained by training/ in this repo",
        "architecture": f"fixed DFT/linear-filterbank front-end + LCNN, {sum(q.numel() for q in model.parameters())/1e3:.0f}k params",
        "metrics": {"devEer": round(res["pooled"]["eer"], 4),
                    "devEerHeldOut": round(res["heldout(festival+yourtts-vc)"]["eer"], 4),
                    "devEerFestival": round(res["attack:festival"]["eer"], 4),
                    "devEerYourttsVc": round(res["attack:yourtts-vc"]["eer"], 4),
                    "evaluation": "trials/cm-dev.csv (885 clips), training/results/" + f"cm-{a.name}.json"},
    }
    update_manifest.update([entry])
    print(json.dumps(entry, indent=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["speaker", "spoof"])
    data_dir_arg(ap)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--threshold-point", default="eer", choices=["eer", "far1pct"])
    a = ap.parse_args()
    torch.set_num_threads(1)
    (export_speaker if a.kind == "speaker" else export_spoof)(a)


if __name__ == "__main__":
    main()
