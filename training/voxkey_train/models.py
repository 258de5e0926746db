"""Small speaker-embedding networks for CPU inference (input [B, T, 80] fbank-CMN)."""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- ECAPA-TDNN
class SE(nn.Module):
    def __init__(self, c, b=128):
        super().__init__()
        self.fc1 = nn.Conv1d(c, b, 1)
        self.fc2 = nn.Conv1d(b, c, 1)

    def forward(self, x):
        s = x.mean(dim=2, keepdim=True)
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(s))))


class Res2Block(nn.Module):
    def __init__(self, c, k=3, d=1, scale=8):
        super().__init__()
        self.scale = scale
        w = c // scale
        self.conv1 = nn.Conv1d(c, c, 1)
        self.bn1 = nn.BatchNorm1d(c)
        self.convs = nn.ModuleList([nn.Conv1d(w, w, k, dilation=d, padding=d * (k // 2)) for _ in range(scale - 1)])
        self.bns = nn.ModuleList([nn.BatchNorm1d(w) for _ in range(scale - 1)])
        self.conv3 = nn.Conv1d(c, c, 1)
        self.bn3 = nn.BatchNorm1d(c)
        self.se = SE(c)

    def forward(self, x):
        r = x
        out = self.bn1(F.relu(self.conv1(x)))
        sp = torch.chunk(out, self.scale, dim=1)
        outs = []
        y = sp[0]
        for i in range(self.scale - 1):
            y = sp[i] if i == 0 else y + sp[i]
            y = self.bns[i](F.relu(self.convs[i](y)))
            outs.append(y)
        outs.append(sp[self.scale - 1])
        out = torch.cat(outs, dim=1)
        out = self.bn3(F.relu(self.conv3(out)))
        return self.se(out) + r


class AttentiveStatsPool(nn.Module):
    """Channel- and context-dependent attentive statistics pooling (ECAPA style)."""

    def __init__(self, c, att=128):
        super().__init__()
        self.att = nn.Sequential(nn.Conv1d(3 * c, att, 1), nn.ReLU(), nn.BatchNorm1d(att), nn.Tanh(),
                                 nn.Conv1d(att, c, 1))

    def forward(self, x):  # x [B, C, T]
        mu = x.mean(dim=2, keepdim=True)
        sd = torch.sqrt((x - mu).pow(2).mean(dim=2, keepdim=True).clamp(min=1e-5))
        T = x.shape[2]
        ctx = torch.cat([x, mu.expand(-1, -1, T), sd.expand(-1, -1, T)], dim=1)
        w = torch.softmax(self.att(ctx), dim=2)
        m = (x * w).sum(dim=2)
        s = torch.sqrt(((x * x) * w).sum(dim=2) - m * m).clamp(min=1e-5) if False else \
            torch.sqrt(((x * x) * w).sum(dim=2) - m * m + 1e-5).clamp(min=1e-5)
        return torch.cat([m, s], dim=1)


class ECAPA(nn.Module):
    def __init__(self, C=256, emb=192, n_mels=80):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, C, 5, padding=2)
        self.bn1 = nn.BatchNorm1d(C)
        self.l1 = Res2Block(C, 3, 2)
        self.l2 = Res2Block(C, 3, 3)
        self.l3 = Res2Block(C, 3, 4)
        M = 3 * C
        self.l4 = nn.Conv1d(3 * C, M, 1)
        self.pool = AttentiveStatsPool(M)
        self.bn5 = nn.BatchNorm1d(2 * M)
        self.fc6 = nn.Linear(2 * M, emb)
        self.bn6 = nn.BatchNorm1d(emb)

    def forward(self, feats):  # [B, T, 80]
        x = feats.transpose(1, 2)
        x = self.bn1(F.relu(self.conv1(x)))
        x1 = self.l1(x)
        x2 = self.l2(x + x1)
        x3 = self.l3(x + x1 + x2)
        x = F.relu(self.l4(torch.cat([x1, x2, x3], dim=1)))
        x = self.bn5(self.pool(x))
        return self.bn6(self.fc6(x))


# ---------------------------------------------------------------- thin ResNet
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        o = F.relu(self.b1(self.c1(x)))
        o = self.b2(self.c2(o))
        return F.relu(o + (x if self.sc is None else self.sc(x)))


class ThinResNet(nn.Module):
    """Thin ResNet (BasicBlocks) with attentive statistics pooling; channels base..8*base."""

    def __init__(self, layers=(2, 2, 2, 2), base=16, emb=192, n_mels=80):
        super().__init__()
        self.conv1 = nn.Conv2d(1, base, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(base)
        chans = [base, 2 * base, 4 * base, 8 * base]
        blocks = []
        cin = base
        for i, (n, c) in enumerate(zip(layers, chans)):
            for j in range(n):
                blocks.append(BasicBlock(cin, c, 2 if (j == 0 and i > 0) else 1))
                cin = c
        self.blocks = nn.Sequential(*blocks)
        fdim = chans[-1] * (n_mels // 8)
        self.pool = AttentiveStatsPool(fdim)
        self.bn5 = nn.BatchNorm1d(2 * fdim)
        self.fc6 = nn.Linear(2 * fdim, emb)
        self.bn6 = nn.BatchNorm1d(emb)

    def forward(self, feats):  # [B, T, 80]
        x = feats.transpose(1, 2).unsqueeze(1)  # [B,1,F,T]
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.blocks(x)
        B, C, Fq, T = x.shape
        x = x.reshape(B, C * Fq, T)
        x = self.bn5(self.pool(x))
        return self.bn6(self.fc6(x))


def build_model(arch: str) -> nn.Module:
    if arch == "ecapa256":
        return ECAPA(C=256, emb=192)
    if arch == "ecapa384":
        return ECAPA(C=384, emb=192)
    if arch == "resnet-thin":
        return ThinResNet(layers=(2, 2, 2, 2), base=16, emb=192)
    if arch == "resnet34-thin":
        return ThinResNet(layers=(3, 4, 6, 3), base=16, emb=192)
    raise ValueError(arch)


class AAMSoftmax(nn.Module):
    def __init__(self, emb, n_cls, m=0.2, s=30.0):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n_cls, emb) * 0.01)
        self.m, self.s = m, s

    def forward(self, x, y, m=None):
        m = self.m if m is None else m
        cos = F.linear(F.normalize(x), F.normalize(self.w)).clamp(-1 + 1e-7, 1 - 1e-7)
        sin = torch.sqrt(1 - cos * cos)
        phi = cos * math.cos(m) - sin * math.sin(m)
        th, mm = math.cos(math.pi - m), math.sin(math.pi - m) * m
        phi = torch.where(cos > th, phi, cos - mm)
        oh = F.one_hot(y, cos.shape[1]).to(cos.dtype)
        logits = self.s * (oh * phi + (1 - oh) * cos)
        return F.cross_entropy(logits, y), (cos.argmax(1) == y).float().mean()
