"""Two spoof models' engine scores on the dev trials, alone and fused (issue 30: fusion of v5 with v4's CNN).

    npm run eval -- --cm ../shared/datasets/trials/cm-dev.csv --spoof-model voxkey-spoof-v4 --cache-dir C --out a.json
    npm run eval -- --cm ../shared/datasets/trials/cm-dev.csv --cache-dir C --out b.json     # the default spoof model
    python -m training.voxkey_train.cm_fusion_check --cache C/<a's file> --cache C/<b's file> --out result.json

    python -m training.voxkey_train.cm_fusion_check --lofo-v4 DIR --lofo-v5 S.npz --out result.json
    python -m training.voxkey_train.cm_fusion_check --loco-v4 DIR --loco-v5 S.npz --out result.json

Reads the per-clip logits (log-odds of bona fide) that `npm run eval` keeps in its cache, one file per model pair.
The fusion has no fitted weight: each model's logits are standardised by the median and the interquartile range of
its real dev clips, then averaged, so no spoof label of the dev set chooses anything; the fused score is put back on
the second model's logit scale (its median and interquartile range), so that at weight 0 on the first model it is
the second model's own logit. With --lossless (two `npm run check:lossless -- --scores F` files, the same models in
the same order), the thresholds also count the lossless recordings as a block and are lowered until no lossless
recording and its MP3 twin are split (spoof_v5.consistent_threshold), as the shipped v5 thresholds were set, and
then halfway down to the next lower real clip's score, so that no real clip sits exactly at a threshold.
Reported per model and fused:
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

from .families import SMALL_CORPORA_FOLD, family_of
from .metrics import eer
from .pretrained import DATA_DIR
from . import update_manifest
from .spoof_v5 import CONSISTENCY_MARGIN, consistent_threshold, threshold_for


def centre_and_scale(logits: np.ndarray, real: np.ndarray) -> tuple[float, float]:
    """The median and the interquartile range of the real clips' logits."""
    q1, median, q3 = np.percentile(logits[real], [25, 50, 75])
    return float(median), float(max(q3 - q1, 1e-6))


def standardised(logits: np.ndarray, real: np.ndarray) -> np.ndarray:
    centre, scale = centre_and_scale(logits, real)
    return (logits - centre) / scale


def lossless_pairs(path: Path) -> list[tuple[str, tuple[float, float]]]:
    pairs = json.loads(path.read_text())["pairs"]
    return [(p["path"], (p["losslessLogit"], p["mp3Logit"])) for p in pairs]


def report(scores: np.ndarray, rows: list[dict], lossless: tuple[np.ndarray, np.ndarray] | None = None,
           extra: np.ndarray | None = None) -> dict:
    """lossless: the lossless recordings' and their MP3 twins' scores (`npm run check:lossless --scores`), on the
    same scale: then the rule also counts them as a block of their own, and the threshold is lowered until no pair
    is split (spoof_v5.consistent_threshold), as the shipped v5 thresholds were set."""
    real = np.array([r["label"] == "bonafide" for r in rows])
    by_corpus: dict[str, list[float]] = {}
    for r, s in zip(rows, scores):
        if r["label"] == "bonafide":
            by_corpus.setdefault(r["corpus"], []).append(float(s))
    blocks = {c: np.array(v) for c, v in by_corpus.items()}
    if lossless is not None:
        blocks["lossless (as recorded)"] = lossless[0]
    spoof = scores[~real]
    out: dict = {"pooled_eer": eer(scores, real.astype(int))[0], "families": {}}
    for name, share in (("verification", 0.01), ("enrolment", 0.002)):
        t = threshold_for(blocks, share)
        out[f"dev_spoofs_passing_at_{name}_rule"] = float((spoof >= t).mean())
        if lossless is not None:
            t = consistent_threshold(t, *lossless)
            # the rule puts the threshold at a real clip's own score, where the last digit of a probability (the
            # manifest keeps 9) or another CPU's int8 kernels decide that clip: halfway down to the next lower one
            # (the margin of the lossless pairs below the lowest)
            real_all = np.concatenate([*blocks.values(), lossless[1]])
            below = real_all[real_all < t]
            t = consistent_threshold((t + below.max()) / 2 if below.size else t - CONSISTENCY_MARGIN, *lossless)
            out[f"{name}_threshold"] = t
            out[f"dev_spoofs_passing_at_{name}_threshold"] = float((spoof >= t).mean())
            out[f"real_dev_flagged_at_{name}_threshold"] = float((scores[real] < t).mean())
            if extra is not None and len(extra):
                out[f"extra_spoofs_passing_at_{name}_threshold"] = float((extra >= t).mean())
    families = sorted({family_of(r["attack"]) for r in rows if r["label"] == "spoof"})
    for fam in families:
        members = np.array([r["label"] == "spoof" and family_of(r["attack"]) == fam for r in rows])
        pick = real | members
        out["families"][fam] = {"eer": eer(scores[pick], real[pick].astype(int))[0], "dev_spoofs": int(members.sum())}
    return out


