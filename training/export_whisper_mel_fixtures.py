#!/usr/bin/env python3
"""Write Whisper's log-mel reference fixtures for the engine's TypeScript tests: what voxkey_train/whisper.py's
numpy rebuild of whisper.audio.log_mel_spectrogram computes for the same synthetic signals as the fbank fixtures.

Usage (from repo root): $VOXKEY_VENV/bin/python training/export_whisper_mel_fixtures.py
Writes packages/engine/test/fixtures/whisper-mel/<name>.json with {samples, mel ([80][T], band-major)}.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_fbank_fixtures import SIGNALS, write_fixture  # noqa: E402
from voxkey_train.whisper import log_mel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "packages", "engine", "test", "fixtures", "whisper-mel")


def main():
    for name, fn in SIGNALS.items():
        x = fn().astype(np.float32)
        mel = log_mel(x)
        doc = {
            "description": f"Whisper log-mel reference ({name}); training/voxkey_train/whisper.py::log_mel",
            "sampleRate": 16000,
            "samples": [float(f"{v:.8g}") for v in x.tolist()],
            "mel": [[float(f"{v:.6g}") for v in row] for row in mel.tolist()],
        }
        write_fixture(OUT, name, doc, f"{len(x)} samples, mel {mel.shape}")


if __name__ == "__main__":
    main()
