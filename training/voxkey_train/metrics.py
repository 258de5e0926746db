"""Detection metrics: EER, minDCF, Cllr."""
from __future__ import annotations

import numpy as np


def _rates(scores, labels):
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    order = np.argsort(scores, kind="mergesort")
    l = labels[order]
    nt, nn = max(l.sum(), 1), max((1 - l).sum(), 1)
    # threshold just above score[i]: misses = targets with score <= thr
    miss = np.concatenate([[0], np.cumsum(l)]) / nt
    fa = 1 - np.concatenate([[0], np.cumsum(1 - l)]) / nn
    thr = np.concatenate([[scores[order][0] - 1e-6], scores[order]])
    return miss, fa, thr


def eer(scores, labels):
    labels = np.asarray(labels)
    if labels.size == 0 or labels.min() == labels.max():
        return float("nan"), float("nan")
    miss, fa, thr = _rates(scores, labels)
    i = np.argmin(np.abs(miss - fa))
    # interpolate a little
    return float((miss[i] + fa[i]) / 2), float(thr[i])


def min_dcf(scores, labels, p_target=0.01, c_miss=1.0, c_fa=1.0):
    labels = np.asarray(labels)
    if labels.size == 0 or labels.min() == labels.max():
        return float("nan")
    miss, fa, _ = _rates(scores, labels)
    dcf = c_miss * p_target * miss + c_fa * (1 - p_target) * fa
    norm = min(c_miss * p_target, c_fa * (1 - p_target))
    return float(dcf.min() / norm)


def cllr(llrs, labels):
    """Cllr of scores interpreted as natural-log likelihood ratios."""
    llrs = np.asarray(llrs, dtype=np.float64)
    labels = np.asarray(labels)
    if labels.size == 0 or labels.min() == labels.max():
        return float("nan")
    t, n = llrs[labels == 1], llrs[labels == 0]
    c = 0.5 * (np.mean(np.logaddexp(0, -t)) + np.mean(np.logaddexp(0, n))) / np.log(2)
    return float(c)


def fit_logistic(x, y, balanced=True, iters=200):
    """1-D logistic regression p(y=1|x)=sigmoid(a*x+b), classes weighted equally. Newton's method."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    w = np.ones_like(x)
    if balanced:
        w[y == 1] = 0.5 / max((y == 1).sum(), 1)
        w[y == 0] = 0.5 / max((y == 0).sum(), 1)
    a, b = 1.0, 0.0
    for _ in range(iters):
        z = a * x + b
        p = 1 / (1 + np.exp(-z))
        g = np.array([np.sum(w * (p - y) * x), np.sum(w * (p - y))])
        r = w * p * (1 - p)
        H = np.array([[np.sum(r * x * x), np.sum(r * x)], [np.sum(r * x), np.sum(r)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(H, g)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-10:
            break
    return float(a), float(b)
