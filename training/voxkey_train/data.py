"""Decode the shared dataset once into a compact cache under $VOXKEY_WORK/cache/ (default training/work/cache/).

wave_raw.npy  int16, all clips concatenated (as decoded, 16 kHz)
wave_mp3.npy  int16, MP3 round trip (ffmpeg/LAME, CBR at one of MP3_BITRATES, chosen per clip) of
              the non-commonvoice TRAIN clips (others: empty), to fight corpus/codec shortcuts
index.csv     manifest rows + offsets into the arrays
"""
from __future__ import annotations

import argparse
import csv
import os
import time
import zlib

import numpy as np
from .audio_io import ffmpeg_mp3_roundtrip, load_audio, to_i16  # noqa: F401  (re-exported)

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(TRAIN_DIR)
# The locations every module uses (training/README.md, "Environment variables"): the data set (VOXKEY_DATA_DIR, or
# DATA_DIR, default ../shared/datasets beside the repository) and the work folder (VOXKEY_WORK, default training/work).
DEFAULT_DATA = os.path.join(ROOT, "..", "shared", "datasets")
DATA_DIR = os.environ.get("VOXKEY_DATA_DIR") or os.environ.get("DATA_DIR") or DEFAULT_DATA
WORK = os.environ.get("VOXKEY_WORK", os.path.join(TRAIN_DIR, "work"))  # caches; keep generated audio outside the repo
CACHE = os.path.join(WORK, "cache")
# commonvoice is 24 kbit/s; the others widen the codec conditions (LAME low-passes lower at 16k)
MP3_BITRATES = ("16k", "24k", "32k", "48k")


def mp3_bitrate_for(path: str) -> str:
    """Deterministic per-clip bit rate, so a rebuilt cache is identical."""
    return MP3_BITRATES[zlib.crc32(path.encode()) % len(MP3_BITRATES)]


def data_dir_arg(p: argparse.ArgumentParser):
    p.add_argument("--data-dir", default=DATA_DIR,
                   help="dataset root (default $VOXKEY_DATA_DIR, else ../shared/datasets relative to the repo root)")


def read_manifest(data_dir):
    with open(os.path.join(data_dir, "manifest.csv")) as f:
        return list(csv.DictReader(f))


def _decode(args):
    data_dir, r, mp3_on = args
    x = load_audio(os.path.join(data_dir, r["path"]))
    mp3 = None
    if mp3_on and r["split"] == "train" and r["corpus"] != "commonvoice":
        mp3 = to_i16(ffmpeg_mp3_roundtrip(x, mp3_bitrate_for(r["path"])))
    return to_i16(x), mp3


def build(data_dir, jobs=2, mp3_on=True):
    """Decode every clip and make the MP3 round trips (mp3_on; ~5,200 ffmpeg runs, most of the time), `jobs`
    processes in parallel; the output does not depend on `jobs`. Without them (--no-mp3, the v4 spoof runs,
    whose channel versions come from spoof_v4/gen.py) every clip's mp3_len is 0 and the raw clip is used."""
    from multiprocessing import Pool

    os.makedirs(CACHE, exist_ok=True)
    rows = read_manifest(data_dir)
    raws, mp3s = [], []
    off_r = off_m = 0
    t0 = time.time()
    with Pool(jobs) as pool:
        for i, (xi, y) in enumerate(pool.imap(_decode, [(data_dir, r, mp3_on) for r in rows], chunksize=8)):
            r = rows[i]
            r["raw_off"], r["raw_len"] = off_r, len(xi)
            raws.append(xi)
            off_r += len(xi)
            if y is not None:
                r["mp3_bitrate"] = mp3_bitrate_for(r["path"])
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
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-mp3", action="store_true", help="skip the MP3 round trips of the non-Common-Voice train clips")
    a = ap.parse_args()
    build(os.path.abspath(a.data_dir), a.jobs, not a.no_mp3)
