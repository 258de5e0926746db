"""Feature extraction shared by ALL speaker-model training, evaluation and export.

Contract with the engine (packages/engine): the speaker model input `feats` is
exactly `compute_fbank(waveform)` below: Kaldi-compatible 80-bin log-mel fbank
on int16-scaled samples, 25 ms / 10 ms, povey window, no dither, followed by
per-utterance cepstral mean normalisation (subtract the per-bin mean over time).
"""
from __future__ import annotations

import numpy as np
import torch

SAMPLE_RATE = 16000
NUM_MEL_BINS = 80


def _to_tensor(waveform) -> torch.Tensor:
    if isinstance(waveform, np.ndarray):
        waveform = torch.from_numpy(np.ascontiguousarray(waveform))
    w = waveform.to(torch.float32)
    if w.dim() == 1:
        w = w.unsqueeze(0)
    return w


def compute_fbank(waveform, cmn: bool = True) -> torch.Tensor:
    """waveform: float samples in [-1, 1], shape [N] or [1, N], 16 kHz mono.

    Returns float32 [T, 80]. With cmn=True (the default and what the model sees),
    the mean over time of each bin is subtracted (per utterance).
    """
    w = _to_tensor(waveform) * 32768.0
    import torchaudio  # speaker features only (Debian's torch 1.13 stack); the spoof path does not need it

    feats = torchaudio.compliance.kaldi.fbank(
        w,
        num_mel_bins=NUM_MEL_BINS,
        frame_length=25,
        frame_shift=10,
        dither=0.0,
        energy_floor=0.0,
        sample_frequency=SAMPLE_RATE,
        window_type="povey",
        preemphasis_coefficient=0.97,
        remove_dc_offset=True,
        low_freq=20,
        high_freq=0,
        use_energy=False,
    )
    if cmn:
        feats = feats - feats.mean(dim=0, keepdim=True)
    return feats


def energy_vad_concat(wav: np.ndarray, sr: int = SAMPLE_RATE, frame_ms: float = 20.0,
                      rel_db: float = -35.0, min_gap_ms: float = 300.0) -> np.ndarray:
    """Trim edges and drop internal silences longer than min_gap_ms (concatenate
    speech regions, like the engine does with Silero VAD)."""
    n = int(sr * frame_ms / 1000)
    if len(wav) < 4 * n:
        return wav
    nf = len(wav) // n
    fr = wav[: nf * n].reshape(nf, n).astype(np.float64)
    e = 10 * np.log10((fr ** 2).mean(axis=1) + 1e-10)
    ref = np.percentile(e, 95)
    sp = e > ref + rel_db
    if sp.sum() < 5:
        return wav
    # keep short gaps (hangover), drop long ones
    keep = sp.copy()
    gap = int(min_gap_ms / frame_ms)
    idx = np.where(sp)[0]
    for a, b in zip(idx[:-1], idx[1:]):
        if b - a <= gap:
            keep[a:b] = True
    # pad 2 frames around speech
    k2 = keep.copy()
    for d in (1, 2):
        k2[:-d] |= keep[d:]
        k2[d:] |= keep[:-d]
    out = fr[k2].reshape(-1).astype(wav.dtype)
    return out
