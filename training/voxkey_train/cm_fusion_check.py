"""Two spoof models' engine scores on the dev trials, alone and fused (issue 30: fusion of v5 with v4's CNN).

    npm run eval -- --cm ../shared/datasets/trials/cm-dev.csv --spoof-model voxkey-spoof-v4 --cache-dir C --out a.json
    npm run eval -- --cm ../shared/datasets/trials/cm-dev.csv --cache-dir C --out b.json     # the default spoof model
    python -m training.voxkey_train.cm_fusion_check --cache C/<a's file> --cache C/<b's file> --out result.json

    python -m training.voxkey_train.cm_fusion_check --lofo-v4 DIR --lofo-v5 S.npz --out result.json

Reads the per-clip logits (log-odds of bona fide) that `npm run eval` keeps in its cache, one file per model pair.
The fusion has no fitted weight: each model's logits are standardised by the median and the interquartile range of
its real dev clips, then averaged, so no spoof label of the dev set chooses anything. Reported per model and fused:
pooled EER, EER per attack family (every dev spoof family against all real dev clips), and at issue 30's flagging
rule (at most 1% / 0.2% of the real dev clips of every corpus with >= 100 of them, the smaller corpora pooled) the
share of dev spoofs that pass; then the same (less the families) with a weight from 0 to 1 on the first model.
Both shipped models were trained on every family but the data set's three held-out
attacks (festival, Seed-TTS, YourTTS VC), so only those are unseen here: the rest is in-sample, and only a
leave-one-family-out run of both models can say how a fusion generalises to a new family. That is the second form:
per family, v4's fold model (`spoof_v4 lofo`, whose evaluation leaves each fold's CM dev scores in
DIR/scores-cm-lofo4-<family>.npy, DIR being its $VOXKEY_WORK) and v5's fold head (`spoof_v5 fold-scores`), each
alone and fused the same way, scored on that family's dev spoofs against all real dev clips; then the fusion with
a weight on v4 from 0 to 1, and that weight chosen for each family on the other families' folds.
"""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from .families import family_of
from .metrics import eer
from .pretrained import DATA_DIR
from .spoof_v5 import threshold_for


def standardised(logits: np.ndarray, real: np.ndarray) -> np.ndarray:
    q1, median, q3 = np.percentile(logits[real], [25, 50, 75])
    return (logits - median) / max(q3 - q1, 1e-6)


def report(scores: np.ndarray, rows: list[dict]) -> dict:
    real = np.array([r["label"] == "bonafide" for r in rows])
    by_corpus: dict[str, list[float]] = {}
    for r, s in zip(rows, scores):
        if r["label"] == "bonafide":
            by_corpus.setdefault(r["corpus"], []).append(float(s))
    blocks = {c: np.array(v) for c, v in by_corpus.items()}
    spoof = scores[~real]
    out: dict = {"pooled_eer": eer(scores, real.astype(int))[0], "families": {}}
    for name, share in (("verification", 0.01), ("enrolment", 0.002)):
        t = threshold_for(blocks, share)
        out[f"dev_spoofs_passing_at_{name}_rule"] = float((spoof >= t).mean())
    families = sorted({family_of(r["attack"]) for r in rows if r["label"] == "spoof"})
    for fam in families:
        members = np.array([r["label"] == "spoof" and family_of(r["attack"]) == fam for r in rows])
        pick = real | members
        out["families"][fam] = {"eer": eer(scores[pick], real[pick].astype(int))[0], "dev_spoofs": int(members.sum())}
    return out


