"""Whisper, rebuilt in PyTorch from a CTranslate2 model file's variables (no third-party model code).

The encoder returns its final output (after `ln_post`, what the decoder reads) and the hidden states of
every layer (the convolutional front plus positions, then each transformer block): the spoof head reads the
latter. The log-mel front-end is Whisper's (`whisper.audio.log_mel_spectrogram`) written in numpy.

How a recording is fed: at its own length, never padded to 30 s (the positional table is sliced to the
frames present); recordings longer than 30 s are cut into consecutive 30 s chunks, each encoded on its own.
Training, import parity and serving all do the same.
"""
from __future__ import annotations

import re

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .mel import slaney_mel

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 80
CHUNK_SECONDS = 30
CHUNK_FRAMES = CHUNK_SECONDS * SAMPLE_RATE // HOP
LOG_FLOOR = 1e-10
DYNAMIC_RANGE = 8.0


def log_mel(samples: np.ndarray) -> np.ndarray:
    """[80, n_samples // 160] Whisper log-mel of float samples in [-1, 1] (periodic Hann, centred STFT with
    reflect padding, last frame dropped, Slaney mel, log10 clamped at 1e-10, 8 decades below the peak, (x + 4) / 4)."""
    x = np.asarray(samples, np.float64)
    padded = np.pad(x, N_FFT // 2, mode="reflect")
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    n_frames = 1 + (len(padded) - N_FFT) // HOP
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:n_frames]
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2
    power = power[:-1]
    mel = slaney_mel(SAMPLE_RATE, N_FFT, N_MELS).astype(np.float64) @ power.T
    spec = np.log10(np.maximum(mel, LOG_FLOOR))
    spec = np.maximum(spec, spec.max() - DYNAMIC_RANGE)
    return ((spec + 4.0) / 4.0).astype(np.float32)


def chunks(mel: np.ndarray) -> list[np.ndarray]:
    return [mel[:, i:i + CHUNK_FRAMES] for i in range(0, max(mel.shape[1], 1), CHUNK_FRAMES)]


def _linear(w: np.ndarray, b: np.ndarray | None) -> nn.Linear:
    layer = nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
    layer.weight.data = torch.from_numpy(w.astype(np.float32))
    if b is not None:
        layer.bias.data = torch.from_numpy(b.astype(np.float32))
    return layer


def _layer_norm(v: dict, prefix: str) -> nn.LayerNorm:
    ln = nn.LayerNorm(v[f"{prefix}/gamma"].shape[0], eps=1e-5)
    ln.weight.data = torch.from_numpy(v[f"{prefix}/gamma"].astype(np.float32))
    ln.bias.data = torch.from_numpy(v[f"{prefix}/beta"].astype(np.float32))
    return ln


def _conv(v: dict, prefix: str, stride: int) -> nn.Conv1d:
    w = v[f"{prefix}/weight"]
    conv = nn.Conv1d(w.shape[1], w.shape[0], w.shape[2], stride=stride, padding=1)
    conv.weight.data = torch.from_numpy(w.astype(np.float32))
    conv.bias.data = torch.from_numpy(v[f"{prefix}/bias"].astype(np.float32))
    return conv


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n_heads: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    b, tq, d = q.shape
    tk = k.shape[1]
    dh = d // n_heads
    q = q.reshape(b, tq, n_heads, dh).transpose(1, 2)
    k = k.reshape(b, tk, n_heads, dh).transpose(1, 2)
    v = v.reshape(b, tk, n_heads, dh).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (dh ** -0.5)
    if mask is not None:
        scores = scores + mask
    out = torch.matmul(torch.softmax(scores, dim=-1), v)
    return out.transpose(1, 2).reshape(b, tq, d)


class EncoderBlock(nn.Module):
    def __init__(self, v: dict, prefix: str, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.attn_ln = _layer_norm(v, f"{prefix}/self_attention/layer_norm")
        self.qkv = _linear(v[f"{prefix}/self_attention/linear_0/weight"], v[f"{prefix}/self_attention/linear_0/bias"])
        self.out = _linear(v[f"{prefix}/self_attention/linear_1/weight"], v[f"{prefix}/self_attention/linear_1/bias"])
        self.mlp_ln = _layer_norm(v, f"{prefix}/ffn/layer_norm")
        self.fc1 = _linear(v[f"{prefix}/ffn/linear_0/weight"], v[f"{prefix}/ffn/linear_0/bias"])
        self.fc2 = _linear(v[f"{prefix}/ffn/linear_1/weight"], v[f"{prefix}/ffn/linear_1/bias"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, val = self.qkv(self.attn_ln(x)).chunk(3, dim=-1)
        x = x + self.out(_attend(q, k, val, self.n_heads))
        return x + self.fc2(F.gelu(self.fc1(self.mlp_ln(x))))


def layer_count(v: dict, side: str) -> int:
    return len({k.split("/")[1] for k in v if re.match(rf"{side}/layer_\d+/", k)})


class WhisperEncoder(nn.Module):
    """[B, 80, T] log-mel -> ([B, ceil(T/2), D] output, [B, L + 1, ceil(T/2), D] hidden states)."""

    def __init__(self, v: dict):
        super().__init__()
        n_heads = int(v["encoder/num_heads"])
        self.conv1 = _conv(v, "encoder/conv1", 1)
        self.conv2 = _conv(v, "encoder/conv2", 2)
        self.register_buffer("positions", torch.from_numpy(v["encoder/position_encodings/encodings"].astype(np.float32)))
        self.blocks = nn.ModuleList(EncoderBlock(v, f"encoder/layer_{i}", n_heads) for i in range(layer_count(v, "encoder")))
        self.ln_post = _layer_norm(v, "encoder/layer_norm")

    def forward(self, mel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)
        x = x + self.positions[: x.shape[1]]
        hidden = [x]
        for block in self.blocks:
            x = block(x)
            hidden.append(x)
        return self.ln_post(x), torch.stack(hidden, dim=1)
