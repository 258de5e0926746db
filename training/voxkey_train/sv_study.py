#!/usr/bin/env python3
"""Speaker-verification scoring studies on the ENGINE's own embeddings (the cache `npm run eval`
writes: one embedding, net speech seconds and SNR per dev clip), so that the numbers are those of
the production front-end (Silero VAD, segment-averaged embeddings).

  calib : score normalisation / calibration candidates (raw cosine, AS-norm with the cohort at
          several top-K, quality-aware calibration on net speech and SNR), each judged by the worst
          dev block: EER per block and the FRR per block at the decision that keeps FAR <= 2% in
          every block.
  multi : several enrolment recordings per voiceprint (issue 14): mean embedding vs mean of scores
          vs best score, with 1, 3 and 5 enrolment recordings per speaker, on the dev speakers with
          many recordings (speechocean762: 30 x 20; Common Voice speakers with >= 8 clips). With --model,
          the model's embedding projection and its decision (calibration, channel terms from each clip's
          measured quality) are applied, and the enrolment-samples term is fitted on that decision's score.

  python3 -m training.voxkey_train.sv_study calib --cache $TMPDIR/voxkey-eval-cache/<key>.json \
      --cohort models/voxkey-speaker-v3-cohort.f32 --out training/results/sv-calibration-study-v3.json
  python3 -m training.voxkey_train.sv_study multi --cache ... --cohort ... --out training/results/multi-enrol-v3.json
"""
from __future__ import annotations

import argparse
import base64
import csv
import json
import os
import sys

import numpy as np

from . import metrics as M
from . import shipped_decision

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # training/

DATA = os.path.join(os.path.dirname(HERE), "..", "shared", "datasets")


def load_cache(path):
    with open(path) as f:
        d = json.load(f)
    emb, speech, snr = {}, {}, {}
    for k, v in d.items():
        e = np.frombuffer(base64.b64decode(v["e"]), dtype="<f4").astype(np.float64)
        emb[k] = e / (np.linalg.norm(e) + 1e-12)
        speech[k] = float(v.get("speech", 0.0))
        snr[k] = float(v.get("snr", np.nan)) if v.get("snr") is not None else np.nan
    return emb, speech, snr


def load_cohort(path, dim=192):
    c = np.fromfile(path, dtype="<f4").reshape(-1, dim).astype(np.float64)
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def cohort_stats(E, cohort, k):
    """E [n, d] unit rows -> (mean, std) of the top-k cosines against the cohort."""
    S = E @ cohort.T
    if k < S.shape[1]:
        S = np.partition(S, S.shape[1] - k, axis=1)[:, -k:]
    return S.mean(1), np.maximum(S.std(1), 1e-3)


def eer(s, lab):
    return M.eer(s, lab)[0]


def block_masks(trials):
    ce = np.array([t["enrol"].split("/")[1] for t in trials])
    ct = np.array([t["test"].split("/")[1] for t in trials])
    lab = np.array([int(t["target"]) for t in trials])
    langx = np.array(["/" in t["lang"] for t in trials])
    blocks = {}
    for c in sorted(set(ce)):
        m = (ce == c) & (ct == c)
        if m.sum() and lab[m].sum() and (m & (lab == 0)).sum():
            blocks[f"corpus:{c}"] = m
    cv = (ce == "commonvoice") & (ct == "commonvoice")
    blocks["commonvoice:same-language-nontargets"] = cv & ((lab == 1) | ~langx)
    blocks["commonvoice:cross-language-nontargets"] = cv & ((lab == 1) | langx)
    blocks["other-corpora (incl. cross-corpus nontargets)"] = (ce != "commonvoice") & (ct != "commonvoice")
    blocks["cross-corpus nontargets (+ all targets)"] = (lab == 1) | (ce != ct)
    return lab, blocks


