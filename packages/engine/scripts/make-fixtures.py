#!/usr/bin/env python3
"""Generate the engine's small test fixtures (deterministic).

Usage (from packages/engine): /usr/bin/python3 scripts/make-fixtures.py

- test/fixtures/models/tiny-speaker.onnx: feats [1,T,80] -> embs [1,64]
  (random-but-seeded frame projection + ReLU + mean/std statistics pooling + projection)
- test/fixtures/models/tiny-spoof.onnx: waveform [B,64000] -> logits [B]
  (log frame energies + seeded linear layer)
- test/fixtures/models/manifest.json: test manifest with sha256 of both
- test/fixtures/audio/*.wav|mp3: speech from espeak-ng (no third-party speech), via sox/ffmpeg
"""
import hashlib
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "test", "fixtures")
MODELS = os.path.join(FIX, "models")
AUDIO = os.path.join(FIX, "audio")


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def speaker_model(path, dim=64, hidden=96, seed=11):
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((80, hidden)) / np.sqrt(80)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(hidden)).astype(np.float32)
    w2 = (rng.standard_normal((2 * hidden, dim)) / np.sqrt(2 * hidden)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["feats", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h"]),
        helper.make_node("ReduceMean", ["h"], ["mu"], axes=[1], keepdims=0),
        helper.make_node("Mul", ["h", "h"], ["h2"]),
        helper.make_node("ReduceMean", ["h2"], ["m2"], axes=[1], keepdims=0),
        helper.make_node("Mul", ["mu", "mu"], ["mu2"]),
        helper.make_node("Sub", ["m2", "mu2"], ["var0"]),
        helper.make_node("Relu", ["var0"], ["var"]),
        helper.make_node("Add", ["var", "eps"], ["var_e"]),
        helper.make_node("Sqrt", ["var_e"], ["sd"]),
        helper.make_node("Concat", ["mu", "sd"], ["stats"], axis=1),
        helper.make_node("MatMul", ["stats", "w2"], ["embs"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny_speaker",
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, [1, "T", 80])],
        [helper.make_tensor_value_info("embs", TensorProto.FLOAT, [1, dim])],
        [const("w1", w1), const("b1", b1), const("w2", w2),
         const("axis1", np.array([1], dtype=np.int64)), const("eps", np.array([1e-5], dtype=np.float32))],
    )
    save(graph, path)


def spoof_model(path, seed=23):
    rng = np.random.default_rng(seed)
    frames, flen = 250, 256
    w = (rng.standard_normal((frames, 1)) / np.sqrt(frames)).astype(np.float32)
    nodes = [
        helper.make_node("Reshape", ["waveform", "shape"], ["fr"]),
        helper.make_node("Mul", ["fr", "fr"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["pow"], axes=[2], keepdims=0),
        helper.make_node("Add", ["pow", "eps"], ["pow_e"]),
        helper.make_node("Log", ["pow_e"], ["logpow"]),
        helper.make_node("ReduceMean", ["logpow"], ["meanlog"], axes=[1], keepdims=1),
        helper.make_node("Sub", ["logpow", "meanlog"], ["centred"]),
        helper.make_node("MatMul", ["centred", "w"], ["z"]),
        helper.make_node("Reshape", ["z", "shape1"], ["z1"]),
        helper.make_node("Add", ["z1", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny_spoof",
        [helper.make_tensor_value_info("waveform", TensorProto.FLOAT, ["B", 64000])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B"])],
        [const("shape", np.array([-1, frames, flen], dtype=np.int64)), const("shape1", np.array([-1], dtype=np.int64)),
         const("axis1", np.array([1], dtype=np.int64)), const("axis2", np.array([2], dtype=np.int64)),
         const("eps", np.array([1e-8], dtype=np.float32)), const("w", w), const("bias", np.array([2.0], dtype=np.float32))],
    )
    save(graph, path)


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="voxkey-fixtures")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


SENTENCES = {
    "alice_1": ("en-us+f3", 150, 60, "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well."),
    "alice_2": ("en-us+f3", 150, 60, "These days a chicken leg is a rare dish. Rice is often served in round bowls. The juice of lemons makes fine punch."),
    "bob_1": ("en-gb-scotland+m7", 150, 35, "The box was thrown beside the parked truck. The hogs were fed chopped corn and garbage. Four hours of steady work faced us."),
}


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def audio():
    os.makedirs(AUDIO, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (voice, speed, pitch, text) in SENTENCES.items():
            raw = os.path.join(tmp, name + ".wav")
            run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", raw, text])
            # 16 kHz mono 16-bit, a little room noise so SNR is finite, 0.3 s lead-in silence
            run(["sox", raw, "-r", "16000", "-c", "1", "-b", "16", os.path.join(AUDIO, name + ".wav"),
                 "pad", "0.3", "0.3", "gain", "-n", "-3", "dither", "-s"])
        # MP3 at 44.1 kHz stereo: exercises the MP3 decoder, downmix and resampler
        run(["ffmpeg", "-y", "-i", os.path.join(AUDIO, "alice_1.wav"), "-ar", "44100", "-ac", "2",
             "-c:a", "libmp3lame", "-b:a", "48k", os.path.join(AUDIO, "alice_1_44k_stereo.mp3")])


def main():
    os.makedirs(MODELS, exist_ok=True)
    sp = os.path.join(MODELS, "tiny-speaker.onnx")
    cm = os.path.join(MODELS, "tiny-spoof.onnx")
    speaker_model(sp)
    spoof_model(cm)
    manifest = {"models": [
        {"name": "tiny-speaker", "file": "tiny-speaker.onnx", "sha256": sha256(sp), "kind": "speaker",
         "bundled": True, "default": True,
         "input": {"name": "feats", "shape": [1, "T", 80], "features": "kaldi-fbank-80-cmn"},
         "output": {"name": "embs", "embeddingSize": 64},
         "calibration": {"type": "logistic", "a": 12.0, "b": -9.0}, "defaultThreshold": 0.85,
         "license": "Apache-2.0", "source": "packages/engine/scripts/make-fixtures.py (random seeded weights, test only)"},
        {"name": "tiny-spoof", "file": "tiny-spoof.onnx", "sha256": sha256(cm), "kind": "spoof",
         "bundled": True, "default": True,
         "input": {"name": "waveform", "shape": ["B", 64000], "sampleRate": 16000, "windowSeconds": 4, "hopSeconds": 2},
         "output": {"name": "logits", "shape": ["B"], "meaning": "logit of P(bona fide)"},
         "defaultThreshold": 0.5,
         "license": "Apache-2.0", "source": "packages/engine/scripts/make-fixtures.py (random seeded weights, test only)"},
    ]}
    with open(os.path.join(MODELS, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    audio()
    for d in (MODELS, AUDIO):
        for n in sorted(os.listdir(d)):
            print(os.path.join(d, n), os.path.getsize(os.path.join(d, n)))


if __name__ == "__main__":
    main()
