"""Spoofing countermeasure: fixed in-graph spectral front-end + small LCNN (max-feature-map CNN).

Input  waveform [B, 64000] float32 in [-1, 1] (4 s @ 16 kHz)
Output logits   [B] = logit of P(bona fide)
"""
from __future__ import annotations


import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SR = 16000
WIN = 64000


def linear_fbank(n_fft=512, n_bands=64, sr=SR):
    """Triangular filters equally spaced on a LINEAR frequency axis 0..sr/2 (LFCC-style)."""
    nb = n_fft // 2 + 1
    freqs = np.linspace(0, sr / 2, nb)
    edges = np.linspace(0, sr / 2, n_bands + 2)
    fb = np.zeros((nb, n_bands), np.float32)
    for m in range(n_bands):
        l, c, r = edges[m], edges[m + 1], edges[m + 2]
        up = (freqs - l) / (c - l)
        down = (r - freqs) / (r - c)
        fb[:, m] = np.maximum(0, np.minimum(up, down))
    return fb


class SpecFrontEnd(nn.Module):
    """Pre-emphasis, 32 ms Hann frames / 10 ms hop DFT as a fixed Conv1d, power, linear
    triangular filterbank, log, per-window mean normalisation of each band. Exports to plain
    ONNX Conv/MatMul/Log ops (no STFT op needed)."""

    def __init__(self, n_fft=512, hop=160, n_bands=64):
        super().__init__()
        nb = n_fft // 2 + 1
        n = np.arange(n_fft)
        win = 0.5 - 0.5 * np.cos(2 * np.pi * n / n_fft)
        k = np.arange(nb)[:, None]
        ang = 2 * np.pi * k * n[None, :] / n_fft
        kern = np.concatenate([np.cos(ang) * win, -np.sin(ang) * win], 0).astype(np.float32)
        self.register_buffer("dft", torch.from_numpy(kern).unsqueeze(1))  # [2nb, 1, n_fft]
        self.register_buffer("fb", torch.from_numpy(linear_fbank(n_fft, n_bands)))  # [nb, n_bands]
        self.nb, self.hop = nb, hop

    def forward(self, wav):  # [B, N]
        x = torch.cat([wav[:, :1], wav[:, 1:] - 0.97 * wav[:, :-1]], dim=1).unsqueeze(1)
        spec = F.conv1d(x, self.dft, stride=self.hop)  # [B, 2nb, T]
        re, im = spec[:, : self.nb], spec[:, self.nb:]
        p = re * re + im * im
        e = torch.matmul(p.transpose(1, 2), self.fb)  # [B, T, bands]
        e = torch.log(e + 1e-8)
        e = e - e.mean(dim=1, keepdim=True)
        return e.transpose(1, 2).unsqueeze(1)  # [B, 1, bands, T]


class MFM(nn.Module):
    def forward(self, x):
        a, b = torch.chunk(x, 2, dim=1)
        return torch.max(a, b)


def conv_mfm(cin, cout, k, s=1, p=0):
    return nn.Sequential(nn.Conv2d(cin, 2 * cout, k, s, p), MFM())


class LCNN(nn.Module):
    def __init__(self, n_bands=64, ch=(16, 24, 32, 32), dropout=0.3):
        super().__init__()
        c1, c2, c3, c4 = ch
        self.net = nn.Sequential(
            conv_mfm(1, c1, 5, 1, 2), nn.MaxPool2d(2),                                   # 32 x 198
            conv_mfm(c1, c1, 1), nn.BatchNorm2d(c1), conv_mfm(c1, c2, 3, 1, 1), nn.MaxPool2d(2),  # 16 x 99
            nn.BatchNorm2d(c2), conv_mfm(c2, c2, 1), nn.BatchNorm2d(c2), conv_mfm(c2, c3, 3, 1, 1), nn.MaxPool2d(2),  # 8 x 49
            conv_mfm(c3, c3, 1), nn.BatchNorm2d(c3), conv_mfm(c3, c4, 3, 1, 1), nn.BatchNorm2d(c4),
            conv_mfm(c4, c4, 1), nn.BatchNorm2d(c4), conv_mfm(c4, c4, 3, 1, 1), nn.MaxPool2d(2),  # 4 x 24
        )
        fdim = c4 * (n_bands // 16)
        self.drop = nn.Dropout(dropout)
        self.fc1 = nn.Linear(2 * fdim, 64)
        self.fc2 = nn.Linear(64, 1)

    def embed(self, x):  # [B,1,F,T] -> [B,64] (fc1, before its ReLU)
        h = self.net(x)
        B, C, Fq, T = h.shape
        h = h.reshape(B, C * Fq, T)
        h = torch.cat([h.mean(dim=2), h.amax(dim=2)], dim=1)
        return self.fc1(self.drop(h))

    def forward(self, x):  # [B,1,F,T]
        h = F.relu(self.embed(x))
        return self.fc2(self.drop(h))[:, 0]


class SpoofCM(nn.Module):
    def __init__(self, n_bands=64):
        super().__init__()
        self.front = SpecFrontEnd(n_bands=n_bands)
        self.back = LCNN(n_bands=n_bands)

    def forward(self, waveform):
        return self.back(self.front(waveform))


OC_M_REAL, OC_M_FAKE, OC_ALPHA = 0.9, 0.2, 20.0


class SpoofCMOC(SpoofCM):
    """Same network, one-class softmax (Zhang et al. 2021) on the 64-d fc1 embedding: bona fide is
    pulled within a cosine margin of a learned centre, spoofs pushed away. The output is still a
    logit-like score: OC_ALPHA * (cos - (m_real + m_fake) / 2) (> 0 = bona fide)."""

    def __init__(self, n_bands=64):
        super().__init__(n_bands)
        self.center = nn.Parameter(torch.randn(64) * 0.1)
        self.cos = None

    def forward(self, waveform):
        e = self.back.embed(self.front(waveform))
        self.cos = F.cosine_similarity(e, self.center[None], dim=1)
        return OC_ALPHA * (self.cos - (OC_M_REAL + OC_M_FAKE) / 2)


def oc_softmax_loss(cos, y):
    """y = 1 bona fide, 0 spoof."""
    z = torch.where(y > 0.5, OC_M_REAL - cos, cos - OC_M_FAKE)
    return F.softplus(OC_ALPHA * z).mean()


def build_cm(arch="lcnn-lfb64"):
    if arch == "lcnn-lfb64":
        return SpoofCM(64)
    if arch == "lcnn-lfb64-oc":
        return SpoofCMOC(64)
    raise ValueError(arch)
