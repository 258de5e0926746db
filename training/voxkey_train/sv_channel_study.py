#!/usr/bin/env python3
"""Robust comparison through user channels (issue 31, item 3): which scoring, beside the quality-aware calibration,
holds up on BOTH the clean dev trials and the channel dev set?

Reads the engine's per-clip eval caches (embeddings and measured quality, `npm run eval`), so every method scores
the embeddings the engine made. Methods (each followed by the same quality-aware calibration as `npm run eval --
--write-calibration --channel-terms`: channel weights that level the impostor-score tail, then the offset that keeps
FAR <= --max-far in every block with >= 1/max-far non-targets):
  cosine         plain cosine (the engine's scoring before the projection and PLDA)
  bw-match       bandwidth matching: when the test is narrowband (measured < NARROW_HZ) and the enrolment wider,
                 the enrolment recording low-passed to 3.8 kHz is embedded instead (a voiceprint would keep a
                 second, narrowband embedding per sample)
  asnorm-chan    adaptive s-norm (top-100) against a cohort of train speakers whose clips come through channels
  lda-chan       LDA (192 -> LDA_DIM) + length norm, trained on train speakers' clips as they are and through a
                 channel, then cosine (--lda-dims: one row per dimension)
  centred        the train embeddings' mean subtracted, length norm, cosine
  plda           two-covariance PLDA on the LDA projections (length-normed) of each --lda-dims, the log-likelihood ratio
                 (the engine's scoring since 2026-11-29, sixth session: PLDA on the shipped LDA 176, --write-plda)
--enrol-augment MODEL: instead of the study, what it buys under MODEL's projection to embed each enrolment recording
also through fixed simulated channels (channel_devset --enrol-augment): the voiceprint sample is the mean of the unit
embeddings of the recording as it is and through each augmentation of a subset, projected when compared; every
subset is scored on both sets with the calibration refitted as above. Needs --clean-cache and --channel-cache (the
latter with the eval of trials/enrol-augment.csv).
--enrolment-guidance MODEL: instead of the study, what a second enrolment recording through another channel buys
under MODEL's shipped decision (its manifest entry: projection, PLDA, calibration, channel and samples terms).
Figures: EER per set and per test channel, and FAR/FRR at the fitted decision (fitted on all trials of both sets,
as --write-calibration does), and at a held-out operating point (held_out: the decision fitted on half the dev
speakers, counted on the other half). Check a winner on `npm run eval`'s held-out operating point before shipping
it too (AS-norm won in-sample and lost there: docs/accuracy.md, "A more robust comparison").

  # after channel_devset --study and an eval of each of its lists (the caches' names are printed by npm run eval):
  $VOXKEY_VENV/bin/python -m training.voxkey_train.sv_channel_study --clean-cache C --channel-cache H --lowpass-cache L --train-cache T \
      --out training/results/sv-channel-study-voxkey-speaker-v4.json

The shipped projection (docs/accuracy.md, "The LDA projection"): every train speaker, two channels per clip
(channel_devset --study --train-speakers all --train-min-clips 1 --train-max-clips 20 --train-channel-draws 2), then
  ... --lda-dims 96,128,160,176,191 --write-projection models/voxkey-speaker-v4-lda.f32 --projection-dim 176 \
      --out training/results/sv-channel-study-voxkey-speaker-v4-int8.json
which writes the file and names it (embeddingProjection) in both v4 entries of models/manifest.json; refit the
calibration on the projected scores afterwards (npm run eval -- ... --write-calibration --channel-terms). The shipped
PLDA (since the sixth session of 2026-11-29) is fitted through the projection the manifest names:
  ... --lda-dims 96,128,160,176 --write-plda models/voxkey-speaker-v4-plda.f32 --out training/results/sv-channel-study-plda-voxkey-speaker-v4-int8.json
and a new projection then needs --write-plda beside --write-projection (refused otherwise), and the calibration refit.
"""
from __future__ import annotations

import argparse
import collections
import csv
import hashlib
import itertools
import json
import os
import re
import zlib

import numpy as np

