#!/usr/bin/env python3
"""Cost of the deepfake check for a 5 s clip on one core (onnxruntime, one thread, engine windows: 2 x 4 s).

  $VOXKEY_VENV/bin/python -m training.voxkey_train.bench_spoof_v4 models/voxkey-spoof-v3.onnx models/voxkey-spoof-v4.onnx
Prints the median and p90 of 200 runs per model, interleaved so that machine load hits both alike."""
import sys
import time

import numpy as np
import onnxruntime as ort

from .cm_v4 import engine_windows

so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
sess = {p: ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]) for p in sys.argv[1:]}
w = engine_windows((np.random.default_rng(0).standard_normal(80000) * 0.1).astype(np.float32))
ts = {p: [] for p in sess}
for i in range(220):
    for p, s in sess.items():
        t = time.perf_counter(); s.run(None, {"waveform": w}); dt = (time.perf_counter() - t) * 1000
        if i >= 20:
            ts[p].append(dt)
for p, x in ts.items():
    print(f"{p}: windows {len(w)}, median {np.median(x):.2f} ms, p90 {np.percentile(x, 90):.2f} ms")