def decision_threshold(s, lab, blocks, max_far=0.02, min_non=30):
    thr, worst = -np.inf, ""
    for name, m in blocks.items():
        non = np.sort(s[m & (lab == 0)])[::-1]
        if len(non) < min_non or not lab[m].sum():
            continue
        allowed = int(np.floor(max_far * len(non) + 1e-9))
        t = non[min(allowed, len(non) - 1)] + 1e-9
        if t > thr:
            thr, worst = t, name
    return thr, worst


def min_nontargets(max_far):
    # A block constrains the decision only if its FAR can be measured at that level: at least one
    # allowed false accept (100 nontargets at FAR 1%), and never fewer than 30 (the v3 rule at 2%).
    return max(30, int(np.ceil(1 / max_far - 1e-9)))


def evaluate_scores(s, lab, blocks, max_far=0.02):
    thr, worst = decision_threshold(s, lab, blocks, max_far, min_nontargets(max_far))
    out = {"pooled": {"eer": eer(s, lab), "far": float((s[lab == 0] >= thr).mean()), "frr": float((s[lab == 1] < thr).mean())}}
    for name, m in blocks.items():
        out[name] = {"eer": eer(s[m], lab[m]), "far": float((s[m & (lab == 0)] >= thr).mean()),
                     "frr": float((s[m & (lab == 1)] < thr).mean()), "nontargets": int((m & (lab == 0)).sum())}
    cons = [v for k, v in out.items() if k != "pooled" and v["nontargets"] >= min_nontargets(max_far)]
    out["summary"] = {"worstBlockEer": max(v["eer"] for v in cons), "worstBlockFrrAtDecision": max(v["frr"] for v in cons),
                      "pooledFrrAtDecision": out["pooled"]["frr"], "bindingBlock": worst}
    return out


def fit_lr(X, y, iters=300):
    """Balanced logistic regression (Newton), X without bias column."""
    X1 = np.hstack([X, np.ones((len(X), 1))])
    w = np.zeros(X1.shape[1])
    cw = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for _ in range(iters):
        p = 1 / (1 + np.exp(-X1 @ w))
        g = X1.T @ (cw * (p - y))
        H = (X1 * (cw * p * (1 - p))[:, None]).T @ X1 + 1e-6 * np.eye(len(w))
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def calib(a):
    emb, speech, snr = load_cache(a.cache)
    trials = [t for t in csv.DictReader(open(os.path.join(a.data_dir, "trials", "sv-dev.csv"))) if t["enrol"] in emb and t["test"] in emb]
    lab, blocks = block_masks(trials)
    clips = sorted({t["enrol"] for t in trials} | {t["test"] for t in trials})
    ix = {c: i for i, c in enumerate(clips)}
    E = np.array([emb[c] for c in clips])
    ie = np.array([ix[t["enrol"]] for t in trials]); it = np.array([ix[t["test"]] for t in trials])
    cos = np.einsum("ij,ij->i", E[ie], E[it])
    res = {"trials": len(trials), "candidates": {}}
    cands = {"cosine": cos}
    cohort = load_cohort(a.cohort) if a.cohort else None
    if cohort is not None:
        res["cohortSpeakers"] = len(cohort)
        for k in (25, 50, 100, 200, len(cohort)):
            mu, sd = cohort_stats(E, cohort, k)
            cands[f"as-norm-top{k}"] = 0.5 * ((cos - mu[ie]) / sd[ie] + (cos - mu[it]) / sd[it])
    sp = np.array([speech[c] for c in clips]); sn = np.array([snr[c] for c in clips])
    sn = np.nan_to_num(sn, nan=np.nanmedian(sn))
    qdur_min = np.log(np.minimum(sp[ie], sp[it]) + 0.5)
    qdur_test = np.log(sp[it] + 0.5)
    qsnr = np.minimum(sn[ie], sn[it]) / 10
    base_names = list(cands)
    for bn in base_names:
        if bn not in ("cosine", "as-norm-top100"):
            continue
        for qn, Q in (("dur-min", qdur_min[:, None]), ("dur-test", qdur_test[:, None]), ("dur-min+snr", np.stack([qdur_min, qsnr], 1))):
            # quality-aware calibration (QMF): llr = a*s + c.q + b; the decision uses s + (c/a).q
            w = fit_lr(np.hstack([cands[bn][:, None], Q]), lab.astype(float))
            cands[f"{bn}+qmf({qn})"] = cands[bn] + Q @ (w[1:-1] / w[0])
            res.setdefault("qmfWeights", {})[f"{bn}+qmf({qn})"] = [float(x) for x in w]
    for name, s in cands.items():
        res["candidates"][name] = evaluate_scores(s, lab, blocks, a.max_far)
        sm = res["candidates"][name]["summary"]
        print(f"{name:34s} pooled EER {res['candidates'][name]['pooled']['eer']:.4f} worst-block EER {sm['worstBlockEer']:.4f} "
              f"worst-block FRR@FAR<=2% {sm['worstBlockFrrAtDecision']:.4f} pooled FRR {sm['pooledFrrAtDecision']:.4f} ({sm['bindingBlock']})", flush=True)
    best = min(res["candidates"], key=lambda n: (res["candidates"][n]["summary"]["worstBlockFrrAtDecision"], res["candidates"][n]["summary"]["worstBlockEer"]))
    res["bestByWorstBlockFrr"] = best
    return res


