"""Print markdown tables from training/results/{sv,cm}-<name>.json (used for the model card)."""
import json
import os
import sys

R = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")


def pct(x):
    return "n/a" if x != x else f"{100 * x:.1f}%"


def sv(name):
    d = json.load(open(os.path.join(R, f"sv-{name}.json")))
    print("| SV trial block | trials | targets | EER | minDCF(0.01) | Cllr |\n| --- | ---: | ---: | ---: | ---: | ---: |")
    for k, v in d.items():
        if isinstance(v, dict) and "eer" in v and "trials" in v:
            print(f"| {k} | {v['trials']} | {v['targets']} | {pct(v['eer'])} | {v['minDcf01']:.3f} | {v['cllr']:.3f} |")
    print()
    print("calibration", d["calibration"])
    print("bands", {k: round(v, 3) for k, v in d["matchScoreBands"].items()})
    print("operating points", d["operatingPoints"])
    print("model", d.get("model"))


def cm(name):
    d = json.load(open(os.path.join(R, f"cm-{name}.json")))
    print("| CM condition | EER |\n| --- | ---: |")
    for k, v in d.items():
        if isinstance(v, dict) and "eer" in v:
            extra = f" ({v['spoof']} spoof clips)" if "spoof" in v and k.startswith("attack") else ""
            print(f"| {k}{extra} | {pct(v['eer'])} |")
    print("at p=0.5", d["at_p0.5"], "pooled thr logit", d["pooled"]["eerThresholdLogit"])


if __name__ == "__main__":
    (sv if sys.argv[1] == "sv" else cm)(sys.argv[2])
