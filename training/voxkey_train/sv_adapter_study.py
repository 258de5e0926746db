#!/usr/bin/env python3
"""A trained back-end instead of the LDA projection (issue 31, item 3's "linear adapter"): starting from the shipped
recipe's LDA (192 -> 176, the same train embeddings), train with additive-angular-margin softmax over the train
speakers either the LDA matrix itself (`linear`) or a residual MLP added to it (`mlp<hidden>`: unit((e - mean) W +
scale * MLP(e)), the MLP's last layer starting at zero so training starts from the LDA cosine). Each is scored like
the study's methods (sv_channel_study.evaluate: the quality-aware calibration refitted, FAR <= 1% in every block
with >= 100 non-targets, in-sample and at its held-out operating point, held_out). Result (docs/accuracy.md, "A trained
back-end"): lower EER, more genuine users refused at the decision; not kept.

  $VOXKEY_VENV/bin/python -m training.voxkey_train.sv_adapter_study --clean-cache C --channel-cache H --train-cache T \\
      --out training/results/sv-adapter-study-voxkey-speaker-v4-int8.json
"""
from __future__ import annotations

import argparse
import csv
import json
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .data import WORK
from .shipped_decision import load_cache
from .sv_channel_study import dev_trials, evaluate, lda, print_table, sides

PROJECTION_DIM = 176
MARGIN, SCALE = 0.2, 30.0


class Adapter(nn.Module):
    def __init__(self, mean, W, hidden, scale):
        super().__init__()
        self.mean = torch.tensor(mean, dtype=torch.float32)
        self.W = nn.Parameter(torch.tensor(W, dtype=torch.float32), requires_grad=hidden == 0)
        self.hidden = hidden
        if hidden:
            self.g1, self.g2 = nn.Linear(W.shape[0], hidden), nn.Linear(hidden, W.shape[1])
            nn.init.zeros_(self.g2.weight)
            nn.init.zeros_(self.g2.bias)
            self.scale = scale

    def forward(self, x):
        y = (x - self.mean) @ self.W
        return y + self.scale * self.g2(F.relu(self.g1(x))) if self.hidden else y


def train_adapter(T, speakers, mean, W, hidden, epochs, seed=0):
    torch.manual_seed(seed)
    classes, y = np.unique(speakers, return_inverse=True)
    Z = (T - mean) @ W
    net = Adapter(mean, W, hidden, float(np.median(np.linalg.norm(Z, axis=1))))
    centres = np.stack([Z[y == c].mean(0) for c in range(len(classes))])
    head = nn.Parameter(torch.tensor(centres / np.linalg.norm(centres, axis=1, keepdims=True), dtype=torch.float32))
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad] + [head], lr=1e-3, weight_decay=1e-4)
    X, Y = torch.tensor(T, dtype=torch.float32), torch.tensor(y)
    for _ in range(epochs):
        order = torch.randperm(len(X))
        for i in range(0, len(X), 256):
            idx = order[i:i + 256]
            cos = F.normalize(net(X[idx]), dim=1) @ F.normalize(head, dim=1).T
            target = F.one_hot(Y[idx], len(classes)).bool()
            logits = SCALE * torch.where(target, torch.cos(torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6)) + MARGIN), cos)
            loss = F.cross_entropy(logits, Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return lambda A: F.normalize(net(torch.tensor(A, dtype=torch.float32)), dim=1).detach().numpy().astype(np.float64)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clean-cache", required=True)
    p.add_argument("--channel-cache", required=True)
    p.add_argument("--train-cache", required=True)
    p.add_argument("--channel-dir", default=os.path.join(WORK, "sv-channel-dev"))
    p.add_argument("--train-list", default=os.path.join(WORK, "sv-channel-train", "trials", "train-channels.csv"))
    p.add_argument("--variants", default="linear:5,mlp256:3,mlp256:5,mlp256:10", help="adapter:epochs, comma-separated")
    p.add_argument("--max-far", type=float, default=0.01)
    p.add_argument("--out")
    a = p.parse_args()
    torch.set_num_threads(max(1, (os.cpu_count() or 1)))
    cache = {**load_cache(a.clean_cache), **load_cache(a.channel_cache, "ch:")}
    listed = {r[side] for r in csv.DictReader(open(a.train_list)) for side in ("enrol", "test")}
    train = {k: v for k, v in load_cache(a.train_cache).items() if k in listed}
    keys = sorted(train)
    speakers = np.array(["/".join(k.split("/")[1:3]) for k in keys])
    T = np.stack([train[k][0] for k in keys]).astype(np.float64)
    mean, W = lda(T, speakers, PROJECTION_DIM)
    clean, chan, qc, qh = dev_trials(cache, a.channel_dir)
    ce, ct, he, ht = (x.astype(np.float64) for x in (*sides(cache, clean, 0), *sides(cache, chan, 0)))
    unit = lambda Y: Y / np.linalg.norm(Y, axis=1, keepdims=True)  # noqa: E731
    projections = [(f"lda-{PROJECTION_DIM} (shipped recipe)", lambda X: unit((X - mean) @ W))]
    for variant in a.variants.split(","):
        kind, epochs = variant.split(":")
        hidden = 0 if kind == "linear" else int(kind.removeprefix("mlp"))
        projections.append((f"{kind}, {epochs} epochs", train_adapter(T, speakers, mean, W, hidden, int(epochs))))
    results = []
    for name, project in projections:
        s_clean, s_chan = np.sum(project(ce) * project(ct), 1), np.sum(project(he) * project(ht), 1)
        results.append(evaluate(name, s_clean, s_chan, qc, qh, clean, chan, a.max_far))
    print_table(results)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"trainEmbeddings": len(T), "trainSpeakers": len(set(speakers)), "maxFar": a.max_far, "methods": results},
                      f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
