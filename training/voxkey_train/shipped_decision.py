"""The engine's speaker decision, for the studies that score cached embeddings the way it does: the clip cache
`npm run eval` writes, the manifest entry's embedding projection (packages/engine/src/scoring/projection.ts), its PLDA
(plda.ts) and the calibration's channel terms (calibration.ts CHANNEL_FEATURES, channelTerm)."""
from __future__ import annotations

import base64
import hashlib
import json
import os

import numpy as np

MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "models")
FEATURES = ["minBandwidthKHz", "bandwidthGapKHz", "minDecayHundredDbPerS", "maxSpectralHoleRatio", "minSnrTenDb", "minLogSpeech",
            "narrowEitherKHz"]
KNEE_KHZ = 5.5


def load_cache(path, prefix=""):
    """clip -> (embedding, quality [speech, snr, bandwidth, holes, decay]) from npm run eval's cache."""
    out = {}
    for clip, r in json.load(open(path)).items():
        e = np.frombuffer(base64.b64decode(r["e"]), dtype=np.float32)
        q = r.get("q") or [0.0, 0.0, 0.0]
        out[prefix + clip] = (e, np.array([r["speech"], r.get("snr", 0.0), *q], np.float64))
    return out


def features(qe, qt):
    """calibration.ts CHANNEL_FEATURES for rows of enrolment and test quality (load_cache's columns)."""
    c = lambda x, lo, hi: np.clip(x, lo, hi)  # noqa: E731
    bwe, bwt = c(qe[:, 2], 0, 8000), c(qt[:, 2], 0, 8000)
    return np.stack([
        np.minimum(bwe, bwt) / 1000, np.abs(bwe - bwt) / 1000,
        np.minimum(c(qe[:, 4], 0, 1000), c(qt[:, 4], 0, 1000)) / 100,
        np.maximum(c(qe[:, 3], 0, 1), c(qt[:, 3], 0, 1)),
        np.minimum(c(qe[:, 1], 0, 40), c(qt[:, 1], 0, 40)) / 10,
        np.log(np.minimum(c(qe[:, 0], 0, 600), c(qt[:, 0], 0, 600)) + 0.5),
        np.maximum(0, KNEE_KHZ - np.minimum(bwe, bwt) / 1000),
    ], 1)


def manifest_entry(model, manifest_path=None):
    with open(manifest_path or os.path.join(MODELS_DIR, "manifest.json")) as f:
        return next(m for m in json.load(f)["models"] if m["name"] == model)


def projector(entry, models_dir=MODELS_DIR):
    """rows -> unit((rows - mean) W) with the entry's embeddingProjection; unit rows without one."""
    spec = entry.get("embeddingProjection")
    if spec:
        values = np.fromfile(os.path.join(models_dir, spec["file"]), dtype="<f4").astype(np.float64)
        mean, W = values[: spec["inputDim"]], values[spec["inputDim"]:].reshape(spec["inputDim"], spec["outputDim"])
    else:
        mean, W = 0.0, None

    def project(rows):
        y = np.asarray(rows, np.float64) - mean
        if W is not None:
            y = y @ W
        return y / np.linalg.norm(y, axis=-1, keepdims=True)
    return project


def plda_scores(A, B, mean, Q, P):
    """plda.ts pldaScore for every pair of rows: [len(A), len(B)] of a'Qa/2 + b'Qb/2 + a'Pb on centred rows."""
    a, b = np.asarray(A, np.float64) - mean, np.asarray(B, np.float64) - mean
    return 0.5 * np.einsum("ij,jk,ik->i", a, Q, a)[:, None] + 0.5 * np.einsum("ij,jk,ik->i", b, Q, b)[None] + a @ P @ b.T


def plda_pair_scores(a, b, mean, Q, P):
    """plda_scores for each pair of rows (a[i], b[i]) only."""
    a, b = np.asarray(a, np.float64) - mean, np.asarray(b, np.float64) - mean
    return 0.5 * np.einsum("ij,jk,ik->i", a, Q, a) + 0.5 * np.einsum("ij,jk,ik->i", b, Q, b) + np.einsum("ij,jk,ik->i", a, P, b)


