"""The v4 spoof recipe (issue 25), run from the repository root with the venv's python (torch 2.13 CPU, no torchaudio):

  $VOXKEY_VENV/bin/python -m training.voxkey_train.spoof_v4 STAGE... [--steps N] [--folds "family:steps ..."] [--dry-run]

  gen      data cache + spoof generation stage (resumable) + pack
  v4       v4 candidate: warm start from v3, every family, channels on both classes
  v4-oc    the same with the one-class-softmax head
  lofo     leave-one-family-out folds (--folds "family:steps ..."), from v2 like v3's folds
  lofo-oc  the same folds with the one-class-softmax head
  loco     leave-one-corpus-out folds of real speech (--corpora "corpus:steps ..."; 'small' = the corpora with fewer
           than 100 real clips, as one fold), from v2 like the family folds: DIR/scores-cm-loco4-<corpus>.npy, and the
           held-out corpus's other real clips in DIR/scores-cm-loco4-<corpus>-held-out.npz
  eval-v3  the shipped v3 model through the same evaluation (thresholds for v3)
  export   v4 checkpoint -> models/voxkey-spoof-v4.onnx + evaluation + manifest entry

Several stages run in order (`gen v4 export`, the shipped model's rebuild). Every step runs under `nice -n --nice`
(19), one thread per process. Caches and generated audio go to $VOXKEY_WORK (default training/work/v4, gitignored);
checkpoints to training/checkpoints/. Then the engine thresholds: `npm run eval -- --sv ... --cm ... --spoof-model
voxkey-spoof-v4 --write-spoof-threshold --max-flagged 0.03 --write-enrolment-spoof-threshold`.
`--dry-run` prints the commands instead of running them.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys

from ..data import DATA_DIR, WORK

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
STAGES = ("gen", "v4", "v4-oc", "lofo", "lofo-oc", "loco", "eval-v3", "export")
V2_COMMIT = "e861fd7"  # the v2 models in git history (the folds' warm start)


def main() -> None:
    ap = argparse.ArgumentParser(description="The v4 spoof recipe (issue 25).")
    ap.add_argument("stages", nargs="+", choices=STAGES, metavar="stage", help=f"one or more of {', '.join(STAGES)}, in order")
    ap.add_argument("--data-dir", default=DATA_DIR)
    ap.add_argument("--steps", type=int, default=700, help="v4 / v4-oc training steps (the shipped run: 320)")
    ap.add_argument("--folds", default="codec-lm-tts:250 vc-any:250 neural-vocoder:250", help='"family:steps ..."')
    ap.add_argument("--corpora", default="commonvoice:80 speechocean762:80 librispeech-tc100:80 emodb:80 small:80",
                    help='"corpus:steps ..." (loco)')
    ap.add_argument("--jobs", type=int, default=2, help="generation stage worker processes")
    ap.add_argument("--nice", type=int, default=19)
    ap.add_argument("--ckpt", default="training/checkpoints/spoof_v4-bce.pt", help="the checkpoint `export` exports")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    a = ap.parse_args()
    data, gen = a.data_dir, os.path.join(WORK, "spoofgen-v4")

    def run(module: str, *args: str, quiet: bool = False) -> None:
        cmd = ["nice", "-n", str(a.nice), sys.executable, "-m", f"training.voxkey_train.{module}", *args]
        print("+", shlex.join(cmd), "> /dev/null" if quiet else "", flush=True)
        if not a.dry_run:
            subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL if quiet else None)

    v2_spoof = os.path.join(WORK, "voxkey-spoof-v2.onnx")
    if not a.dry_run:
        os.makedirs(os.path.join(ROOT, "training", "results"), exist_ok=True)
        os.makedirs(os.path.join(ROOT, "training", "checkpoints"), exist_ok=True)
        os.makedirs(WORK, exist_ok=True)
        if not (os.path.exists(v2_spoof) and os.path.getsize(v2_spoof)):
            blob = subprocess.run(["git", "show", f"{V2_COMMIT}:models/voxkey-spoof-v2.onnx"], check=True, cwd=ROOT,
                                  capture_output=True).stdout
            with open(v2_spoof, "wb") as f:
                f.write(blob)
    common = ["--data-dir", data, "--spoofgen", gen, "--rawboost-p", "0.3", "--chan-p", "0.5", "--lr", "5e-4"]
    for stage in a.stages:
        if stage == "gen":
            if not os.path.exists(os.path.join(WORK, "cache", "index.csv")):
                run("data", "--data-dir", data, "--jobs", str(a.jobs), "--no-mp3")
            run("spoof_v4.gen", "--data-dir", data, "--jobs", str(a.jobs))
            run("spoof_v4.gen", "--data-dir", data, "--pack")
        elif stage in ("v4", "v4-oc"):
            head = "bce" if stage == "v4" else "oc"
            arch = [] if stage == "v4" else ["--arch", "lcnn-lfb64-oc"]
            run("train_spoof", *common, *arch, "--tag", f"v4-{head}", "--init-onnx", "models/voxkey-spoof-v3.onnx",
                "--max-steps", str(a.steps))
            run("spoof_v4.evaluate", "--data-dir", data, "--ckpt", f"training/checkpoints/spoof_v4-{head}.pt",
                "--out", f"training/results/cm-v4-candidate-{head}.json", quiet=True)
        elif stage in ("lofo", "lofo-oc"):
            arch, pre = ("lcnn-lfb64", "lofo4") if stage == "lofo" else ("lcnn-lfb64-oc", "lofo4-oc")
            for fold in a.folds.split():
                fam, steps = fold.rsplit(":", 1)  # family names may contain ":" (gen:piper:80)
                tag = f"{pre}-{fam.replace(':', '-', 1)}"
                extra = ["--gen-families", fam] if fam.startswith("gen:") else []
                run("train_spoof", *common, "--arch", arch, "--tag", tag, "--init-onnx", v2_spoof, "--max-steps", steps,
                    "--exclude-families", fam)
                run("spoof_v4.evaluate", "--data-dir", data, "--ckpt", f"training/checkpoints/spoof_{tag}.pt", *extra,
                    "--out", f"training/results/cm-{tag}.json", quiet=True)
        elif stage == "loco":
            for fold in a.corpora.split():
                corpus, steps = fold.rsplit(":", 1)
                tag = f"loco4-{corpus}"
                run("train_spoof", *common, "--tag", tag, "--init-onnx", v2_spoof, "--max-steps", steps,
                    "--exclude-corpora", corpus)
                run("spoof_v4.evaluate", "--data-dir", data, "--ckpt", f"training/checkpoints/spoof_{tag}.pt",
                    "--score-real-corpora", corpus, "--out", f"training/results/cm-{tag}.json", quiet=True)
        elif stage == "eval-v3":
            run("spoof_v4.evaluate", "--data-dir", data, "--onnx", "models/voxkey-spoof-v3.onnx",
                "--out", "training/results/cm-v4-eval-voxkey-spoof-v3.json", quiet=True)
        elif stage == "export":
            run("spoof_v4.export", "--data-dir", data, "--ckpt", a.ckpt, "--name", "voxkey-spoof-v4")


if __name__ == "__main__":
    main()