def multi(a):
    emb, speech, _ = load_cache(a.cache)
    rows = [r for r in csv.DictReader(open(os.path.join(a.data_dir, "manifest.csv")))
            if r["split"] == "dev" and r["kind"] == "bonafide" and r["path"] in emb]
    by = {}
    for r in rows:
        by.setdefault((r["corpus"], r["speaker"]), []).append(r["path"])
    cohort = load_cohort(a.cohort) if a.cohort else None
    rng = np.random.default_rng(20261125)
    cal = weights = None
    compare = lambda A, B: A @ B.T  # noqa: E731  (unit rows: cosines)
    compare_mean = lambda E, T: T @ (E.mean(0) / np.linalg.norm(E.mean(0)))  # noqa: E731
    if a.model:
        ent = shipped_decision.manifest_entry(a.model, a.manifest)
        models_dir = os.path.dirname(os.path.abspath(a.manifest)) if a.manifest else shipped_decision.MODELS_DIR
        if "embeddingProjection" in ent:
            project = shipped_decision.projector(ent, models_dir)
            emb = {k: project(e[None])[0] for k, e in emb.items()}
        compare = shipped_decision.comparer(ent, models_dir)
        compare_mean = shipped_decision.mean_comparer(ent, models_dir)
        if cohort is not None and "plda" in ent:
            raise SystemExit(f"--cohort AS-norms cosines; {a.model} compares by PLDA")
        cal = {"a": ent["calibration"]["a"], "b": ent["calibration"]["b"], "threshold": ent.get("defaultThreshold", 0.85),
               "normed": "scoreNormalization" in ent,
               "testLogDuration": ent["calibration"].get("quality", {}).get("testLogDuration", 0.0),
               "enrolSamplesLog": ent["calibration"].get("quality", {}).get("enrolSamplesLog", 0.0)}
        weights = shipped_decision.channel_weights(ent)
    # the channel terms of the shipped decision (calibration.ts channelTerm), from each clip's measured quality
    quality = {k: q for k, (_, q) in shipped_decision.load_cache(a.cache).items()} if cal and weights is not None else None

    def channel_shift(enrol_clips, test_clips):
        """[len(enrol_clips) + 1, tests]: each sample's channel term against every test, then the voiceprint's (mean quality)."""
        if quality is None:
            return np.zeros((len(enrol_clips) + 1, len(test_clips)))
        qt = np.array([quality[c] for c in test_clips])
        qe = np.array([quality[c] for c in enrol_clips])
        return np.stack([shipped_decision.features(np.repeat(q[None], len(qt), 0), qt) @ weights for q in [*qe, qe.mean(0)]])
    mean_embedding = {}
    res = {"model": a.model, "calibration": cal,"draws": a.draws, "rules": ["mean-embedding", "mean-of-scores", "best-of"], "corpora": {}}
    for corpus, min_clips in (("speechocean762", 8), ("commonvoice", 8)):
        spk = sorted(k for k, v in by.items() if k[0] == corpus and len(v) >= min_clips)
        res["corpora"][corpus] = {"speakers": len(spk), "clips": int(sum(len(by[k]) for k in spk))}
        # up to the 10 recordings a voiceprint may hold (MAX_VOICEPRINT_SAMPLES), each count over the speakers with
        # at least one clip more than it (all of them up to 7)
        for n in (1, 3, 5, 7, 10):
            spk_n = [k for k in spk if len(by[k]) > n]
            sc = {r: {"raw": ([], []), "norm": ([], [])} for r in res["rules"]}
            qsc = {r: ([], []) for r in res["rules"]}  # the shipped decision's score (quality term added)
            for d in range(a.draws):
                # one enrolment set per speaker; tests: that speaker's other clips (targets) and every
                # clip of the other speakers of the corpus (non-targets)
                enrol, tests = {}, []
                for k in spk_n:
                    clips = list(by[k])
                    rng.shuffle(clips)
                    enrol[k] = clips[:n]
                    tests += [(k, c) for c in clips[n:]]
                T = np.array([emb[c] for _, c in tests])
                tmu = tsd = None
                if cohort is not None:
                    tmu, tsd = cohort_stats(T, cohort, 100)
                for k in spk_n:
                    Ek = np.array([emb[c] for c in enrol[k]])
                    lab = np.array([1 if kk == k else 0 for kk, _ in tests])
                    S = compare(Ek, T)  # [n, tests]
                    m = Ek.mean(0); m /= np.linalg.norm(m)
                    sm = compare_mean(Ek, T)
                    raw = {"mean-embedding": sm, "mean-of-scores": S.mean(0), "best-of": S.max(0)}
                    qt = np.array([np.log(max(0.0, speech[c]) + 0.5) for _, c in tests])
                    shift = channel_shift(enrol[k], [c for _, c in tests]) if cal is not None else None
                    for r, s in raw.items():
                        sc[r]["raw"][0].append(s[lab == 1]); sc[r]["raw"][1].append(s[lab == 0])
                        if cal is not None:
                            shifted = {"mean-embedding": sm + shift[-1], "mean-of-scores": (S + shift[:-1]).mean(0),
                                       "best-of": (S + shift[:-1]).max(0)}[r]
                            sq = shifted + cal["testLogDuration"] * qt
                            qsc[r][0].append(sq[lab == 1]); qsc[r][1].append(sq[lab == 0])
                    if cohort is not None:
                        emu, esd = cohort_stats(Ek, cohort, 100)
                        mmu, msd = cohort_stats(m[None], cohort, 100)
                        Sn = 0.5 * ((S - emu[:, None]) / esd[:, None] + (S - tmu[None]) / tsd[None])
                        smn = 0.5 * ((sm - mmu[0]) / msd[0] + (sm - tmu) / tsd)
                        nrm = {"mean-embedding": smn, "mean-of-scores": Sn.mean(0), "best-of": Sn.max(0)}
                        for r, s in nrm.items():
                            sc[r]["norm"][0].append(s[lab == 1]); sc[r]["norm"][1].append(s[lab == 0])
            out = {}
            for r in res["rules"]:
                for kind in ("raw", "norm"):
                    tar, non = sc[r][kind]
                    if not tar:
                        continue
                    tar, non = np.concatenate(tar), np.concatenate(non)
                    s = np.concatenate([tar, non]); lab = np.concatenate([np.ones(len(tar)), np.zeros(len(non))])
                    o = out[f"{r}:{'as-norm' if kind == 'norm' else 'cosine'}"] = {"eer": eer(s, lab), "targets": len(tar), "nontargets": len(non)}
                    if cal is not None and (kind == "norm") == bool(cal.get("normed")):
                        # the model's shipped decision (match_score >= threshold) applied to this rule's score
                        if kind == "raw":
                            s = np.concatenate([np.concatenate(qsc[r][0]), np.concatenate(qsc[r][1])])
                        if r == "mean-embedding":  # the engine's samples term (calibration.ts qualityAdjustedScore)
                            s = s + cal.get("enrolSamplesLog", 0.0) * np.log(n)
                        ms = 1 / (1 + np.exp(-(cal["a"] * s + cal["b"])))
                        o["farAtDecision"] = float((ms[lab == 0] >= cal["threshold"]).mean())
                        o["frrAtDecision"] = float((ms[lab == 1] < cal["threshold"]).mean())
            res["corpora"][corpus][f"enrol{n}"] = out
            print(corpus, n, {k: round(v["eer"], 4) for k, v in out.items()}, flush=True)
            # the samples term is fitted on the decision's score (the channel terms included, when the model has them)
            tar, non = qsc["mean-embedding"] if cal is not None else sc["mean-embedding"]["raw"]
            mean_embedding[(corpus, n)] = (np.concatenate(tar), np.concatenate(non))
    if cal is not None and not cal["normed"]:
        res["enrolSamplesTerm"] = enrol_samples_term(mean_embedding, cal, a.max_far)
    return res


