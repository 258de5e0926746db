#!/usr/bin/env python3
"""Write reference Kaldi-fbank fixtures for the engine's TypeScript tests.

Usage (from repo root): python3 training/export_fbank_fixtures.py
Writes packages/engine/test/fixtures/fbank/<name>.json with
{samples, sampleRate, fbank (raw Kaldi fbank, no CMN), fbankCmn}.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxkey_train.features import compute_fbank, SAMPLE_RATE  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "packages", "engine", "test", "fixtures", "fbank")


def chirp_noise(seed=1234, dur=1.0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(dur * SAMPLE_RATE)) / SAMPLE_RATE
    f0, f1 = 100.0, 6000.0
    phase = 2 * np.pi * (f0 * t + (f1 - f0) / (2 * dur) * t ** 2)
    x = 0.4 * np.sin(phase) + 0.05 * rng.standard_normal(len(t))
    return x


def vowel_like(seed=7, dur=1.2):
    """Harmonic 'vowel' with vibrato, formant-ish amplitude envelope and a short pause."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(dur * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = 140 + 15 * np.sin(2 * np.pi * 5 * t)
    ph = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    x = np.zeros_like(t)
    for h in range(1, 25):
        fh = h * 140
        amp = np.exp(-((fh - 700) / 300) ** 2) + 0.6 * np.exp(-((fh - 1200) / 400) ** 2) + 0.2 * np.exp(-((fh - 2500) / 500) ** 2)
        x += amp * np.sin(h * ph)
    x *= 0.3 / np.max(np.abs(x))
    env = np.ones_like(t)
    env[int(0.5 * SAMPLE_RATE):int(0.65 * SAMPLE_RATE)] = 0.0
    x = x * env + 0.003 * rng.standard_normal(len(t))
    return x


def clipped_square_silence(seed=42, dur=1.0):
    """Low-level noise, then a loud clipped 440 Hz square-ish burst, digital silence at the start."""
    rng = np.random.default_rng(seed)
    n = int(dur * SAMPLE_RATE)
    x = np.zeros(n)
    x[1600:] = 0.01 * rng.standard_normal(n - 1600)
    t = np.arange(n) / SAMPLE_RATE
    burst = np.clip(1.5 * np.sin(2 * np.pi * 440 * t), -0.99, 0.99)
    x[8000:12000] += burst[8000:12000]
    return np.clip(x, -1.0, 1.0)


SIGNALS = {
    "chirp_noise": chirp_noise,
    "vowel_like": vowel_like,
    "clipped_burst": clipped_square_silence,
}


def write_fixture(out_dir, name, doc, what=""):
    """One compact JSON fixture (the engine's tests read them)."""
    os.makedirs(out_dir, exist_ok=True)
    p = os.path.join(out_dir, f"{name}.json")
    with open(p, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(p, what, f"{os.path.getsize(p)/1e6:.2f} MB")


def main():
    for name, fn in SIGNALS.items():
        x = fn().astype(np.float32)  # the float32 samples ARE the reference input
        raw = compute_fbank(x, cmn=False).numpy().astype(np.float32)
        cmn = compute_fbank(x, cmn=True).numpy().astype(np.float32)
        doc = {
            "description": f"Kaldi fbank reference ({name}); see training/voxkey_train/features.py::compute_fbank",
            "sampleRate": SAMPLE_RATE,
            "params": {"num_mel_bins": 80, "frame_length_ms": 25, "frame_shift_ms": 10, "dither": 0.0,
                        "energy_floor": 0.0, "window_type": "povey", "preemphasis_coefficient": 0.97,
                        "remove_dc_offset": True, "low_freq": 20, "high_freq": 0, "use_energy": False,
                        "input_scale": 32768, "snip_edges": True},
            "samples": [float(f"{v:.8g}") for v in x.tolist()],
            "fbank": [[float(f"{v:.6g}") for v in row] for row in raw.tolist()],
            "fbankCmn": [[float(f"{v:.6g}") for v in row] for row in cmn.tolist()],
        }
        write_fixture(OUT, name, doc, f"{len(x)} samples, fbank {raw.shape}")


if __name__ == "__main__":
    main()
