"""Whisper's text decoder, rebuilt in PyTorch from a CTranslate2 model file's variables (no third-party model
code), with a key/value cache for greedy decoding.

Pre-LN blocks: masked self-attention (fused q/k/v `linear_0`), cross-attention over the encoder's output (`q`
from `linear_0`, fused k/v `linear_1` computed once per recording), GELU MLP; a final layer norm; logits =
x @ embeddings^T (the projection is tied to the token embeddings). Positions are learned (448 of them).

Cache layout (what the ONNX graphs of training/voxkey_train/export_whisper_decoder.py take and return, so the engine's
port keeps it): the self-attention cache `past_kv` is one tensor [L, 2, B, P, D] (layer, key/value, batch,
past tokens, model width, heads not split) and the cross-attention cache `cross_kv` is [L, 2, B, T, D]
(T = encoder frames). Greedy decoding with timestamps off (`greedy`) applies the model's `suppress_ids`
(config.json) at every step and `suppress_ids_begin` (blank and end-of-text) at the first, as CTranslate2's
`generate(..., beam_size=1)` does.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .whisper import _attend, _layer_norm, _linear, layer_count

SOT = 50257            # <|startoftranscript|>
NO_TIMESTAMPS = 50362  # <|notimestamps|> (tiny.en)
EOT = 50256            # <|endoftext|>
PROMPT = (SOT, NO_TIMESTAMPS)
MAX_POSITIONS = 448
MAX_NEW_TOKENS = MAX_POSITIONS // 2


class DecoderBlock(nn.Module):
    def __init__(self, v: dict, prefix: str, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        sa, ca, ffn = f"{prefix}/self_attention", f"{prefix}/attention", f"{prefix}/ffn"
        self.attn_ln = _layer_norm(v, f"{sa}/layer_norm")
        self.qkv = _linear(v[f"{sa}/linear_0/weight"], v[f"{sa}/linear_0/bias"])
        self.attn_out = _linear(v[f"{sa}/linear_1/weight"], v[f"{sa}/linear_1/bias"])
        self.cross_ln = _layer_norm(v, f"{ca}/layer_norm")
        self.cross_q = _linear(v[f"{ca}/linear_0/weight"], v[f"{ca}/linear_0/bias"])
        self.cross_kv = _linear(v[f"{ca}/linear_1/weight"], v[f"{ca}/linear_1/bias"])
        self.cross_out = _linear(v[f"{ca}/linear_2/weight"], v[f"{ca}/linear_2/bias"])
        self.mlp_ln = _layer_norm(v, f"{ffn}/layer_norm")
        self.fc1 = _linear(v[f"{ffn}/linear_0/weight"], v[f"{ffn}/linear_0/bias"])
        self.fc2 = _linear(v[f"{ffn}/linear_1/weight"], v[f"{ffn}/linear_1/bias"])

    def forward(self, x, past_k, past_v, cross_k, cross_v, mask):
        q, k, val = self.qkv(self.attn_ln(x)).chunk(3, dim=-1)
        k = torch.cat([past_k, k], dim=1)
        val = torch.cat([past_v, val], dim=1)
        x = x + self.attn_out(_attend(q, k, val, self.n_heads, mask))
        x = x + self.cross_out(_attend(self.cross_q(self.cross_ln(x)), cross_k, cross_v, self.n_heads))
        x = x + self.fc2(F.gelu(self.fc1(self.mlp_ln(x))))
        return x, k, val


def causal_mask(s: int, p: int, like: torch.Tensor) -> torch.Tensor:
    """[S, P + S] additive mask: new token i (at position p + i) sees positions 0 .. p + i."""
    rows = torch.arange(s, device=like.device).unsqueeze(1) + p
    cols = torch.arange(p + s, device=like.device).unsqueeze(0)
    return torch.where(cols > rows, torch.tensor(float("-inf"), dtype=like.dtype), torch.tensor(0.0, dtype=like.dtype))


class WhisperDecoder(nn.Module):
    def __init__(self, v: dict):
        super().__init__()
        self.n_heads = int(v["decoder/num_heads"])
        if int(v["decoder/scale_embeddings"]) or int(v["decoder/start_from_zero_embedding"]) or not int(v["decoder/pre_norm"]):
            raise ValueError("not a Whisper decoder: expected unscaled embeddings and pre-norm blocks")
        if not np.array_equal(v["decoder/projection/weight"], v["decoder/embeddings/weight"]):
            raise ValueError("expected the output projection tied to the token embeddings")
        self.register_buffer("embeddings", torch.from_numpy(v["decoder/embeddings/weight"].astype(np.float32)))
        self.register_buffer("positions", torch.from_numpy(v["decoder/position_encodings/encodings"].astype(np.float32)))
        self.blocks = nn.ModuleList(DecoderBlock(v, f"decoder/layer_{i}", self.n_heads) for i in range(layer_count(v, "decoder")))
        self.ln = _layer_norm(v, "decoder/layer_norm")
        self.width = self.embeddings.shape[1]

    @property
    def n_layers(self) -> int:
        return len(self.blocks)

    def cross_kv(self, encoder_out: torch.Tensor) -> torch.Tensor:
        """[B, T, D] encoder output -> [L, 2, B, T, D] cross-attention keys and values."""
        return torch.stack([torch.stack(b.cross_kv(encoder_out).chunk(2, dim=-1)) for b in self.blocks])

    def empty_cache(self, batch: int) -> torch.Tensor:
        return torch.zeros(self.n_layers, 2, batch, 0, self.width)

    def step(self, tokens: torch.Tensor, past_kv: torch.Tensor, cross_kv: torch.Tensor, all_logits: bool = False):
        """tokens [B, S] (int64) after P cached ones -> (logits [B, V] of the last token, or [B, S, V] with
        all_logits; present_kv [L, 2, B, P + S, D])."""
        p, s = past_kv.shape[3], tokens.shape[1]
        x = F.embedding(tokens, self.embeddings) + self.positions[p:p + s]
        mask = causal_mask(s, p, x)
        present = []
        for i, block in enumerate(self.blocks):
            x, k, val = block(x, past_kv[i, 0], past_kv[i, 1], cross_kv[i, 0], cross_kv[i, 1], mask)
            present.append(torch.stack([k, val]))
        x = self.ln(x if all_logits else x[:, -1])
        return x @ self.embeddings.T, torch.stack(present)


def load_generation_config(model_dir: Path) -> dict:
    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    return {"suppress_ids": list(cfg["suppress_ids"]), "suppress_ids_begin": list(cfg["suppress_ids_begin"])}


def suppress(logits: np.ndarray, ids: list[int]) -> np.ndarray:
    out = np.array(logits, np.float32, copy=True)
    out[..., ids] = -np.inf
    return out


def greedy_decode(step_fn, cross_kv, empty_past, gen: dict, prompt=PROMPT, max_new_tokens: int = MAX_NEW_TOKENS,
                  return_logits: bool = False, allowed: np.ndarray | None = None):
    """Greedy decoding for one recording (batch 1) with any step function
    step_fn(tokens [1, S] int64, past, cross_kv) -> (logits [1, V], present): the PyTorch module or an ONNX
    session. Returns the generated token ids (without the prompt and the final end-of-text) and, with
    return_logits, each step's raw logits [V]. `allowed` (bool [V], optional): constrained decoding, every other
    token's logit set to -inf (end-of-text is always allowed), e.g. digit tokens for a digit challenge. At most max_new_tokens tokens (CTranslate2's generate stops at 224
    = its max_length 448 // 2, like openai-whisper's sample_len; a phrase checker can stop far earlier)."""
    tokens = np.array([list(prompt)], np.int64)
    past = empty_past
    out, logits_seen = [], []
    while len(out) < max_new_tokens:
        logits, past = step_fn(tokens, past, cross_kv)
        logits = np.asarray(logits, np.float32)[0]
        if return_logits:
            logits_seen.append(logits)
        banned = gen["suppress_ids"] + (gen["suppress_ids_begin"] if not out else [])
        scores = suppress(logits, banned)
        if allowed is not None:
            scores[~allowed] = -np.inf
            scores[EOT] = logits[EOT] if out else -np.inf
        token = int(np.argmax(scores))
        if token == EOT:
            break
        out.append(token)
        tokens = np.array([[token]], np.int64)
    return (out, logits_seen) if return_logits else out


def torch_step_fn(decoder: WhisperDecoder):
    def fn(tokens, past, cross):
        with torch.no_grad():
            logits, present = decoder.step(torch.from_numpy(tokens), past, cross)
        return logits.numpy(), present
    return fn