def enrol_samples_term(scores, cal, max_far):
    """The mean of several enrolment embeddings compared as one is closer to everyone of similar recordings, so the
    same threshold lets more impostors through with 3 or 5 recordings than with 1; n-sample PLDA errs the other way.
    Fit the weight w of a term w * ln(samples) added to the mean-embedding score: the largest that keeps the
    single-recording decision at FAR <= max_far with every count drawn (3, 5, 7, 10) on every corpus; then report it."""
    t1 = (np.log(cal["threshold"] / (1 - cal["threshold"])) - cal["b"]) / cal["a"]
    # the largest w that keeps FAR <= max_far on every corpus and count: negative for a mean compared as one
    # recording (closer to everyone), positive when n-sample PLDA already counts the recordings and leaves headroom
    w = np.inf
    for (corpus, n), (tar, non) in scores.items():
        if n == 1:
            continue
        tn = np.sort(non)[::-1][int(np.floor(max_far * len(non)))] + 1e-9  # the score that keeps FAR <= max_far
        w = min(w, -(tn - t1) / np.log(n))
    w = 0.0 if not np.isfinite(w) else w
    w = float(np.floor(w * 1e6) / 1e6)
    report = {}
    for (corpus, n), (tar, non) in sorted(scores.items()):
        shift = w * np.log(n)
        report[f"{corpus}:enrol{n}"] = {"far": float((non + shift >= t1).mean()), "frr": float((tar + shift < t1).mean())}
    print("enrolSamplesLog", w, report, flush=True)
    return {"enrolSamplesLog": w, "scoreThreshold": float(t1), "maxFar": max_far, "meanEmbeddingAtDecision": report}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["calib", "multi"])
    ap.add_argument("--cache", required=True, help="npm run eval's embedding cache (JSON)")
    ap.add_argument("--cohort", default=None)
    ap.add_argument("--data-dir", default=DATA)
    ap.add_argument("--max-far", type=float, default=0.02)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--model", default=None, help="manifest model whose calibration/threshold is applied (multi)")
    ap.add_argument("--manifest", default=None, help="with --model: that manifest (its models folder beside it) instead of models/manifest.json")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    res = calib(a) if a.task == "calib" else multi(a)
    res["command"] = "python3 -m training.voxkey_train.sv_study " + " ".join(sys.argv[1:])
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