from .data import DATA_DIR, WORK
from .shipped_decision import (FEATURES, channel_weights, comparer, features, joint_basis, load_cache, manifest_entry, mean_comparer,
                               plda_pair_scores, projector)

DATA = DATA_DIR
NARROW_HZ = 4700
LDA_DIM = 128
def tail_weights(F, s, quantile, sample_weight, iters=200):
    """calibration.ts fitTailWeights: quantile regression (IRLS) of non-target scores on the features; minus the slopes."""
    X = np.hstack([F, np.ones((len(F), 1))])
    b = np.linalg.solve((X * sample_weight[:, None]).T @ X + 1e-8 * np.eye(X.shape[1]), (X * sample_weight[:, None]).T @ s)
    for _ in range(iters):
        r = s - X @ b
        w = sample_weight * np.where(r > 0, quantile, 1 - quantile) / np.maximum(np.abs(r), 1e-4)
        nb = np.linalg.solve((X * w[:, None]).T @ X + 1e-8 * np.eye(X.shape[1]), (X * w[:, None]).T @ s)
        done = np.abs(nb - b).max() < 1e-7
        b = nb
        if done:
            break
    return -b[:-1]


def eer(s, y):
    order = np.argsort(-s)
    y = y[order]
    tp = np.cumsum(y) / max(1, y.sum())
    fp = np.cumsum(~y) / max(1, (~y).sum())
    i = np.argmin(np.abs((1 - tp) - fp))
    return float(((1 - tp[i]) + fp[i]) / 2)


def block_threshold(non, max_far):
    s = np.sort(non)[::-1]
    return s[min(int(np.floor(max_far * len(s) + 1e-9)), len(s) - 1)] + 1e-9


class Trials:
    def __init__(self, rows, set_name):
        self.rows, self.set = rows, set_name
        self.y = np.array([r["target"] == "1" for r in rows])
        self.test_channel = np.array([r.get("test_channel", "") for r in rows])
        self.enrol_channel = np.array([r.get("enrol_channel", "") for r in rows])
        self.corpus = np.array([r["enrol"].split("/")[1] if r["enrol"].split("/")[1] == r["test"].split("/")[1] else "" for r in rows])


def blocks(clean, chan):
    """(name, set, mask) of the blocks the decision is fitted on: the eval's clean corpus blocks and the channel ones."""
    out = [("clean:pooled", "clean", np.ones(len(clean.y), bool)), ("channels:pooled", "chan", np.ones(len(chan.y), bool)),
           ("channels:pair:same", "chan", chan.enrol_channel == chan.test_channel), ("channels:pair:different", "chan", chan.enrol_channel != chan.test_channel)]
    out += [(f"clean:corpus:{c}", "clean", clean.corpus == c) for c in sorted(set(clean.corpus)) if c]
    out += [(f"channels:test:{c}", "chan", chan.test_channel == c) for c in sorted(set(chan.test_channel))]
    return out


def min_nontargets(max_far):
    return int(np.ceil(1 / max_far - 1e-9))


def fit_decision(s_clean, s_chan, f_clean, f_chan, clean, chan, max_far):
    """The quality-aware calibration (as eval --channel-terms): channel weights levelling the impostor-score tail of
    the three pair kinds (clean, channel different, channel same), then the threshold keeping FAR <= max_far in every
    block with >= 1/max_far non-targets. f_*: each set's channel features. -> (weights, threshold)."""
    F = np.vstack([f_clean, f_chan])
    s = np.concatenate([s_clean, s_chan])
    y = np.concatenate([clean.y, chan.y])
    same = chan.enrol_channel == chan.test_channel
    kind = np.concatenate([np.zeros(len(s_clean), int), np.where(same, 2, 1)])
    non = ~y
    counts = np.bincount(kind[non], minlength=3)
    wts = tail_weights(F[non], s[non], 1 - max_far, (non.sum() / 3 / np.maximum(counts, 1))[kind[non]])
    adjusted = {"clean": s_clean + f_clean @ wts, "chan": s_chan + f_chan @ wts}
    labels = {"clean": clean.y, "chan": chan.y}
    thr = max(block_threshold(adjusted[st][m & ~labels[st]], max_far)
              for _, st, m in blocks(clean, chan) if (m & ~labels[st]).sum() >= min_nontargets(max_far))
    return wts, thr