def read_plda(entry, models_dir=MODELS_DIR, n_sample=False):
    """(mean, Q, P) of the entry's plda file (its sha256 and size checked, as plda.ts loads it), or None without one;
    n_sample: (mean, Q, P, V, lambda), V and lambda None when the file has none."""
    spec = entry.get("plda")
    if not spec:
        return None
    d = spec["dim"]
    floats = d * (1 + 2 * d) + (d * d + d if spec.get("nSample") else 0)
    with open(os.path.join(models_dir, spec["file"]), "rb") as f:
        blob = f.read()
    if hashlib.sha256(blob).hexdigest() != spec["sha256"] or len(blob) != 4 * floats:
        raise SystemExit(f"{spec['file']}: sha256 or size differs from the manifest's plda of {entry['name']}")
    values = np.frombuffer(blob, dtype="<f4").astype(np.float64)
    block = [values[d + i * d * d: d + (i + 1) * d * d].reshape(d, d) for i in range(3 if spec.get("nSample") else 2)]
    if not n_sample:
        return values[:d], block[0], block[1]
    if not spec.get("nSample"):
        return values[:d], block[0], block[1], None, None
    return values[:d], block[0], block[1], block[2], values[d + 3 * d * d:]


def joint_basis(B, W):
    """V, lambda with V'WV = I and V'BV = diag(lambda) (plda.ts pldaMeanScore's basis)."""
    L = np.linalg.cholesky(W)
    Li = np.linalg.inv(L)
    lam, U = np.linalg.eigh(Li @ B @ Li.T)
    return Li.T @ U, lam


def mean_scores(m, T, mean, V, lam, n):
    """plda.ts pldaMeanScore for the (not re-normalised) mean m of n projected recordings against each row of T."""
    x = (np.asarray(m, np.float64) - mean) @ V
    y = (np.asarray(T, np.float64) - mean) @ V

    def terms(k):
        se = lam + 1 / k
        s = se - lam * lam / (lam + 1)
        return se, s, -0.5 * (np.log(s) - np.log(se))
    se, s, c = terms(n)
    st = lam + 1
    return (0.5 * np.sum(x * x * (1 / se - 1 / s)) - 0.5 * (y * y) @ (lam * lam / (st * st * s)) + y @ (x * lam / (st * s))
            + np.sum(c - terms(1)[2]))


def mean_comparer(entry, models_dir=MODELS_DIR):
    """(E, T) -> [len(T)]: the score the calibration maps for a voiceprint of the projected rows E (its mean
    embedding) against each projected row of T, as probe-score.ts scores it: n-sample PLDA when the file has the
    basis, else the unit mean compared as one embedding."""
    plda = read_plda(entry, models_dir, n_sample=True)
    compare = comparer(entry, models_dir)

    def score(E, T):
        E = np.asarray(E, np.float64)
        m = E.mean(0)
        if len(E) == 1 or plda is None or plda[3] is None:
            return compare((m / np.linalg.norm(m))[None], T)[0]
        return mean_scores(m, T, plda[0], plda[3], plda[4], len(E))
    return score


def comparer(entry, models_dir=MODELS_DIR, pairs=False):
    """(A, B) -> [len(A), len(B)]: the score the calibration maps (probe-score.ts comparisonScore) for every pair of
    projected rows: the entry's PLDA, else the cosine (projected rows are unit length). pairs: [len(A)] for the pairs
    (A[i], B[i]) only."""
    plda = read_plda(entry, models_dir)
    if plda:
        return (lambda A, B: plda_pair_scores(A, B, *plda)) if pairs else (lambda A, B: plda_scores(A, B, *plda))
    if pairs:
        return lambda A, B: np.sum(np.asarray(A) * np.asarray(B), 1)
    return lambda A, B: np.asarray(A) @ np.asarray(B).T


def channel_weights(entry):
    """The calibration's channel-term weights in FEATURES order, or None without channel terms."""
    channel = entry.get("calibration", {}).get("quality", {}).get("channel")
    return np.array([channel["weights"][f] for f in FEATURES]) if channel else None