def lofo(v4_dir: Path, v5_scores: Path, trials_csv: str) -> dict:
    with open(trials_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    v5 = np.load(v5_scores)
    if v5["paths"].tolist() != [r["path"] for r in rows]:
        raise SystemExit(f"{v5_scores} was scored on another trial list")
    real = np.array([r["label"] == "bonafide" for r in rows])
    out, standardised_folds = {}, {}
    for fam in [k for k in v5.files if k != "paths"]:
        v4_file = v4_dir / f"scores-cm-lofo4-{fam}.npy"
        if not v4_file.exists():
            print(f"{fam}: no {v4_file}, skipped")
            continue
        a, b = np.load(v4_file).astype(np.float64), v5[fam].astype(np.float64)
        if len(a) != len(rows):  # spoof_v4.evaluate scores the CM dev trials in their file's order; it keeps no paths
            raise SystemExit(f"{v4_file}: {len(a)} scores for {len(rows)} trials")
        fused = (standardised(a, real) + standardised(b, real)) / 2
        members = np.array([r["label"] == "spoof" and family_of(r["attack"]) == fam for r in rows])
        pick = real | members
        out[fam] = {"dev_spoofs": int(members.sum()),
                    **{k: eer(x[pick], real[pick].astype(int))[0] for k, x in (("v4", a), ("v5", b), ("fused", fused))}}
        print(f"{fam} left out: v4 {out[fam]['v4']:.1%}, v5 {out[fam]['v5']:.1%}, fused {out[fam]['fused']:.1%} "
              f"({out[fam]['dev_spoofs']} dev spoofs)")
        standardised_folds[fam] = (standardised(a, real)[pick], standardised(b, real)[pick], real[pick].astype(int))
    return {"lofo": out, "v4_weight": weighted(standardised_folds)}


V4_WEIGHTS = np.round(np.arange(0, 1.01, 0.1), 2)


def weighted(folds: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict:
    """The fusion w * v4 + (1 - w) * v5 for w in V4_WEIGHTS, and w chosen without the family it is scored on: for
    each fold, the weight with the lowest mean EER over the other folds (nested leave-one-family-out)."""
    by_weight = {fam: [eer(w * a + (1 - w) * b, y)[0] for w in V4_WEIGHTS] for fam, (a, b, y) in folds.items()}
    nested = {}
    for fam in folds:
        others = np.mean([by_weight[f] for f in folds if f != fam], axis=0)
        best = int(np.argmin(others))
        nested[fam] = {"weight": float(V4_WEIGHTS[best]), "eer": by_weight[fam][best]}
    mean_by_weight = np.mean(list(by_weight.values()), axis=0)
    print("mean EER by v4 weight: " + ", ".join(f"{w:.1f}: {e:.1%}" for w, e in zip(V4_WEIGHTS, mean_by_weight)))
    print("nested (weight chosen on the other folds): " + ", ".join(f"{f} {v['eer']:.1%} at {v['weight']:.1f}"
                                                                     for f, v in nested.items())
          + f"; mean {np.mean([v['eer'] for v in nested.values()]):.1%}, worst {max(v['eer'] for v in nested.values()):.1%}")
    return {"weights": V4_WEIGHTS.tolist(), "eer_by_weight": by_weight, "mean_eer_by_weight": mean_by_weight.tolist(),
            "nested": nested, "nested_mean": float(np.mean([v["eer"] for v in nested.values()])),
            "nested_worst": max(v["eer"] for v in nested.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", action="append", default=[], help="an `npm run eval` cache file (twice: two models)")
    ap.add_argument("--lofo-v4", type=Path, help="spoof_v4 lofo's work folder (its scores-cm-lofo4-<family>.npy)")
    ap.add_argument("--lofo-v5", type=Path, help="spoof_v5 fold-scores' .npz")
    ap.add_argument("--trials", default=str(DATA_DIR / "trials" / "cm-dev.csv"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.lofo_v4 or a.lofo_v5:
        if not (a.lofo_v4 and a.lofo_v5) or a.cache:
            ap.error("--lofo-v4 and --lofo-v5 go together, without --cache")
        Path(a.out).write_text(json.dumps(lofo(a.lofo_v4, a.lofo_v5, a.trials), indent=1))
        return
    if len(a.cache) != 2:
        ap.error("--cache takes two files")
    caches = [json.loads(Path(c).read_text()) for c in a.cache]
    with open(a.trials, newline="") as f:
        rows = [r for r in csv.DictReader(f) if all(r["path"] in c for c in caches)]
    real = np.array([r["label"] == "bonafide" for r in rows])
    logits = [np.array([c[r["path"]]["logit"] for r in rows], np.float64) for c in caches]
    za, zb = standardised(logits[0], real), standardised(logits[1], real)
    result = {"trials": len(rows), "caches": [Path(c).name for c in a.cache],
              "a": report(logits[0], rows), "b": report(logits[1], rows), "fused": report((za + zb) / 2, rows)}
    # the weight on the first model, in-sample (chosen on the figures it is measured by: a trade-off to read, not a fit)
    result["by_weight_on_a"] = {f"{w:.1f}": {k: v for k, v in report(w * za + (1 - w) * zb, rows).items() if k != "families"}
                                for w in V4_WEIGHTS}
    Path(a.out).write_text(json.dumps(result, indent=1))
    print(f"{len(rows)} trials; pooled EER a {result['a']['pooled_eer']:.2%}, b {result['b']['pooled_eer']:.2%}, "
          f"fused {result['fused']['pooled_eer']:.2%}")
    for k in ("dev_spoofs_passing_at_verification_rule", "dev_spoofs_passing_at_enrolment_rule"):
        print(f"{k}: a {result['a'][k]:.1%}, b {result['b'][k]:.1%}, fused {result['fused'][k]:.1%}")
    for fam in result["fused"]["families"]:
        print(f"{fam}: a {result['a']['families'][fam]['eer']:.1%}, b {result['b']['families'][fam]['eer']:.1%}, "
              f"fused {result['fused']['families'][fam]['eer']:.1%} ({result['fused']['families'][fam]['dev_spoofs']})")
    for w, r in result["by_weight_on_a"].items():
        print(f"weight {w} on a: pooled EER {r['pooled_eer']:.2%}, spoofs passing at the verification rule "
              f"{r['dev_spoofs_passing_at_verification_rule']:.1%}, "
              f"at the enrolment rule {r['dev_spoofs_passing_at_enrolment_rule']:.1%}")


if __name__ == "__main__":
    main()
