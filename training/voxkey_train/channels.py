"""The user channels, one module for every stage that needs them (spoof generation, the channel checks, the
speaker channel dev set): a list of named channel specs kept in code and one function that puts a clip through
one of them.

  from training.voxkey_train import channels as C
  spec = C.draw_channel(rng)                 # seeded, uniform over CHANNELS (or over a list of names)
  y = C.apply_channel(x, spec, rng)          # same length and dtype as x (int16, or float in [-1, 1]) at 16 kHz

Kinds:
  none        the clip as it is
  opus, mp3, gsm, g726, g711, speex   an ffmpeg encode/decode round trip (8 kHz codecs resampled back to 16 kHz)
  band        a band-pass inside the 16 kHz file (telephone 300-3400 Hz, wideband 100-7000 Hz)
  noise       additive noise at a drawn SNR against the speech level: white, pink, brown (synthetic colours),
              babble (4-7 summed train clips), background (non-speech stretches of train recordings)
  room        convolution with a synthetic exponentially decaying noise room response of a drawn RT60
  level       a gain change (quiet recordings keep only the top bits of int16) or clipping after over-amplification

Everything a channel draws (SNR, RT60, gain, noise segment) comes from the rng the caller passes, so a seeded rng
gives the same output. Babble and background noise come from train-split clips only (never dev speakers); they are
decoded once into $VOXKEY_WORK/cache/noise-bank-v1.npz (VOXKEY_WORK as in data.py).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass

import numpy as np
import scipy.signal as ss

from . import audio_io as io
from .augment import coloured_noise, synth_rir

SR = 16000


@dataclass(frozen=True)
class Channel:
    name: str
    kind: str
    params: tuple = ()  # (key, value) pairs; see `arg`

    def arg(self, key, default=None):
        return dict(self.params).get(key, default)


def _c(name, kind, **params):
    return Channel(name, kind, tuple(sorted(params.items())))


# The spoof generation stage's codec channels (spoof_v4/gen.py draws from these names, in this order).
CODEC_CHANNELS = [_c(f"opus-{b}", "opus", bitrate=b, application="voip") for b in ("6k", "8k", "12k", "16k", "24k", "32k")] + \
                 [_c(f"mp3-{b}", "mp3", bitrate=b) for b in ("32k", "48k", "64k")] + \
                 [_c("gsm", "gsm"), *[_c(f"g726-{b}", "g726", bitrate=b) for b in ("16k", "24k", "32k")], _c("speex", "speex")]

CHANNELS = [
    *CODEC_CHANNELS,
    *[_c(f"opus-audio-{b}", "opus", bitrate=b, application="audio") for b in ("6k", "12k", "24k")],
    _c("mp3-24k", "mp3", bitrate="24k"),
    _c("g711-mulaw", "g711"),
    _c("band-300-3400", "band", low_hz=300, high_hz=3400),
    _c("band-100-7000", "band", low_hz=100, high_hz=7000),
    *[_c(f"noise-{colour}", "noise", colour=colour, snr_db=(5.0, 20.0))
      for colour in ("white", "pink", "brown", "babble", "background")],
    *[_c(f"room-{lo:.1f}-{hi:.1f}", "room", rt60=(lo, hi)) for lo, hi in ((0.2, 0.4), (0.4, 0.6), (0.6, 0.8))],
    _c("level-quiet", "level", gain_db=(-40.0, -25.0)),
    _c("level-clipped", "level", clip_peak=(1.5, 4.0)),
]
BY_NAME = {c.name: c for c in CHANNELS}
NONE = _c("none", "none")
BY_NAME["none"] = NONE


def get(name_or_spec) -> Channel:
    return name_or_spec if isinstance(name_or_spec, Channel) else BY_NAME[name_or_spec]


def draw_channel(rng: np.random.Generator, names=None) -> Channel:
    """One channel, uniform over `names` (default: every channel of CHANNELS)."""
    pool = [get(n) for n in names] if names is not None else CHANNELS
    return pool[int(rng.integers(len(pool)))]


def apply_channel(x: np.ndarray, spec, rng: np.random.Generator | None = None) -> np.ndarray:
    """x (int16, or float in [-1, 1], 16 kHz mono) through one channel; same length and dtype back."""
    spec = get(spec)
    rng = rng if rng is not None else np.random.default_rng(0)
    was_int16 = np.asarray(x).dtype == np.int16
    f = np.asarray(x, np.float32) / (32768.0 if was_int16 else 1.0)
    y = _KINDS[spec.kind](f, spec, rng)
    y = np.asarray(y, np.float32)
    y = y[: len(f)] if len(y) >= len(f) else np.pad(y, (0, len(f) - len(y)))
    return io.to_i16(y) if was_int16 else y


# ------------------------------------------------------------------ codecs
def _codec(x, spec, rng):
    br = spec.arg("bitrate")
    if spec.kind == "opus":
        return io.ffmpeg_roundtrip(x, ["-c:a", "libopus", "-b:a", br, "-application", spec.arg("application")], "ogg")
    if spec.kind == "mp3":
        return io.ffmpeg_roundtrip(x, ["-c:a", "libmp3lame", "-b:a", br], "mp3")
    if spec.kind == "gsm":
        return io.ffmpeg_roundtrip(x, ["-c:a", "libgsm"], "gsm", enc_sr=8000)
    if spec.kind == "g726":
        return io.ffmpeg_roundtrip(x, ["-c:a", "adpcm_g726", "-b:a", br], "wav", enc_sr=8000)
    if spec.kind == "g711":
        return io.ffmpeg_roundtrip(x, ["-c:a", "pcm_mulaw"], "wav", enc_sr=8000)
    if spec.kind == "speex":
        return io.ffmpeg_roundtrip(x, ["-c:a", "libspeex"], "spx")
    raise ValueError(spec.kind)


# ------------------------------------------------------------------ band, room, level
def _band(x, spec, rng):
    sos = ss.butter(6, [spec.arg("low_hz"), spec.arg("high_hz")], btype="bandpass", fs=SR, output="sos")
    return ss.sosfilt(sos, x)


def _room(x, spec, rng):
    lo, hi = spec.arg("rt60")
    h = synth_rir(rng, rng.uniform(lo, hi))
    y = ss.fftconvolve(x, h)[: len(x)]
    return y * (speech_rms(x) / (speech_rms(y) + 1e-9))


def _level(x, spec, rng):
    peak = float(np.abs(x).max()) + 1e-9
    if spec.arg("clip_peak"):
        return np.clip(x * (rng.uniform(*spec.arg("clip_peak")) / peak), -1.0, 1.0)
    # relative to a 0.5 peak, then int16 quantisation: a quiet recording keeps few bits
    y = x * (0.5 / peak) * 10 ** (rng.uniform(*spec.arg("gain_db")) / 20)
    return io.to_i16(y).astype(np.float32) / 32768.0


# ------------------------------------------------------------------ noise
def speech_rms(x, frame=400):
    """RMS of the frames within 30 dB of the loudest (the speech level, not diluted by pauses)."""
    n = len(x) // frame
    if n == 0:
        return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)) + 1e-12))
    e = np.mean(np.square(x[: n * frame].reshape(n, frame), dtype=np.float64), axis=1) + 1e-12
    return float(np.sqrt(np.mean(e[e >= e.max() * 1e-3])))


def _noise(x, spec, rng):
    colour = spec.arg("colour")
    n = len(x)
    if colour in ("white", "pink", "brown"):
        noise = coloured_noise(n, rng, {"white": 0.0, "pink": 1.0, "brown": 2.0}[colour])
    else:
        noise = noise_bank().segment(colour, n, rng)
    snr = rng.uniform(*spec.arg("snr_db"))
    g = speech_rms(x) / (float(np.sqrt(np.mean(np.square(noise, dtype=np.float64)))) * 10 ** (snr / 20) + 1e-9)
    y = x + g * noise
    peak = float(np.abs(y).max())
    return y / peak * 0.99 if peak > 1.0 else y


class NoiseBank:
    """Background (non-speech stretches) and babble sources, from train-split bona fide clips only."""

    def __init__(self, background: np.ndarray, babble: np.ndarray, babble_offsets: np.ndarray):
        self.background, self.babble, self.babble_offsets = background, babble, babble_offsets

    def segment(self, colour, n, rng):
        if colour == "background":
            return _loop_segment(self.background.astype(np.float32) / 32768.0, n, rng)
        talkers = int(rng.integers(4, 8))
        out = np.zeros(n, np.float32)
        for k in rng.choice(len(self.babble_offsets) - 1, talkers, replace=False):
            clip = self.babble[self.babble_offsets[k]: self.babble_offsets[k + 1]].astype(np.float32) / 32768.0
            clip = _loop_segment(clip, n, rng)
            out += clip / (speech_rms(clip) + 1e-9)
        return out

    @classmethod
    def build(cls, data_dir, n_background=160, n_babble=60, seed=7):
        with open(os.path.join(data_dir, "manifest.csv")) as f:
            rows = [r for r in csv.DictReader(f) if r["split"] == "train" and r["kind"] == "bonafide"]
        rows.sort(key=lambda r: r["path"])
        rng = np.random.default_rng(seed)
        cv = [r for r in rows if r["corpus"] == "commonvoice"]  # untrimmed: room noise before and after the speech
        other = [r for r in rows if r["corpus"] != "commonvoice"]
        background = []
        for k in rng.choice(len(cv), n_background, replace=False):
            background += non_speech_stretches(io.load_audio(os.path.join(data_dir, cv[k]["path"])))
        babble = [io.load_audio(os.path.join(data_dir, other[k]["path"])) for k in rng.choice(len(other), n_babble, replace=False)]
        offsets = np.cumsum([0] + [len(b) for b in babble])
        return cls(io.to_i16(np.concatenate(background)), io.to_i16(np.concatenate(babble)), offsets)


def non_speech_stretches(x, frame=400, min_frames=8):
    """Runs of at least min_frames 25 ms frames more than 30 dB below the clip's loudest frame (and not digital
    silence): the recording's own background."""
    n = len(x) // frame
    if n == 0:
        return []
    e = 10 * np.log10(np.mean(np.square(x[: n * frame].reshape(n, frame), dtype=np.float64), axis=1) + 1e-12)
    quiet = (e < e.max() - 30) & (e > -90)
    out, start = [], None
    for i, q in enumerate(np.append(quiet, False)):
        if q and start is None:
            start = i
        elif not q and start is not None:
            if i - start >= min_frames:
                out.append(x[(start + 1) * frame: (i - 1) * frame])  # frames next to speech may hold its edges
            start = None
    return out


