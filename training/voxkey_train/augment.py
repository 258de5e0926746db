"""Waveform augmentation (numpy, 16 kHz float32) shared by speaker and spoof training."""
from __future__ import annotations

import numpy as np
import scipy.signal as ss

SR = 16000
_SOS_CACHE = {}


def _sos(kind, f, order=6):
    key = (kind, tuple(np.atleast_1d(f).round(-1)), order)
    if key not in _SOS_CACHE:
        _SOS_CACHE[key] = ss.butter(order, f, btype=kind, fs=SR, output="sos")
    return _SOS_CACHE[key]


def rms(x):
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2) + 1e-12))


def coloured_noise(n, rng, alpha=None):
    alpha = rng.uniform(0, 2) if alpha is None else alpha
    X = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(X)) + 1.0
    X /= f ** (alpha / 2)
    y = np.fft.irfft(X, n)
    return (y / (rms(y) + 1e-9)).astype(np.float32)


def add_noise(x, noise, snr_db):
    g = rms(x) / (rms(noise) * 10 ** (snr_db / 20) + 1e-9)
    return (x + g * noise[: len(x)]).astype(np.float32)


def synth_rir(rng, rt60=None, sr=SR):
    rt60 = rng.uniform(0.15, 0.9) if rt60 is None else rt60
    n = int(min(rt60, 0.8) * sr)
    t = np.arange(n) / sr
    h = rng.standard_normal(n) * np.exp(-6.9 * t / rt60)
    # early reflections, direct path
    h[: int(0.002 * sr)] *= 0.1
    h[0] = rng.uniform(1.5, 6.0) * np.abs(h).max()
    # some HF damping
    h = ss.lfilter([1 - 0.4], [1, -0.4], h)
    return (h / np.sqrt(np.sum(h ** 2))).astype(np.float32)


def reverb(x, rng, rt60=None):
    h = synth_rir(rng, rt60)
    y = ss.fftconvolve(x, h)[: len(x)]
    return (y * (rms(x) / (rms(y) + 1e-9))).astype(np.float32)


def telephone(x, rng):
    # band-pass 300-3400 Hz, 8 kHz round trip (decimate/interpolate), mild mu-law-ish quantisation
    y = ss.sosfilt(_sos("bandpass", [300, 3400], 4), x)
    y = ss.resample_poly(y, 1, 2)
    if rng.random() < 0.5:
        mu = 255.0
        c = np.sign(y) * np.log1p(mu * np.minimum(np.abs(y), 1)) / np.log1p(mu)
        c = np.round(c * 127) / 127
        y = np.sign(c) * ((1 + mu) ** np.abs(c) - 1) / mu
    y = ss.resample_poly(y, 2, 1)[: len(x)]
    if len(y) < len(x):
        y = np.pad(y, (0, len(x) - len(y)))
    return y.astype(np.float32)


def lowpass(x, rng, fc=None):
    fc = rng.uniform(3800, 7000) if fc is None else fc
    return ss.sosfilt(_sos("lowpass", fc, 8), x).astype(np.float32)


def gain_clip(x, rng):
    peak = np.abs(x).max() + 1e-9
    y = x * (rng.uniform(1.2, 3.0) / peak)
    return np.clip(y, -1, 1).astype(np.float32)


def random_gain(x, rng, lo_db=-20, hi_db=6):
    g = 10 ** (rng.uniform(lo_db, hi_db) / 20)
    y = x * g
    if np.abs(y).max() > 1:
        y = y / (np.abs(y).max() + 1e-6) * 0.99
    return y.astype(np.float32)


def crop_or_pad(x, n, rng=None):
    """n samples of x: a random crop (or of x repeated, when shorter); without rng, the centre
    crop (or x repeated from its start)."""
    if len(x) >= n:
        s = int(rng.integers(0, len(x) - n + 1)) if rng is not None else (len(x) - n) // 2
        return x[s: s + n]
    reps = int(np.ceil(n / max(len(x), 1)))
    y = np.tile(x, reps)
    s = int(rng.integers(0, len(y) - n + 1)) if rng is not None else 0
    return y[s: s + n]


def resample_speed(x, speed):
    """Speed perturbation (tempo+pitch), sox 'speed' style: play at speed x."""
    if speed == 1.0:
        return x
    up, down = {0.9: (10, 9), 1.1: (10, 11)}[speed]
    return ss.resample_poly(x, up, down).astype(np.float32)


# (up, down) resampling pairs: ratios of about +-0.45..1.8 semitones with short polyphase filters
_PITCH_RATIOS = ((40, 39), (39, 40), (20, 19), (19, 20), (10, 9), (9, 10))


