#!/usr/bin/env python3
"""Write the spoof front-end's reference fixtures for the engine's TypeScript tests: the band features
that spoof_model.SpecFrontEnd (the in-graph front-end the spoof models were trained with, float32)
computes for the same synthetic signals as the fbank fixtures.

Usage (from repo root): $VOXKEY_VENV/bin/python training/export_spoof_band_fixtures.py
Writes packages/engine/test/fixtures/spoof-bands/<name>.json with {samples, bands ([64][T], band-major)}.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_fbank_fixtures import SIGNALS, write_fixture  # noqa: E402
from voxkey_train.spoof_model import SpecFrontEnd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "packages", "engine", "test", "fixtures", "spoof-bands")


def main():
    front = SpecFrontEnd(n_bands=64).eval()
    for name, fn in SIGNALS.items():
        x = fn().astype(np.float32)
        with torch.no_grad():
            bands = front(torch.from_numpy(x)[None])[0, 0].numpy()  # [64, T]
        doc = {
            "description": f"spoof front-end reference ({name}); training/voxkey_train/spoof_model.py::SpecFrontEnd",
            "sampleRate": 16000,
            "samples": [float(f"{v:.8g}") for v in x.tolist()],
            "bands": [[float(f"{v:.6g}") for v in row] for row in bands.tolist()],
        }
        write_fixture(OUT, name, doc, f"{len(x)} samples, bands {bands.shape}")


if __name__ == "__main__":
    main()