def evaluate(name, s_clean, s_chan, qc, qh, clean, chan, max_far):
    """Fit the quality-aware calibration on both sets (fit_decision), then report EERs and FAR/FRR at the fitted
    decision, in-sample and held out (held_out)."""
    f_clean, f_chan = features(*qc), features(*qh)
    wts, thr = fit_decision(s_clean, s_chan, f_clean, f_chan, clean, chan, max_far)
    adj_clean, adj_chan = s_clean + f_clean @ wts, s_chan + f_chan @ wts
    min_non = min_nontargets(max_far)
    bl = blocks(clean, chan)
    rep = {"method": name, "channelWeights": dict(zip(FEATURES, wts.round(5).tolist())), "blocks": {}}
    for bname, st, m in bl:
        a, yy, raw = (adj_clean, clean.y, s_clean) if st == "clean" else (adj_chan, chan.y, s_chan)
        a, yy, raw = a[m], yy[m], raw[m]
        if yy.sum() == 0 or (~yy).sum() == 0:
            continue
        rep["blocks"][bname] = {"targets": int(yy.sum()), "nontargets": int((~yy).sum()), "eerRaw": eer(raw, yy), "eer": eer(a, yy),
                                "far": float((a[~yy] >= thr).mean()), "frr": float((a[yy] < thr).mean())}
    chan_blocks = {k: v for k, v in rep["blocks"].items() if k.startswith("channels:test:")}
    worst = max(chan_blocks, key=lambda k: chan_blocks[k]["eer"])
    rep["heldOut"] = held_out(s_clean, s_chan, f_clean, f_chan, clean, chan, max_far)
    rep["summary"] = {"cleanEer": rep["blocks"]["clean:pooled"]["eer"], "cleanFrr": rep["blocks"]["clean:pooled"]["frr"],
                      "channelEer": rep["blocks"]["channels:pooled"]["eer"], "channelFrr": rep["blocks"]["channels:pooled"]["frr"],
                      "worstTestChannel": worst, "worstTestChannelEer": chan_blocks[worst]["eer"],
                      "maxFarAnyBlock": max(v["far"] for v in rep["blocks"].values() if v["nontargets"] >= min_non)}
    return rep


def dev_trials(cache, channel_dir):
    """The clean and channel dev trials whose two clips are in `cache` (channel set clips keyed "ch:<clip>"), and each
    set's measured quality (enrolment rows, test rows): -> clean, chan, qc, qh."""
    clean_rows = list(csv.DictReader(open(os.path.join(DATA, "trials", "sv-dev.csv"))))
    chan_rows = [{**r, "enrol": "ch:" + r["enrol"], "test": "ch:" + r["test"]}
                 for r in csv.DictReader(open(os.path.join(channel_dir, "trials", "sv-dev-channels.csv")))]
    clean, chan = (Trials([r for r in rows if r["enrol"] in cache and r["test"] in cache], name)
                   for rows, name in ((clean_rows, "clean"), (chan_rows, "chan")))
    return clean, chan, sides(cache, clean, 1), sides(cache, chan, 1)


def sides(cache, trials, column):
    """(enrolment, test) stacks of the trials' cache entries: column 0 the embeddings, 1 the measured quality."""
    return tuple(np.stack([cache[r[side]][column] for r in trials.rows]) for side in ("enrol", "test"))


def speaker_fold(path):
    corpus, speaker = path.removeprefix("ch:").split("/")[1:3]
    return zlib.crc32(f"{corpus}/{speaker}".encode()) % 2


