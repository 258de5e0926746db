#!/usr/bin/env python3
"""Markdown tables for issue 25 from training/results/cm-*.json (written by spoof_v4/evaluate.py):

  python3 -m training.voxkey_train.spoof_v4.report      # v3 vs v4 per family, real flagged per corpus, LOFO folds
"""
from __future__ import annotations

import glob
import json
import os

R = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "results")  # training/results


LOFO4_STEPS = 80  # every lofo4 fold so far (spoof_v4 lofo --folds "family:80 ...")


def load(name):
    p = os.path.join(R, name)
    return json.load(open(p)) if os.path.exists(p) else None


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def main():
    models = [(n, load(f)) for n, f in (("v3", "cm-v4-eval-voxkey-spoof-v3.json"), ("v4", "cm-voxkey-spoof-v4.json"),
                                        ("v4-oc", "cm-v4-candidate-oc.json"))]
    models = [(n, d) for n, d in models if d]
    print("| | " + " | ".join(n for n, _ in models) + " |")
    print("| --- |" + " ---: |" * len(models))
    print("| pooled EER | " + " | ".join(pct(d["pooledEer"]) for _, d in models) + " |")
    for k in ("verification3pct", "verification5pct", "enrolment0.5pct"):
        print(f"| threshold P(bona fide) {k} | " + " | ".join(f"{d['thresholds'][k]:.6f}" for _, d in models) + " |")
        print(f"| spoofs accepted at {k} | " + " | ".join(pct(d["spoofAccepted"][k]) for _, d in models) + " |")
    fams = sorted({f for _, d in models for f in d["families"]})
    print("\nPer family (dev spoofs of the family vs all dev bona fide): EER / accepted at the verification threshold\n")
    print("| family | clips | " + " | ".join(n for n, _ in models) + " |")
    print("| --- | ---: |" + " ---: |" * len(models))
    for f in fams:
        n = next(d["families"][f]["spoof"] for _, d in models if f in d["families"])
        print(f"| {f} | {n} | " + " | ".join(
            (f"{pct(d['families'][f]['eer'])} / {pct(d['families'][f]['acceptedAt_verification3pct'])}" if f in d["families"] else "-")
            for _, d in models) + " |")
    print("\nReal dev clips flagged as deepfake per corpus (verification 3% / enrolment 0.5% thresholds)\n")
    groups = list(models[0][1]["bonafideClips"])
    print("| corpus | real clips | " + " | ".join(n for n, _ in models) + " |")
    print("| --- | ---: |" + " ---: |" * len(models))
    for g in groups:
        print(f"| {g} | {models[0][1]['bonafideClips'][g]} | " + " | ".join(
            f"{pct(d['bonafideFlagged']['verification3pct'][g])} / {pct(d['bonafideFlagged']['enrolment0.5pct'][g])}"
            for _, d in models) + " |")
    print("\nLeave-one-family-out (held-out family's dev EER; every fold fine-tunes v2's weights)\n")
    print("| held-out family | run | steps | EER | pooled EER |")
    print("| --- | --- | ---: | ---: | ---: |")
    for fam in ("codec-lm-tts", "vc-any", "neural-vocoder"):  # v3's folds (v3 data, v3 evaluator: no end-aligned window)
        d = load(f"cm-lofo-{fam}.json")
        if d:
            print(f"| {fam} | v3 recipe, cm-lofo-{fam} | {d['model']['step']} | {pct(d['family:' + fam]['eer'])} | {pct(d['pooled']['eer'])} |")
    d = load("cm-lofo-oc-codec-lm-tts.json")
    if d:
        print(f"| codec-lm-tts | v3 recipe, one-class, cm-lofo-oc-codec-lm-tts | {d['model']['step']} | {pct(d['family:codec-lm-tts']['eer'])} | {pct(d['pooled']['eer'])} |")
    bce = {}
    for p in sorted(glob.glob(os.path.join(R, "cm-lofo4*.json"))):
        d = json.load(open(p))
        tag = os.path.basename(p)[3:-5]
        fam = tag.replace("lofo4-oc-", "").replace("lofo4-", "")
        fam = fam.replace("gen-", "gen:", 1) if fam.startswith("gen-") else fam
        e = d["families"].get(fam, {}).get("eer")
        if "-oc-" not in tag and e is not None:
            bce[fam] = e
        print(f"| {fam} | v4 data{', one-class' if '-oc-' in tag else ''}, {tag} | {LOFO4_STEPS} | {pct(e)} | {pct(d['pooledEer'])} |")
    for p in sorted(glob.glob(os.path.join(R, "cm-lofo250-*.json"))):  # the same recipe, 250 steps (v3's fold length)
        d = json.load(open(p))
        tag = os.path.basename(p)[3:-5]
        fam = tag.replace("lofo250-", "")
        fam = fam.replace("gen-", "gen:", 1) if fam.startswith("gen-") else fam
        print(f"| {fam} | v4 data, {tag} | 250 | {pct(d['families'].get(fam, {}).get('eer'))} | {pct(d['pooledEer'])} |")
    if bce:
        dataset = {f: e for f, e in bce.items() if not f.startswith("gen:")}
        generated = {f: e for f, e in bce.items() if f.startswith("gen:")}
        print("\nv4 data, binary head (the shipped recipe), over its folds:\n")
        print("| folds | n | mean EER | worst |")
        print("| --- | ---: | ---: | --- |")
        for name, group in (("dataset families", dataset), ("generated families", generated), ("all", bce)):
            if group:
                worst = max(group, key=group.get)
                print(f"| {name} | {len(group)} | {pct(sum(group.values()) / len(group))} | {worst} {pct(group[worst])} |")


if __name__ == "__main__":
    main()