def lofo(v4_dir: Path, v5_scores: Path, trials_csv: str, v4_cache: Path | None = None) -> dict:
    """v4_cache: for a family with no v4 fold file (one no v4 model ever saw, such as a generated family scored by
    `fold-scores --with-generated`), the shipped v4's engine scores, by path: an `npm run eval` cache of a trial list
    holding the CM dev trials and the generated clips named as in their index.csv (<folder>/<file>)."""
    with open(trials_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    v5 = np.load(v5_scores)
    paths = v5["paths"].tolist()
    if paths[:len(rows)] != [r["path"] for r in rows]:
        raise SystemExit(f"{v5_scores} was scored on another trial list")
    generated = json.loads(str(v5["generated"])) if "generated" in v5.files else {}
    rows += [{"path": p, "label": "spoof", "attack": generated[p], "corpus": "generated"} for p in paths[len(rows):]]
    cache = json.loads(v4_cache.read_text()) if v4_cache else None
    real = np.array([r["label"] == "bonafide" for r in rows])
    out, standardised_folds = {}, {}
    for fam in [k for k in v5.files if k not in ("paths", "generated")]:
        v4_file = v4_dir / f"scores-cm-lofo4-{fam}.npy"
        if v4_file.exists():
            a = np.load(v4_file).astype(np.float64)
            if len(a) != sum(1 for r in rows if r["corpus"] != "generated"):  # spoof_v4.evaluate keeps no paths
                raise SystemExit(f"{v4_file}: {len(a)} scores for another trial list")
            a = np.concatenate([a, np.full(len(rows) - len(a), np.nan)])
        elif cache is not None:
            def key(r: dict) -> str:
                return r["path"] if r["corpus"] != "generated" else "/".join(Path(r["path"]).parts[-2:])
            if missing := [key(r) for r in rows if key(r) not in cache]:
                raise SystemExit(f"{v4_cache}: no score for {len(missing)} clips (first: {missing[0]})")
            a = np.array([cache[key(r)]["logit"] for r in rows], np.float64)
        else:
            print(f"{fam}: no {v4_file}, skipped")
            continue
        b = v5[fam].astype(np.float64)
        members = np.array([r["label"] == "spoof" and family_of(r["attack"]) == fam for r in rows])
        pick = real | members
        if np.isnan(a[pick]).any():
            raise SystemExit(f"{fam}: v4's fold file scored only the CM dev trials; give --lofo-v4-cache")
        fused = (standardised(a, real) + standardised(b, real)) / 2
        out[fam] = {"dev_spoofs": int(members.sum()), "v4_model": v4_file.name if v4_file.exists() else "shipped (engine cache)",
                    **{k: eer(x[pick], real[pick].astype(int))[0] for k, x in (("v4", a), ("v5", b), ("fused", fused))}}
        print(f"{fam} left out: v4 {out[fam]['v4']:.1%}, v5 {out[fam]['v5']:.1%}, fused {out[fam]['fused']:.1%} "
              f"({out[fam]['dev_spoofs']} dev spoofs)")
        standardised_folds[fam] = (standardised(a, real)[pick], standardised(b, real)[pick], real[pick].astype(int))
    return {"lofo": out, "v4_weight": weighted(standardised_folds)}


V4_WEIGHTS = np.round(np.arange(0, 1.01, 0.1), 2)


def loco(v4_dir: Path, v5_scores: Path, trials_csv: str) -> dict:
    """Leave-one-corpus-out: per fold, v4's and v5's heads trained without that corpus's real clips, each standardised
    by the real dev clips of the other corpora (the fold's fusion never sees the left-out corpus either), fused with
    each weight on v4, the verification threshold set by the flagging rule on the other corpora (threshold_for,
    1%), and the share of the left-out corpus's real clips flagged at it: its dev clips, and with its other (train)
    clips when both folds scored them (`spoof_v4 loco` and `fold-scores --corpora` do), every real clip of the corpus,
    as `spoof_v5 select` counts."""
    with open(trials_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    v5 = np.load(v5_scores)
    if v5["paths"].tolist() != [r["path"] for r in rows]:
        raise SystemExit(f"{v5_scores} was scored on another trial list")
    folds = json.loads(str(v5["folds"]))
    v5_held = json.loads(str(v5["held_out"])) if "held_out" in v5.files else {}
    corpus = np.array([r["corpus"] for r in rows])
    real = np.array([r["label"] == "bonafide" for r in rows])
    out: dict = {}
    for fold, corpora in folds.items():
        stem = f"scores-cm-loco4-{'small' if fold == SMALL_CORPORA_FOLD else fold}"
        v4_file = v4_dir / f"{stem}.npy"
        if not v4_file.exists():
            print(f"{fold}: no {v4_file}, skipped")
            continue
        a, b = np.load(v4_file).astype(np.float64), v5[fold].astype(np.float64)
        if len(a) != len(rows):
            raise SystemExit(f"{v4_file}: {len(a)} scores for {len(rows)} trials")
        held = real & np.isin(corpus, corpora)
        others = real & ~held
        ca, cb = centre_and_scale(a, others), centre_and_scale(b, others)
        za, zb = (a - ca[0]) / ca[1], (b - cb[0]) / cb[1]
        # the corpus's other real clips, where both folds scored them
        extra_a, extra_b = np.zeros(0), np.zeros(0)
        v4_held_file = v4_dir / f"{stem}-held-out.npz"
        if v4_held_file.exists() != (fold in v5_held):
            raise SystemExit(f"{fold}: only one model's fold scored the corpus's other clips ({v4_held_file}, "
                             f"{v5_scores} held_out): rerun the other, or neither")
        if v4_held_file.exists():
            h4 = np.load(v4_held_file)
            by_path = dict(zip(h4["paths"].tolist(), h4["logits"].tolist()))
            if set(by_path) != set(v5_held[fold]["paths"]):
                raise SystemExit(f"{fold}: the two folds scored different clips of the corpus")
            pairs = [(by_path[p], x) for p, x in zip(v5_held[fold]["paths"], v5_held[fold]["logits"])]
            if pairs:
                extra_a = (np.array([p for p, _ in pairs]) - ca[0]) / ca[1]
                extra_b = (np.array([x for _, x in pairs]) - cb[0]) / cb[1]
        else:
            print(f"{fold}: neither fold scored the corpus's other clips: its dev clips only")
        flagged_dev, flagged_all = [], []
        for w in V4_WEIGHTS:
            fused = w * za + (1 - w) * zb
            blocks = {c: fused[others & (corpus == c)] for c in sorted(set(corpus[others]))}
            t = threshold_for(blocks, 0.01)
            everything = np.concatenate([fused[held], w * extra_a + (1 - w) * extra_b])
            flagged_dev.append(float((fused[held] < t).mean()) if held.any() else None)
            flagged_all.append(float((everything < t).mean()) if everything.size else None)
        out[fold] = {"real_dev_clips": int(held.sum()), "real_clips": int(held.sum() + extra_a.size),
                     "flagged_by_weight": flagged_all, "flagged_dev_clips_by_weight": flagged_dev}
        print(f"{fold} left out ({int(held.sum())} real dev clips, {int(held.sum() + extra_a.size)} in all): flagged "
              + ", ".join(f"{w:.1f}: {x:.1%}" for w, x in zip(V4_WEIGHTS, flagged_all) if x is not None))
    measured = [v["flagged_by_weight"] for v in out.values() if v["flagged_by_weight"][0] is not None]
    worst = np.max(measured, axis=0) if measured else []
    print("worst left-out corpus by v4 weight: " + ", ".join(f"{w:.1f}: {x:.1%}" for w, x in zip(V4_WEIGHTS, worst)))
    return {"weights": V4_WEIGHTS.tolist(), "loco": out, "worst_by_weight": list(map(float, worst))}


def weighted(folds: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict:
    """The fusion w * v4 + (1 - w) * v5 for w in V4_WEIGHTS, and w chosen without the family it is scored on: for
    each fold, the weight with the lowest mean EER over the other folds (nested leave-one-family-out)."""
    by_weight = {fam: [eer(w * a + (1 - w) * b, y)[0] for w in V4_WEIGHTS] for fam, (a, b, y) in folds.items()}
    mean_by_weight = np.mean(list(by_weight.values()), axis=0)
    print("mean EER by v4 weight: " + ", ".join(f"{w:.1f}: {e:.1%}" for w, e in zip(V4_WEIGHTS, mean_by_weight)))
    if len(folds) < 2:  # nothing to choose a weight on
        return {"weights": V4_WEIGHTS.tolist(), "eer_by_weight": by_weight, "mean_eer_by_weight": mean_by_weight.tolist()}
    nested = {}
    for fam in folds:
        others = np.mean([by_weight[f] for f in folds if f != fam], axis=0)
        best = int(np.argmin(others))
        nested[fam] = {"weight": float(V4_WEIGHTS[best]), "eer": by_weight[fam][best]}
    print("nested (weight chosen on the other folds): " + ", ".join(f"{f} {v['eer']:.1%} at {v['weight']:.1f}"
                                                                     for f, v in nested.items())
          + f"; mean {np.mean([v['eer'] for v in nested.values()]):.1%}, worst {max(v['eer'] for v in nested.values()):.1%}")
    return {"weights": V4_WEIGHTS.tolist(), "eer_by_weight": by_weight, "mean_eer_by_weight": mean_by_weight.tolist(),
            "nested": nested, "nested_mean": float(np.mean([v["eer"] for v in nested.values()])),
            "nested_worst": max(v["eer"] for v in nested.values())}


def sigmoid(x: float) -> float:
    return float(1 / (1 + np.exp(-x)))


def fusion_entry(names: list[str], caches: list[str], centre_scale: list[tuple[float, float]], weight: float, name: str,
                 shipped: dict, result_path: str) -> dict:
    """The manifest entry of the fusion: the second model's graph and input, the first as its partner."""
    manifest = json.loads(Path(update_manifest.MANIFEST).read_text())
    entries = [next((m for m in manifest["models"] if m["name"] == n), None) for n in names]
    if len(names) != 2 or None in entries:
        raise SystemExit(f"--names: two spoof models of the manifest, got {names}")
    for entry, cache in zip(entries, caches):  # an eval cache is named <speaker sha>-<spoof sha>-...: 12 digits each
        if Path(cache).name.split("-")[1] != entry["sha256"][:12]:
            raise SystemExit(f"{cache} holds another spoof model's scores than {entry['name']}")
    partner, own = entries
    (pc, ps), (oc, os_) = centre_scale
    rule = ("bona fide probability below which audio is flagged: the fused score's threshold at which at most 1% "
            "(verification) / 0.2% (enrolment) of the engine's real dev clips of every corpus with >= 100 of them are "
            "flagged, the lossless recordings as their own block, smaller corpora pooled, then lowered until every "
            "lossless recording and its MP3 twin are on one side of it, both at least 0.5 logit away, then halfway down "
            "to the next lower real clip's score (0.5 logit under the lowest when none is lower), so that no real clip "
            f"sits exactly at it (training/voxkey_train/cm_fusion_check.py; {result_path})")
    return {
        "name": name, "file": own["file"], "sha256": own["sha256"], "kind": "spoof", "bundled": own["bundled"],
        "default": True, "input": own["input"], "output": own["output"],
        "fusion": {"centre": round(oc, 6), "spread": round(os_, 6),
                   "with": {"model": partner["name"], "weight": weight, "centre": round(pc, 6), "spread": round(ps, 6)}},
        "license": f"{own['license']}; with {partner['name']} ({partner['license']})",
        "source": f"{own['name']} and {partner['name']} fused by training/voxkey_train/cm_fusion_check.py --ship-weight {weight} "
                  "on both models' engine scores of the CM dev trials and the lossless recordings (docs/accuracy.md)",
        "trainingData": f"{own['name']}: {own.get('trainingData', '')} | {partner['name']}: {partner.get('trainingData', '')}",
        "architecture": (f"{own['name']} and {partner['name']} score each recording; each logit is standardised by the median "
                         f"and interquartile range of its real dev clips' logits (centre, spread), the two averaged with "
                         f"{weight} on {partner['name']}, and the result put back on {own['name']}'s logit scale"),
        "defaultThreshold": round(sigmoid(shipped["verification_threshold"]), 9),
        "enrolmentThreshold": round(sigmoid(shipped["enrolment_threshold"]), 9),
        "thresholdNote": rule,
        "metrics": {k: shipped[k] for k in ("pooled_eer", "dev_spoofs_passing_at_verification_threshold",
                                            "dev_spoofs_passing_at_enrolment_threshold",
                                            "real_dev_flagged_at_verification_threshold",
                                            "extra_spoofs_passing_at_verification_threshold",
                                            "extra_spoofs_passing_at_enrolment_threshold") if k in shipped},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", action="append", default=[], help="an `npm run eval` cache file (twice: two models)")
    ap.add_argument("--lossless", action="append", default=[],
                    help="`npm run check:lossless --scores` files of the same two models, in the same order")
    ap.add_argument("--names", help="with --ship-weight: the caches' two spoof models, as the manifest names them")
    ap.add_argument("--ship-weight", type=float,
                    help="write the fusion with this weight on the first model into models/manifest.json as --ship-name, the "
                         "default spoof model, its thresholds by the rule above (needs --lossless and --names)")
    ap.add_argument("--ship-name", default="voxkey-spoof-v5-fusion")
    ap.add_argument("--loco-v4", type=Path, help="spoof_v4 loco's work folder (its scores-cm-loco4-<corpus>.npy and "
                    "-held-out.npz)")
    ap.add_argument("--loco-v5", type=Path, help="spoof_v5 fold-scores --corpora's .npz")
    ap.add_argument("--lofo-v4", type=Path, help="spoof_v4 lofo's work folder (its scores-cm-lofo4-<family>.npy)")
    ap.add_argument("--lofo-v5", type=Path, help="spoof_v5 fold-scores' .npz")
    ap.add_argument("--lofo-v4-cache", type=Path, help="with --lofo-*: the shipped v4's `npm run eval` cache, for families "
                    "no v4 model saw (generated ones)")
    ap.add_argument("--trials", default=str(DATA_DIR / "trials" / "cm-dev.csv"))
    ap.add_argument("--extra-spoofs", help="a trial list (path,label,attack,corpus) of spoofs outside --trials, scored in "
                    "the same caches (for example generated Kokoro clips): the share of them passing at each threshold")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.loco_v4 or a.loco_v5:
        if not (a.loco_v4 and a.loco_v5) or a.cache or a.lofo_v4 or a.lofo_v5:
            ap.error("--loco-v4 and --loco-v5 go together, without --cache or --lofo-*")
        Path(a.out).write_text(json.dumps(loco(a.loco_v4, a.loco_v5, a.trials), indent=1))
        return
    if a.lofo_v4 or a.lofo_v5:
        if not (a.lofo_v4 and a.lofo_v5) or a.cache:
            ap.error("--lofo-v4 and --lofo-v5 go together, without --cache")
        Path(a.out).write_text(json.dumps(lofo(a.lofo_v4, a.lofo_v5, a.trials, a.lofo_v4_cache), indent=1))
        return
    if len(a.cache) != 2:
        ap.error("--cache takes two files")
    caches = [json.loads(Path(c).read_text()) for c in a.cache]
    with open(a.trials, newline="") as f:
        rows = [r for r in csv.DictReader(f) if all(r["path"] in c for c in caches)]
    real = np.array([r["label"] == "bonafide" for r in rows])
    logits = [np.array([c[r["path"]]["logit"] for r in rows], np.float64) for c in caches]
    if a.lossless and len(a.lossless) != 2:
        ap.error("--lossless takes two files, or none")
    pairs = [lossless_pairs(Path(f)) for f in a.lossless]
    if a.names and a.lossless:
        scored_by = [json.loads(Path(f).read_text()).get("spoofModel") for f in a.lossless]
        if scored_by != a.names.split(","):
            ap.error(f"--lossless files scored by {scored_by}, --names says {a.names}: the same models in the same order")
    if pairs and [p for p, _ in pairs[0]] != [p for p, _ in pairs[1]]:
        ap.error("the two --lossless files scored different recordings")
    pair_logits = [np.array([x for _, x in p], np.float64) for p in pairs]  # [n, 2]: as recorded, as MP3
    za, zb = standardised(logits[0], real), standardised(logits[1], real)
    centre_scale = [centre_and_scale(x, real) for x in logits]
    zl = [(pl - c) / s for pl, (c, s) in zip(pair_logits, centre_scale)]
    extra_paths: list[str] = []
    if a.extra_spoofs:
        with open(a.extra_spoofs, newline="") as f:
            in_trials = {r["path"] for r in rows}
            extra_paths = [r["path"] for r in csv.DictReader(f) if r["label"] == "spoof" and r["path"] not in in_trials]
        if missing := [p for p in extra_paths if not all(p in c for c in caches)]:
            ap.error(f"--extra-spoofs: {len(missing)} clips are not in both caches (first: {missing[0]})")
    ze = [(np.array([c[p]["logit"] for p in extra_paths], np.float64) - m) / sd for c, (m, sd) in zip(caches, centre_scale)]

    # the fused score on b's logit scale (b's own logits at weight 0 on a), so the lossless consistency's margin keeps
    # its meaning in logits of the model it was set for
    cb, sb = centre_scale[1]

    def on_b_scale(wa: float, z_a: np.ndarray, z_b: np.ndarray) -> np.ndarray:
        return cb + sb * (wa * z_a + (1 - wa) * z_b)

    def fused(wa: float) -> np.ndarray:
        return on_b_scale(wa, za, zb)

    def extra_of(wa: float) -> np.ndarray:
        return on_b_scale(wa, *ze)

    def lossless_of(wa: float) -> tuple[np.ndarray, np.ndarray] | None:
        if not zl:
            return None
        f = on_b_scale(wa, *zl)
        return f[:, 0], f[:, 1]

    result = {"trials": len(rows), "caches": [Path(c).name for c in a.cache], "lossless": a.lossless,
              "standardisation": [{"centre": c, "spread": s} for c, s in centre_scale],
              "a": report(logits[0], rows, (pair_logits[0][:, 0], pair_logits[0][:, 1]) if zl else None,
                          centre_scale[0][0] + centre_scale[0][1] * ze[0]),
              "b": report(logits[1], rows, lossless_of(0), extra_of(0)),
              "fused": report(fused(0.5), rows, lossless_of(0.5), extra_of(0.5))}
    # the weight on the first model, in-sample (chosen on the figures it is measured by: a trade-off to read, not a fit)
    result["by_weight_on_a"] = {f"{w:.1f}": {k: v for k, v in report(fused(w), rows, lossless_of(w), extra_of(w)).items()
                                             if k != "families"}
                                for w in V4_WEIGHTS}
    if a.ship_weight is not None:
        if not (zl and a.names) or not 0 < a.ship_weight < 1:
            ap.error("--ship-weight (between 0 and 1) needs --lossless and --names")
        shipped = report(fused(a.ship_weight), rows, lossless_of(a.ship_weight), extra_of(a.ship_weight))
        entry = fusion_entry(a.names.split(","), a.cache, centre_scale, a.ship_weight, a.ship_name, shipped, a.out)
        update_manifest.update([entry])
        result["shipped"] = {"name": a.ship_name, "weight_on_a": a.ship_weight, **shipped}
        print(f"wrote {a.ship_name} into models/manifest.json: verification threshold {entry['defaultThreshold']:.6g}, "
              f"enrolment {entry['enrolmentThreshold']:.6g} (bona fide probability); pooled EER {shipped['pooled_eer']:.2%}, "
              f"dev spoofs passing {shipped['dev_spoofs_passing_at_verification_threshold']:.1%} / "
              f"{shipped['dev_spoofs_passing_at_enrolment_threshold']:.1%}")
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
              f"at the enrolment rule {r['dev_spoofs_passing_at_enrolment_rule']:.1%}"
              + (f"; with the lossless block and no split pair: {r['dev_spoofs_passing_at_verification_threshold']:.1%} / "
                 f"{r['dev_spoofs_passing_at_enrolment_threshold']:.1%}" if zl else "")
              + (f"; extra spoofs passing {r['extra_spoofs_passing_at_verification_threshold']:.1%} / "
                 f"{r['extra_spoofs_passing_at_enrolment_threshold']:.1%}" if zl and extra_paths else ""))


if __name__ == "__main__":
    main()
