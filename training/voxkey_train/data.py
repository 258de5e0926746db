"""Decode the shared dataset once into a compact cache under training/work/cache/.

wave_raw.npy  int16, all clips concatenated (as decoded, 16 kHz)
wave_mp3.npy  int16, MP3 round trip (ffmpeg/LAME, CBR at one of MP3_BITRATES, chosen per clip) of
              the non-commonvoice TRAIN clips (others: empty), to fight corpus/codec shortcuts
index.csv     manifest rows + offsets into the arrays
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import tempfile
import time
import zlib

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(TRAIN_DIR)
DEFAULT_DATA = os.path.join(ROOT, "..", "shared", "datasets")
WORK = os.path.join(TRAIN_DIR, "work")
CACHE = os.path.join(WORK, "cache")
# commonvoice is 24 kbit/s; the others widen the codec conditions (LAME low-passes lower at 16k)
MP3_BITRATES = ("16k", "24k", "32k", "48k")


def mp3_bitrate_for(path: str) -> str:
    """Deterministic per-clip bit rate, so a rebuilt cache is identical."""
    return MP3_BITRATES[zlib.crc32(path.encode()) % len(MP3_BITRATES)]


def data_dir_arg(p: argparse.ArgumentParser):
    p.add_argument("--data-dir", default=os.environ.get("VOXKEY_DATA_DIR", DEFAULT_DATA),
                   help="dataset root (default ../shared/datasets relative to the repo root)")


def read_manifest(data_dir):
    with open(os.path.join(data_dir, "manifest.csv")) as f:
        return list(csv.DictReader(f))


def load_audio(path) -> np.ndarray:
    w, sr = torchaudio.load(path)
    w = w.mean(0)
    if sr != 16000:
        w = torchaudio.functional.resample(w, sr, 16000)
    return w.numpy().astype(np.float32)


def ffmpeg_mp3_roundtrip(x: np.ndarray, bitrate="24k", tmpdir=None) -> np.ndarray:
    """16 kHz float -> MP3 (LAME, CBR) -> 16 kHz float, via the ffmpeg CLI."""
    with tempfile.TemporaryDirectory(dir=tmpdir) as td:
        src = os.path.join(td, "a.wav")
        mp3 = os.path.join(td, "a.mp3")
        torchaudio.save(src, torch.from_numpy(x).unsqueeze(0), 16000, encoding="PCM_S", bits_per_sample=16)
        subprocess.run(["ffmpeg", "-v", "quiet", "-y", "-i", src, "-c:a", "libmp3lame", "-b:a", bitrate, mp3], check=True)
        out = subprocess.run(["ffmpeg", "-v", "quiet", "-i", mp3, "-f", "s16le", "-ac", "1", "-ar", "16000", "-"],
                             check=True, capture_output=True).stdout
    y = np.frombuffer(out, dtype=np.int16).astype(np.float32) / 32768.0
    return y


def to_i16(x):
    return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)


def build(data_dir):
    os.makedirs(CACHE, exist_ok=True)
    rows = read_manifest(data_dir)
    raws, mp3s = [], []
    off_r = off_m = 0
    t0 = time.time()
    for i, r in enumerate(rows):
        x = load_audio(os.path.join(data_dir, r["path"]))
        xi = to_i16(x)
        r["raw_off"], r["raw_len"] = off_r, len(xi)
        raws.append(xi)
        off_r += len(xi)
        if r["split"] == "train" and r["corpus"] != "commonvoice":
            r["mp3_bitrate"] = mp3_bitrate_for(r["path"])
            y = to_i16(ffmpeg_mp3_roundtrip(x, r["mp3_bitrate"]))
            r["mp3_off"], r["mp3_len"] = off_m, len(y)
            mp3s.append(y)
            off_m += len(y)
        else:
            r["mp3_off"], r["mp3_len"], r["mp3_bitrate"] = -1, 0, ""
        if i % 500 == 0:
            print(f"{i}/{len(rows)} {time.time()-t0:.0f}s", flush=True)
    np.save(os.path.join(CACHE, "wave_raw.npy"), np.concatenate(raws))
    np.save(os.path.join(CACHE, "wave_mp3.npy"), np.concatenate(mp3s) if mp3s else np.zeros(0, np.int16))
    keys = list(rows[0].keys())
    with open(os.path.join(CACHE, "index.csv.tmp"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    os.replace(os.path.join(CACHE, "index.csv.tmp"), os.path.join(CACHE, "index.csv"))
    print("done", len(rows), f"{time.time()-t0:.0f}s")


class Cache:
    def __init__(self):
        with open(os.path.join(CACHE, "index.csv")) as f:
            self.rows = list(csv.DictReader(f))
        for r in self.rows:
            for k in ("raw_off", "raw_len", "mp3_off", "mp3_len"):
                r[k] = int(r[k])
            r["duration_s"] = float(r["duration_s"])
        self.raw = np.load(os.path.join(CACHE, "wave_raw.npy"), mmap_mode="r")
        self.mp3 = np.load(os.path.join(CACHE, "wave_mp3.npy"), mmap_mode="r")
        self.by_path = {r["path"]: i for i, r in enumerate(self.rows)}

    def wav(self, i, mp3=False) -> np.ndarray:
        r = self.rows[i]
        if mp3 and r["mp3_len"] > 0:
            return np.asarray(self.mp3[r["mp3_off"]: r["mp3_off"] + r["mp3_len"]], dtype=np.float32) / 32768.0
        return np.asarray(self.raw[r["raw_off"]: r["raw_off"] + r["raw_len"]], dtype=np.float32) / 32768.0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    data_dir_arg(ap)
    a = ap.parse_args()
    build(os.path.abspath(a.data_dir))