def held_out(s_clean, s_chan, f_clean, f_chan, clean, chan, max_far):
    """The held-out operating point: dev speakers in 2 folds (crc32 of corpus/speaker), the decision fitted on one
    fold's trials (fit_decision), FAR / FRR counted on the other fold's, both ways, pooled (cross-fold trials left out;
    npm run eval refits only the threshold per fold): {set: {far, frr}}."""
    def folds(tr):
        e = np.array([speaker_fold(r["enrol"]) for r in tr.rows])
        t = np.array([speaker_fold(r["test"]) for r in tr.rows])
        return np.where(e == t, e, -1)
    fc, fh = folds(clean), folds(chan)
    counts = {"clean": np.zeros(4), "chan": np.zeros(4)}
    for k in (0, 1):
        mc, mh = fc == k, fh == k
        cl = Trials([r for r, m in zip(clean.rows, mc) if m], "clean")
        ch = Trials([r for r, m in zip(chan.rows, mh) if m], "chan")
        wts, thr = fit_decision(s_clean[mc], s_chan[mh], f_clean[mc], f_chan[mh], cl, ch, max_far)
        for name, s_set, f_set, tr, fold in (("clean", s_clean, f_clean, clean, fc), ("chan", s_chan, f_chan, chan, fh)):
            m = fold == 1 - k
            a = s_set[m] + f_set[m] @ wts
            yy = tr.y[m]
            counts[name] += [(a[~yy] >= thr).sum(), (~yy).sum(), (a[yy] < thr).sum(), yy.sum()]
    return {name: {"far": float(c[0] / c[1]), "frr": float(c[2] / c[3])} for name, c in counts.items()}


def asnorm(s, e_enrol, e_test, cohort, topk=100):
    se, st = e_enrol @ cohort.T, e_test @ cohort.T
    te, tt = -np.sort(-se, 1)[:, :topk], -np.sort(-st, 1)[:, :topk]
    return 0.5 * ((s - te.mean(1)) / (te.std(1) + 1e-9) + (s - tt.mean(1)) / (tt.std(1) + 1e-9))


def lda(X, labels, dim):
    classes = np.unique(labels)
    mu = X.mean(0)
    Sw = np.zeros((X.shape[1], X.shape[1]))
    Sb = np.zeros_like(Sw)
    for c in classes:
        Xc = X[labels == c]
        mc = Xc.mean(0)
        Sw += (Xc - mc).T @ (Xc - mc)
        Sb += len(Xc) * np.outer(mc - mu, mc - mu)
    Sw = Sw / len(X) + 1e-3 * np.eye(X.shape[1])
    vals, vecs = np.linalg.eig(np.linalg.solve(Sw, Sb / len(X)))
    order = np.argsort(-vals.real)[:dim]
    return mu, vecs[:, order].real


def two_covariance(X, labels):
    """Between- and within-speaker covariances (moment estimates) of rows X grouped by labels."""
    classes, inverse = np.unique(labels, return_inverse=True)
    means = np.stack([X[inverse == k].mean(0) for k in range(len(classes))])
    within = X - means[inverse]
    Sw = within.T @ within / len(X)
    centred = means - X.mean(0)
    counts = np.bincount(inverse)
    Sb = (centred * counts[:, None]).T @ centred / len(X)
    return Sb, Sw


def fit_plda(X, labels):
    """(mean, Q, P) of the two-covariance model fitted on rows X: the engine's PLDA (plda.ts)."""
    Sb, Sw = two_covariance(X, labels)
    St = Sb + Sw
    St_inv = np.linalg.inv(St)
    cond = np.linalg.inv(St - Sb @ St_inv @ Sb)
    return X.mean(0), St_inv - cond, St_inv @ Sb @ cond


def plda_scorer(params):
    """LLR of "same speaker" for each pair of rows (a[i], b[i]), as the engine scores it."""
    return lambda a, b: plda_pair_scores(a, b, *params)


def write_projection(a, mu, W, train_info):
    """The engine's embeddingProjection (packages/engine/src/scoring/projection.ts): the file and its manifest spec."""
    blob = np.concatenate([mu.ravel(), W.ravel()]).astype("<f4").tobytes()
    with open(a.write_projection, "wb") as f:
        f.write(blob)
    spec = {"method": "lda", "file": os.path.basename(a.write_projection), "sha256": hashlib.sha256(blob).hexdigest(),
            "inputDim": int(W.shape[0]), "outputDim": int(W.shape[1]), "trainEmbeddings": train_info["trainEmbeddings"],
            "trainSpeakers": train_info["trainSpeakers"]}
    manifest = json.load(open(a.manifest))
    names = a.projection_models.split(",")
    for entry in manifest["models"]:
        if entry["name"] in names:
            entry["embeddingProjection"] = spec
            entry.pop("plda", None)  # fitted on the old projection; --write-plda writes the new one
    with open(a.manifest, "w") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(json.dumps(spec))