def _phase_vocoder(spec, rate, hop):
    """Time stretch of a complex STFT [F, T] by rate (as torchaudio.functional.phase_vocoder)."""
    import torch

    n_freq = spec.shape[0]
    phase_advance = torch.linspace(0, np.pi * hop, n_freq)[:, None]
    steps = torch.arange(0, spec.shape[-1], rate, dtype=torch.float64)
    alphas = (steps % 1.0).to(torch.float32)[None]
    phase_0 = spec[:, :1].angle()
    spec = torch.nn.functional.pad(spec, [0, 2])
    idx = steps.long()
    s0, s1 = spec[:, idx], spec[:, idx + 1]
    angle_0, angle_1 = s0.angle(), s1.angle()
    norm_0, norm_1 = s0.abs(), s1.abs()
    phase = angle_1 - angle_0 - phase_advance
    phase = phase - 2 * np.pi * torch.round(phase / (2 * np.pi))
    phase = phase + phase_advance
    phase = torch.cat([phase_0, phase[:, :-1]], dim=-1)
    phase_acc = torch.cumsum(phase, -1)
    mag = alphas * norm_1 + (1 - alphas) * norm_0
    return torch.polar(mag, phase_acc)


def pitch_shift(x, rng):
    """Shift the pitch, keep the duration: phase-vocoder time stretch by up/down, then resample
    by down/up. Ratios with small integers keep the resampling cheap."""
    import torch

    up, down = _PITCH_RATIOS[int(rng.integers(len(_PITCH_RATIOS)))]
    n_fft, hop = 512, 128
    win = torch.hann_window(n_fft)
    spec = torch.stft(torch.from_numpy(np.ascontiguousarray(x, np.float32)), n_fft, hop, window=win,
                      return_complex=True)
    stretched = _phase_vocoder(spec, down / up, hop)  # rate < 1 = longer
    y = torch.istft(stretched, n_fft, hop, window=win).numpy()
    y = ss.resample_poly(y, down, up)
    y = y[: len(x)] if len(y) >= len(x) else np.pad(y, (0, len(x) - len(y)))
    return (y * (rms(x) / (rms(y) + 1e-9))).astype(np.float32)


# ---------------------------------------------------------------- RawBoost-style (Tak et al. 2022), simplified
def rawboost_lnl(x, rng):
    """Linear and non-linear convolutive noise: a sum of 1-3 random multi-band FIR filters applied
    to x, x^2 and x^3 (small weights), as in RawBoost algorithm 1."""
    y = np.zeros_like(x, dtype=np.float64)
    for k in range(1, int(rng.integers(1, 4)) + 1):
        n_taps = int(rng.integers(10, 60)) | 1
        bands = []
        for _ in range(int(rng.integers(1, 4))):
            fc = rng.uniform(50, 7500)
            bw = rng.uniform(100, 1500)
            bands.append((max(20.0, fc - bw / 2), min(7980.0, fc + bw / 2)))
        h = np.zeros(n_taps)
        for lo, hi in bands:
            if hi - lo > 50:
                h += ss.firwin(n_taps, [lo, hi], pass_zero=False, fs=SR)
        if not np.any(h):
            continue
        g = 1.0 if k == 1 else rng.uniform(0.01, 0.1)
        y += g * ss.lfilter(h, [1.0], np.sign(x) * np.abs(x) ** k if k > 1 else x)
    if not np.any(y):
        return x
    return (y * (rms(x) / (rms(y) + 1e-9))).astype(np.float32)


def rawboost_isd(x, rng):
    """Impulsive signal-dependent noise: up to 10% of samples get x*u*g (u ~ U(-1,1))."""
    y = x.copy()
    n = int(len(x) * rng.uniform(0.01, 0.1))
    idx = rng.integers(0, len(x), n)
    y[idx] += x[idx] * rng.uniform(-1, 1, n) * rng.uniform(1, 4)
    return np.clip(y, -1, 1).astype(np.float32)


def rawboost_ssi(x, rng):
    """Stationary signal-independent noise: white noise through a random FIR band filter, 10-40 dB SNR."""
    n_taps = int(rng.integers(10, 60)) | 1
    lo = rng.uniform(20, 4000)
    hi = min(7980.0, lo + rng.uniform(500, 4000))
    noise = ss.lfilter(ss.firwin(n_taps, [lo, hi], pass_zero=False, fs=SR), [1.0], rng.standard_normal(len(x)))
    return add_noise(x, noise.astype(np.float32), rng.uniform(10, 40))


def rawboost(x, rng):
    u = rng.random()
    if u < 0.4:
        return rawboost_lnl(x, rng)
    if u < 0.6:
        return rawboost_isd(x, rng)
    if u < 0.8:
        return rawboost_ssi(x, rng)
    return rawboost_isd(rawboost_lnl(x, rng), rng)


def cv_bandlimit(x, rng):
    """The band limit of Common Voice's 24 kbit/s MP3 (LAME low-passes at about 5.5-6 kHz)."""
    return lowpass(x, rng, rng.uniform(5300, 6300))
