#!/usr/bin/env python3
"""Write the channel-quality fixtures for the engine's TypeScript tests: the first 4 s of the fixture recording
alice_1.wav as it is and through four channels of voxkey_train/channels.py (seeded).

Usage (from repo root): $VOXKEY_VENV/bin/python training/export_channel_fixtures.py
Writes packages/engine/test/fixtures/audio/alice_1_4s_<channel>.wav (16 kHz, 16-bit mono).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxkey_train import audio_io as io  # noqa: E402
from voxkey_train import channels as C  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUDIO = os.path.join(ROOT, "packages", "engine", "test", "fixtures", "audio")
# band-limited, coded, noisy, reverberant (a fixed SNR and RT60, so the test knows what to expect)
FIXTURE_CHANNELS = {
    "band-300-3400": C.get("band-300-3400"),
    "gsm": C.get("gsm"),
    "noise-white-10db": C.Channel("noise-white-10db", "noise", (("colour", "white"), ("snr_db", (10.0, 10.0)))),
    "room-0.7": C.Channel("room-0.7", "room", (("rt60", (0.7, 0.7)),)),
}


def main():
    x, sr = io.read_wav(os.path.join(AUDIO, "alice_1.wav"))
    assert sr == 16000
    x = x[: 4 * sr]
    io.save_wav(os.path.join(AUDIO, "alice_1_4s.wav"), x)
    for name, spec in FIXTURE_CHANNELS.items():
        y = C.apply_channel(x, spec, np.random.default_rng(31))
        io.save_wav(os.path.join(AUDIO, f"alice_1_4s_{name}.wav"), y)
        print(name, f"{20 * np.log10(C.speech_rms(y) + 1e-9):.1f} dB")


if __name__ == "__main__":
    main()
