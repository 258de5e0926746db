"""Turn an exported spoof model (waveform [B, 64000] -> logits) into the form the engine runs: the same
network without its in-graph spectral front-end, taking band features of any length
([B, 1, 64, T], input "features"), which the engine computes itself (packages/engine/src/features/
spoof-bands.ts, the same definition as spoof_model.SpecFrontEnd). The weights and every node after the
front-end are kept as they are; only the graph's input moves.

  $VOXKEY_VENV/bin/python -m training.voxkey_train.spoof_features_onnx --in models/x.onnx --out models/x.onnx

Checks: on 4 s windows the new graph fed the old graph's own front-end output gives the old logits
exactly, and it accepts other lengths.
"""
from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

FRONT_OUTPUT = "/front/Unsqueeze_1_output_0"
INPUT_NAME = "features"
MANIFEST_INPUT = {"name": INPUT_NAME, "shape": ["B", 1, 64, "T"], "features": "spoof-lfb64-mn", "sampleRate": 16000,
                  "segmentSeconds": [4, 8]}


def convert(src: str, dst: str) -> float:
    import onnx
    import onnxruntime as ort
    from onnx import utils

    with tempfile.TemporaryDirectory() as tmp:
        front_path, back_path = os.path.join(tmp, "front.onnx"), os.path.join(tmp, "back.onnx")
        utils.extract_model(src, front_path, ["waveform"], [FRONT_OUTPUT])
        utils.extract_model(src, back_path, [FRONT_OUTPUT], ["logits"])
        back = onnx.load(back_path)
        for node in back.graph.node:
            node.input[:] = [INPUT_NAME if i == FRONT_OUTPUT else i for i in node.input]
        back.graph.input[0].name = INPUT_NAME
        time_dim = back.graph.input[0].type.tensor_type.shape.dim[3]
        time_dim.ClearField("dim_value")
        time_dim.dim_param = "T"
        del back.graph.value_info[:]
        back.doc_string = "Voxkey spoof model on engine-computed band features (training/voxkey_train/spoof_features_onnx.py)"
        onnx.checker.check_model(back)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        full = ort.InferenceSession(src, opts)
        front = ort.InferenceSession(front_path, opts)
        x = (np.random.default_rng(0).standard_normal((3, 64000)) * 0.1).astype(np.float32)
        feats = front.run(None, {"waveform": x})[0]
        data = back.SerializeToString()
        new = ort.InferenceSession(data, opts)
        diff = float(np.abs(new.run(None, {INPUT_NAME: feats})[0] - full.run(None, {"waveform": x})[0]).max())
        longer = new.run(None, {INPUT_NAME: np.zeros((1, 1, 64, 797), np.float32)})[0]
        assert longer.shape == (1,), longer.shape
        assert diff < 1e-5, diff
        with open(dst, "wb") as f:
            f.write(data)
    return diff


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--in", dest="src", required=True, help="waveform-input spoof ONNX (spoof_v4/export.py)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    diff = convert(a.src, a.out)
    print(f"{a.out}: features input, max |logit diff| vs the waveform graph on 4 s windows {diff:.2e}")


if __name__ == "__main__":
    main()
