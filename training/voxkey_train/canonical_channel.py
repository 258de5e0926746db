"""A canonical channel before the spoof model (issue 30, item 1): does coding every recording the same way at
inference (the data set's MP3 setting, LAME at 32 kbit/s, 16 kHz mono) before the spoof check beat the shipped
thresholds, which are lowered until every lossless recording and its MP3 twin get one verdict?

  python -m training.voxkey_train.canonical_channel prepare --out D
      D/speech/...: every CM dev clip decoded and coded again at the canonical setting (a second coding: the data
      set is MP3 already); D/lossless/... and D/twin/...: the 300 lossless recordings and their MP3 twins, each
      coded at the canonical setting; D/trials/cm-dev-canonical.csv: the CM dev rows, then the 600 pair rows
      (bona fide, corpora `canonical-lossless` and `canonical-twin`), for `npm run eval -- --cm`.
  npm run eval -- --cm ../shared/datasets/trials/cm-dev.csv --out A.json            # as served today
  npm run check:lossless -- --scores L.json
  npm run eval -- --cm D/trials/cm-dev-canonical.csv --out B.json                    # through the canonical channel
  python -m training.voxkey_train.canonical_channel compare --as-is <A.json's cacheFile> --lossless L.json \\
      --canonical <B.json's cacheFile> --out training/results/cm-canonical-channel.json

Both conditions get their thresholds by the shipped rule (cm_fusion_check.report: at most 1% / 0.2% of the real dev
clips of every corpus with >= 100 of them, the smaller corpora pooled, the lossless recordings a block of their own,
then lowered until no pair is split), so the comparison is what each would ship.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .cm_fusion_check import lossless_pairs, report
from .pretrained import DATA_DIR

CANONICAL = ["-ar", "16000", "-ac", "1", "-c:a", "libmp3lame", "-b:a", "32k"]


def code(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists():
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(src), *CANONICAL, str(dst)], check=True)


def prepare(out: Path, jobs: int) -> Path:
    with open(DATA_DIR / "trials" / "cm-dev.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    with open(DATA_DIR / "lossless" / "manifest.csv", newline="") as f:
        pairs = list(csv.DictReader(f))
    work = [(DATA_DIR / r["path"], out / r["path"]) for r in rows]
    extra = []
    for p in pairs:
        lossless = Path("lossless") / Path(p["path"]).relative_to("lossless").with_suffix(".mp3")
        twin = Path("twin") / Path(p["mp3_path"]).relative_to("speech")
        work += [(DATA_DIR / p["path"], out / lossless), (DATA_DIR / p["mp3_path"], out / twin)]
        extra += [{"path": str(lossless), "label": "bonafide", "attack": "-", "corpus": "canonical-lossless"},
                  {"path": str(twin), "label": "bonafide", "attack": "-", "corpus": "canonical-twin"}]
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda w: code(*w), work))
    trials = out / "trials" / "cm-dev-canonical.csv"
    trials.parent.mkdir(parents=True, exist_ok=True)
    with open(trials, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["path", "label", "attack", "corpus"])
        w.writeheader()
        w.writerows([{k: r[k] for k in ("path", "label", "attack", "corpus")} for r in rows] + extra)
    return trials


def logits(cache: Path) -> dict[str, float]:
    return {clip: r["logit"] for clip, r in json.loads(cache.read_text()).items()}


def compare(as_is_cache: Path, lossless_scores: Path, canonical_cache: Path) -> dict:
    with open(DATA_DIR / "trials" / "cm-dev.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    as_is, canonical = logits(as_is_cache), logits(canonical_cache)
    pairs = lossless_pairs(lossless_scores)
    lossless_as_is = (np.array([p[1][0] for p in pairs]), np.array([p[1][1] for p in pairs]))

    def canonical_of(path: str, folder: str) -> float:
        rel = Path(path).relative_to("lossless").with_suffix(".mp3") if folder == "lossless" else \
            Path(path).relative_to("speech")
        return canonical[str(Path(folder) / rel)]

    with open(DATA_DIR / "lossless" / "manifest.csv", newline="") as f:
        twin_of = {p["path"]: p["mp3_path"] for p in csv.DictReader(f)}
    lossless_canonical = (np.array([canonical_of(p[0], "lossless") for p in pairs]),
                          np.array([canonical_of(twin_of[p[0]], "twin") for p in pairs]))
    out = {}
    for name, scores, lossless in (("as served (shipped thresholds' rule)", as_is, lossless_as_is),
                                   ("canonical MP3 32k before the spoof model", canonical, lossless_canonical)):
        s = np.array([scores[r["path"]] for r in rows])
        result = report(s, rows, lossless)
        result["lossless_mean_abs_logit_difference"] = float(np.abs(lossless[0] - lossless[1]).mean())
        out[name] = result
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--jobs", type=int, default=2)
    c = sub.add_parser("compare")
    c.add_argument("--as-is", required=True, type=Path, help="npm run eval's cache of the CM dev trials as served")
    c.add_argument("--lossless", required=True, type=Path, help="npm run check:lossless --scores file")
    c.add_argument("--canonical", required=True, type=Path, help="npm run eval's cache of cm-dev-canonical.csv")
    c.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.command == "prepare":
        print(f"wrote {prepare(args.out, args.jobs)}")
        return
    result = compare(args.as_is, args.lossless, args.canonical)
    for name, r in result.items():
        print(f"{name}: pooled EER {r['pooled_eer']:.4f}; verification threshold {r['verification_threshold']:.3f}: "
              f"{r['dev_spoofs_passing_at_verification_threshold']:.1%} of dev spoofs pass, "
              f"{r['real_dev_flagged_at_verification_threshold']:.2%} of real flagged; enrolment: "
              f"{r['dev_spoofs_passing_at_enrolment_threshold']:.1%} pass; lossless/MP3 mean |logit difference| "
              f"{r['lossless_mean_abs_logit_difference']:.3f}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