def _loop_segment(src, n, rng):
    if len(src) < n:
        src = np.tile(src, n // max(len(src), 1) + 1)
    start = int(rng.integers(0, len(src) - n + 1))
    return src[start: start + n]


_BANK: NoiseBank | None = None


def noise_bank(data_dir=None) -> NoiseBank:
    """The noise bank, built on first use and cached under $VOXKEY_WORK/cache."""
    global _BANK
    if _BANK is None:
        from .data import CACHE, DATA_DIR
        path = os.path.join(CACHE, "noise-bank-v1.npz")
        if not os.path.exists(path):
            bank = NoiseBank.build(data_dir or DATA_DIR)
            os.makedirs(CACHE, exist_ok=True)
            tmp = f"{path[:-4]}.{os.getpid()}.tmp.npz"
            np.savez(tmp, background=bank.background, babble=bank.babble, babble_offsets=bank.babble_offsets)
            os.replace(tmp, path)
        z = np.load(path)
        _BANK = NoiseBank(z["background"], z["babble"], z["babble_offsets"])
    return _BANK


_KINDS = {"none": lambda x, spec, rng: x, "band": _band, "room": _room, "level": _level, "noise": _noise,
          **{k: _codec for k in ("opus", "mp3", "gsm", "g726", "g711", "speex")}}
