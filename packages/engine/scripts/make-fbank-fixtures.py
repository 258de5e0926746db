#!/usr/bin/env python3
"""Float64 Kaldi fbank references (torchaudio.compliance.kaldi.fbank run in double precision).

Usage (from packages/engine): /usr/bin/python3 scripts/make-fbank-fixtures.py

The float32 references in test/fixtures/fbank/ (written by python -m training.voxkey_train.fixtures fbank)
carry float32 rounding noise of up to ~1e-3 in bins ~80 dB below a frame's peak (torchaudio in
float32 vs float64 differ by 1.07e-3 on vowel_like.json). These double-precision references
isolate the algorithm from that noise. Output: test/fixtures/fbank64/<name>.json
{samples, sampleRate, fbank, fbankCmn}.
"""
import json
import os

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "test", "fixtures")
OUT = os.path.join(FIX, "fbank64")
KW = dict(num_mel_bins=80, frame_length=25, frame_shift=10, dither=0.0, energy_floor=0.0, sample_frequency=16000,
          window_type="povey", preemphasis_coefficient=0.97, remove_dc_offset=True, low_freq=20, high_freq=0,
          use_energy=False)


def clips():
    wav, sr = torchaudio.load(os.path.join(FIX, "audio", "alice_1.wav"))
    assert sr == 16000
    yield "speech_espeak", wav[0, 8000:8000 + 12000].numpy()
    with open(os.path.join(FIX, "fbank", "vowel_like.json")) as f:
        yield "vowel_like", np.array(json.load(f)["samples"], dtype=np.float32)[:12000]
    rng = np.random.default_rng(5)
    t = np.arange(8000) / 16000
    yield "tone_noise_dc", (0.2 + 0.5 * np.sin(2 * np.pi * 1000 * t) + 0.01 * rng.standard_normal(8000)).astype(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, x in clips():
        x = x.astype(np.float32)
        w = torch.from_numpy(x.astype(np.float64)).unsqueeze(0) * 32768.0
        raw = torchaudio.compliance.kaldi.fbank(w, **KW)
        cmn = raw - raw.mean(dim=0, keepdim=True)
        doc = {"description": f"float64 Kaldi fbank reference ({name}); scripts/make-fbank-fixtures.py", "sampleRate": 16000,
               "samples": [float(f"{v:.9g}") for v in x.tolist()],
               "fbank": [[float(f"{v:.7g}") for v in row] for row in raw.tolist()],
               "fbankCmn": [[float(f"{v:.7g}") for v in row] for row in cmn.tolist()]}
        p = os.path.join(OUT, name + ".json")
        with open(p, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
        print(p, os.path.getsize(p))


if __name__ == "__main__":
    main()