def write_plda(a, X, labels, train_info):
    """The engine's plda (packages/engine/src/scoring/plda.ts), fitted on the projected train rows X: mean, Q, P, then
    the basis V and lambda in which the within-speaker covariance is I and the between-speaker one diagonal (for the
    mean of several enrolment recordings) as float32, and its manifest spec."""
    mu, Q, P = fit_plda(X, labels)
    V, lam = joint_basis(*two_covariance(X, labels))
    blob = np.concatenate([mu.ravel(), Q.ravel(), P.ravel(), V.ravel(), lam.ravel()]).astype("<f4").tobytes()
    with open(a.write_plda, "wb") as f:
        f.write(blob)
    spec = {"method": "two-covariance", "file": os.path.basename(a.write_plda), "sha256": hashlib.sha256(blob).hexdigest(),
            "dim": int(len(mu)), "nSample": True, "trainEmbeddings": train_info["trainEmbeddings"],
            "trainSpeakers": train_info["trainSpeakers"]}
    manifest = json.load(open(a.manifest))
    for entry in manifest["models"]:
        if entry["name"] in a.projection_models.split(","):
            entry["plda"] = spec
    with open(a.manifest, "w") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(json.dumps(spec))


TELEPHONE = {"gsm", "g711-mulaw", "g726-16k", "g726-24k", "g726-32k", "band-300-3400"}


def shipped_scorer(manifest_path, model):
    """The engine's decision for one speaker model, from its manifest entry: (project, compare_mean, match_score(s, qe, qt, samples))."""
    entry = manifest_entry(model, manifest_path)
    cal = entry["calibration"]
    w = channel_weights(entry)
    samples_log = cal["quality"].get("enrolSamplesLog", 0.0)

    def match_score(s, qe, qt, samples):
        z = cal["a"] * (s + features(qe, qt) @ w + samples_log * np.log(samples)) + cal["b"]
        return 1 / (1 + np.exp(-z))
    models_dir = os.path.dirname(manifest_path)
    return projector(entry, models_dir), mean_comparer(entry, models_dir), match_score


def enrolment_guidance(channel_cache, manifest_path, model, seed=7):
    """What a second enrolment recording through another channel buys (issue 31's "enrolment guidance"): for each dev
    speaker with >= 3 clips, a voiceprint of one and of two enrolment-side recordings of the channel set (each through
    its own drawn channel), scored as the engine does (mean embedding, mean quality, samples term) against every
    test-side recording of the corpus (the enrolment clips' own left out)."""
    project, compare_mean, match_score = shipped_scorer(manifest_path, model)
    enrol, test = collections.defaultdict(list), collections.defaultdict(list)
    for key, (e, q) in load_cache(channel_cache).items():
        m = re.match(r"speech/([^/]+)/([^/]+)/(.+)\.(enrol|test)-([^.]+)\.wav$", key)
        if m:
            corpus, speaker, utt, side, channel = m.groups()
            (enrol if side == "enrol" else test)[(corpus, speaker)].append((utt, channel, project(e[None])[0], q))
    rng = np.random.default_rng(seed)
    rows = collections.defaultdict(lambda: ([], []))
    for corpus in ("speechocean762", "commonvoice"):
        speakers = [k for k in sorted(enrol) if k[0] == corpus and len(enrol[k]) >= 3 and len(test[k]) >= 3]
        tests = [(k, t) for k in speakers for t in test[k]]
        T, QT = np.stack([t[2] for _, t in tests]), np.stack([t[3] for _, t in tests])
        telephone = np.isin([t[1] for _, t in tests], list(TELEPHONE))
        for k in speakers:
            items = list(enrol[k])
            rng.shuffle(items)
            target = np.array([kk == k for kk, _ in tests])
            keep = np.array([t[0] not in (items[0][0], items[1][0]) for _, t in tests])
            for n in (1, 2):
                qm = np.mean([x[3] for x in items[:n]], 0)
                ms = match_score(compare_mean(np.stack([x[2] for x in items[:n]]), T), np.repeat(qm[None], len(T), 0), QT, n)
                for kind, mask in (("any", keep), ("telephone", keep & telephone)):
                    rows[(corpus, kind, n)][0].append(ms[mask & target])
                    rows[(corpus, kind, n)][1].append(ms[mask & ~target])
    print("| corpus | verification channel | enrolment recordings | targets / non-targets | FAR | FRR |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    out = []
    for (corpus, kind, n), (tar, non) in sorted(rows.items()):
        tar, non = np.concatenate(tar), np.concatenate(non)
        far, frr = float((non >= 0.85).mean()), float((tar < 0.85).mean())
        out.append({"corpus": corpus, "test": kind, "enrolments": n, "targets": len(tar), "nontargets": len(non), "far": far, "frr": frr})
        print(f"| {corpus} | {kind} | {n} | {len(tar)} / {len(non)} | {100 * far:.2f}% | {100 * frr:.1f}% |")
    return out


def enrol_augment(a):
    """--enrol-augment: every subset of the augmentations against the shipped comparison as it is."""
    from .channel_devset import ENROL_AUGMENTATIONS, augmented_path, version_path
    entry = manifest_entry(a.enrol_augment, a.manifest)
    project = projector(entry, os.path.dirname(os.path.abspath(a.manifest)))
    compare = comparer(entry, os.path.dirname(os.path.abspath(a.manifest)), pairs=True)
    cache = {**load_cache(a.clean_cache), **load_cache(a.channel_cache, "ch:")}
    clean, chan, qc, qh = dev_trials(cache, a.channel_dir)
    names = [x.name for x in ENROL_AUGMENTATIONS]

    def aug_key(key, name):
        if key.startswith("ch:"):
            return "ch:" + augmented_path(key[3:], name)
        return "ch:" + augmented_path(version_path(key, "clean", "none"), name)

    def enrolled(rows, subset, orig_weight=1.0):
        # as a voiceprint sample would hold it: the mean of the unit model embeddings, projected when compared
        unit = lambda v: v / np.linalg.norm(v)  # noqa: E731
        out = []
        for r in rows:
            vs = [orig_weight * unit(cache[r["enrol"]][0])]
            vs += [unit(cache[aug_key(r["enrol"], n)][0]) for n in subset if aug_key(r["enrol"], n) in cache]
            out.append(np.sum(vs, 0))
        return project(np.stack(out))
    ct, ht = project(sides(cache, clean, 0)[1]), project(sides(cache, chan, 0)[1])
    missing = sum(aug_key(r["enrol"], n) not in cache for tr in (clean, chan) for r in tr.rows for n in names)
    print(f"{len(clean.rows)} clean and {len(chan.rows)} channel trials; {missing} augmented enrolment embeddings missing")
    subsets = [()] + [c for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)]
    variants = [(s, 1.0) for s in subsets] + [(tuple(names), 2.0)]
    results = []
    for subset, w in variants:
        name = "+".join(subset) or "as-is"
        if w != 1.0:
            name += f" (as-is x{w:g})"
        results.append(evaluate(name, compare(enrolled(clean.rows, subset, w), ct), compare(enrolled(chan.rows, subset, w), ht),
                                qc, qh, clean, chan, a.max_far))
    return results


def print_table(results):
    print("| method | clean EER | clean FRR | channel EER | channel FRR | worst test channel (EER) | max FAR in a block | "
          "held out: clean FAR / FRR | held out: channel FAR / FRR |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in results:
        s, h = r["summary"], r["heldOut"]
        print(f"| {r['method']} | {100 * s['cleanEer']:.2f}% | {100 * s['cleanFrr']:.1f}% | {100 * s['channelEer']:.2f}% | "
              f"{100 * s['channelFrr']:.1f}% | {s['worstTestChannel'].split(':')[-1]} ({100 * s['worstTestChannelEer']:.2f}%) | "
              f"{100 * s['maxFarAnyBlock']:.2f}% | {100 * h['clean']['far']:.2f}% / {100 * h['clean']['frr']:.1f}% | "
              f"{100 * h['chan']['far']:.2f}% / {100 * h['chan']['frr']:.1f}% |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--enrolment-guidance", metavar="MODEL", help="only the enrolment-guidance table (one vs two enrolment "
                   "recordings through different channels) for MODEL's shipped decision; needs --channel-cache")
    p.add_argument("--enrol-augment", metavar="MODEL", help="only the enrolment-augmentation table (see above)")
    p.add_argument("--clean-cache")
    p.add_argument("--channel-cache", required=True)
    p.add_argument("--lowpass-cache")
    p.add_argument("--train-cache")
    p.add_argument("--channel-dir", default=os.path.join(WORK, "sv-channel-dev"))
    p.add_argument("--train-list", default=os.path.join(WORK, "sv-channel-train", "trials", "train-channels.csv"),
                   help="the train clips to use (the cache may hold more, from earlier lists)")
    p.add_argument("--max-far", type=float, default=0.01)
    p.add_argument("--out")
    p.add_argument("--lda-dims", default=str(LDA_DIM), help=f"comma-separated LDA dimensions to try (default {LDA_DIM})")
    p.add_argument("--write-projection", metavar="F32", help="write the LDA projection of --projection-dim there (float32: mean, then "
                   "the 192 x dim matrix row by row) and name it in --manifest for --projection-models")
    p.add_argument("--projection-dim", type=int, default=LDA_DIM)
    p.add_argument("--write-plda", metavar="F32", help="write the PLDA fitted on the train embeddings through --write-projection's "
                   "projection, or without it through the one --manifest names (float32: mean, then Q and P, dim x dim each), "
                   "and name it in --manifest for --projection-models")
    p.add_argument("--manifest", default="models/manifest.json")
    p.add_argument("--projection-models", default="voxkey-speaker-v4,voxkey-speaker-v4-int8",
                   help="comma-separated speaker models (one embedding space) whose manifest entries name the projection")
    p.add_argument("--write-cohort", metavar="F32", help="write the channel-augmented cohort (float32 rows) there and print its manifest spec")
    a = p.parse_args()
    if a.enrolment_guidance:
        table = enrolment_guidance(a.channel_cache, a.manifest, a.enrolment_guidance)
        if a.out:
            with open(a.out, "w") as f:
                json.dump({"model": a.enrolment_guidance, "rows": table}, f, indent=1)
                f.write("\n")
        return
    if a.enrol_augment:
        if not a.clean_cache:
            p.error("--enrol-augment needs --clean-cache (and --channel-cache with the eval of trials/enrol-augment.csv)")
        results = enrol_augment(a)
        print_table(results)
        if a.out:
            with open(a.out, "w") as f:
                json.dump({"model": a.enrol_augment, "maxFar": a.max_far, "methods": results}, f, indent=1)
                f.write("\n")
        return
    if not (a.clean_cache and a.lowpass_cache and a.train_cache):
        p.error("the study needs --clean-cache, --lowpass-cache and --train-cache")
    if a.write_projection and not a.write_plda:
        named = [e["name"] for e in json.load(open(a.manifest))["models"] if e["name"] in a.projection_models.split(",") and e.get("plda")]
        if named:
            # the PLDA (and the calibration on its scores) would be fitted on the old projection
            p.error(f"{', '.join(named)} compare by PLDA: pass --write-plda with --write-projection, then refit the calibration")
    cache = {**load_cache(a.clean_cache), **load_cache(a.channel_cache, "ch:"), **load_cache(a.lowpass_cache, "ch:")}
    listed = {r[side] for r in csv.DictReader(open(a.train_list)) for side in ("enrol", "test")}
    train = {k: v for k, v in load_cache(a.train_cache).items() if k in listed}
    clean, chan, qc, qh = dev_trials(cache, a.channel_dir)
    (ce, ct), (he, ht) = sides(cache, clean, 0), sides(cache, chan, 0)
    cos = lambda x, y: np.sum(x * y, 1)  # noqa: E731
    results = [evaluate("cosine", cos(ce, ct), cos(he, ht), qc, qh, clean, chan, a.max_far)]

    # bandwidth matching: the low-passed enrolment where the test is narrowband and the enrolment is not
    lp_key = lambda k: k[: -len(".wav")] + ".lowpass.wav"  # noqa: E731
    match = np.array([qt[2] < NARROW_HZ <= qe[2] and lp_key(r["enrol"]) in cache for r, qe, qt in zip(chan.rows, qh[0], qh[1])])
    he_m, qe_m = he.copy(), qh[0].copy()
    for i in np.where(match)[0]:
        he_m[i], qe_m[i] = cache[lp_key(chan.rows[i]["enrol"])]
    # the clean set has no narrowband recording (Common Voice's MP3 keeps ~6 kHz): unchanged there
    match_clean = (qc[1][:, 2] < NARROW_HZ) & (qc[0][:, 2] >= NARROW_HZ)
    results.append(evaluate("bw-match", cos(ce, ct), cos(he_m, ht), qc, (qe_m, qh[1]), clean, chan, a.max_far))
    results[-1]["matchedTrials"] = {"channels": int(match.sum()), "clean": int(match_clean.sum())}

    # train speakers' embeddings (as they are and through channels): cohort and LDA
    keys = sorted(train)
    spk = np.array([k.split("/")[1] + "/" + k.split("/")[2] for k in keys])
    T = np.stack([train[k][0] for k in keys])
    cohort = []
    for s in np.unique(spk):
        m = T[spk == s].mean(0)
        cohort.append(m / np.linalg.norm(m))
    cohort = np.stack(cohort)
    results.append(evaluate("asnorm-chan", asnorm(cos(ce, ct), ce, ct, cohort), asnorm(cos(he, ht), he, ht, cohort), qc, qh, clean, chan, a.max_far))
    results[-1]["cohortSpeakers"] = len(cohort)
    if a.write_cohort:
        blob = cohort.astype("<f4").tobytes()
        with open(a.write_cohort, "wb") as f:
            f.write(blob)
        print(json.dumps({"method": "as-norm", "file": os.path.basename(a.write_cohort), "sha256": hashlib.sha256(blob).hexdigest(),
                          "count": len(cohort), "dim": cohort.shape[1], "topK": 100}))
    unit = lambda Y: Y / np.linalg.norm(Y, axis=1, keepdims=True)  # noqa: E731
    train_info = {"trainEmbeddings": len(T), "trainSpeakers": len(cohort)}
    centre = T.mean(0)
    results.append(evaluate("centred", cos(unit(ce - centre), unit(ct - centre)), cos(unit(he - centre), unit(ht - centre)),
                            qc, qh, clean, chan, a.max_far))
    results[-1]["centred"] = train_info
    fitted = {}
    for dim in (int(d) for d in a.lda_dims.split(",")):
        mu, W = fitted[dim] = lda(T, spk, dim)
        proj = lambda X: unit((X - mu) @ W)  # noqa: E731
        name = "lda-chan" if dim == LDA_DIM else f"lda-chan-{dim}"
        results.append(evaluate(name, cos(proj(ce), proj(ct)), cos(proj(he), proj(ht)), qc, qh, clean, chan, a.max_far))
        results[-1]["lda"] = {"dim": dim, **train_info}
        plda = fit_plda(proj(T), spk)
        score = plda_scorer(plda)
        results.append(evaluate("plda" if dim == LDA_DIM else f"plda-{dim}", score(proj(ce), proj(ct)), score(proj(he), proj(ht)),
                                qc, qh, clean, chan, a.max_far))
        results[-1]["plda"] = {"ldaDim": dim, **train_info}

    if a.write_projection:
        mu, W = fitted.get(a.projection_dim) or lda(T, spk, a.projection_dim)
        write_projection(a, mu, W, train_info)
        if a.write_plda:
            write_plda(a, unit((T - mu) @ W), spk, train_info)
    elif a.write_plda:
        # on the projection the manifest already names (that of the first --projection-models entry)
        entry = manifest_entry(a.projection_models.split(",")[0], a.manifest)
        write_plda(a, projector(entry, os.path.dirname(os.path.abspath(a.manifest)))(T), spk, train_info)

    print_table(results)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"maxFar": a.max_far, "narrowHz": NARROW_HZ, "methods": results}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
