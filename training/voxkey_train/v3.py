"""The v3 recipe (issue 12): the speaker and spoof models trained here, and their comparisons. Run from the repository
root with the Debian stack's python (torch 1.13 + torchaudio, training/README.md), which every step also uses:

  python3 -m training.voxkey_train.v3 speaker [--arch-compare] [--skip-engine] [--dry-run] ...
  python3 -m training.voxkey_train.v3 spoof [--skip-engine] [--dry-run] ...
  python3 -m training.voxkey_train.v3 compare [SECTION ...] [--folds "family:steps ..."] [--dry-run] ...

  speaker  data cache -> v3: warm restart from voxkey-speaker-v2 (git history, commit e861fd7) on every train speaker,
           classes drawn with p ~ sqrt(clips per speaker), AAM head imprinted from class means; the shipped run's
           cosine cycles (--v3-schedule, the last one exported) -> models/voxkey-speaker-v3.onnx -> the engine's
           decision calibration (npm run eval -- --write-calibration --quality-duration; AS-norm was tried, not chosen)
  spoof    data cache -> generated train-only spoofs (gen_spoof.py) -> v3: warm restart from voxkey-spoof-v2 with every
           train family, RawBoost-style noise on 30% of the crops, a --v3-steps cosine cycle stopped at --v3-stop (the
           shipped run was stopped there) -> models/voxkey-spoof-v3.onnx -> the engine's spoof threshold
           (npm run eval -- --write-spoof-threshold: at most 5% of every dev corpus's real clips flagged)
  compare  the v3 comparisons (docs/accuracy.md), after the caches exist. Sections (default: spoof-lofo spoof-oc
           spoof-aug speaker-cmp): spoof-lofo (leave-one-family-out fine-tunes from v2, --folds), spoof-oc (one-class
           softmax on the codec-LM fold), spoof-aug (that fold without RawBoost-style noise and the spoof band limit),
           speaker-cmp (classes drawn uniformly over clips vs p ~ sqrt(clips per speaker), --cmp-steps each); by name
           only: spoof-oc-all (one-class softmax on every family at v3's length), speaker-clip-full (uniform-over-clips
           sampling over a full 2,400-step cycle from v2)

Without the git history (e.g. a source tarball), `speaker` and `spoof` first rebuild v2: stage A (the v1 recipe: a
main cosine cycle of --max-steps and a --cont-steps continuation, exported to $VOXKEY_WORK/stage-a/; skipped when
--init-onnx exists) and stage B (v2: warm restart from --init-onnx, --v2-steps). Resumable: the caches are built once
($VOXKEY_WORK, default training/work), checkpoints go to training/checkpoints/ and a re-run continues from them. The
long training runs go under `nice -n --nice` (10). `--dry-run` prints the commands instead of running them (the
branches taken depend on which caches, checkpoints and v2 files exist now).
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys

from .data import DATA_DIR, WORK

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
V2_COMMIT = "e861fd7"  # the v2 models in git history (v3's warm start)
SECTIONS = ("spoof-lofo", "spoof-oc", "spoof-aug", "speaker-cmp", "spoof-oc-all", "speaker-clip-full")
DEFAULT_SECTIONS = ("spoof-lofo", "spoof-oc", "spoof-aug", "speaker-cmp")
# per model: architecture, stage A main cycle and continuation, stage B (v2) steps and arguments, v3 steps
KINDS = {
    "speaker": dict(module="train_speaker", eval_kind="sv", arch="ecapa256", max_steps=1000, cont_steps=1400,
                    v2_steps=3600, v2_args=["--lr", "1e-3", "--margin-ramp", "200"], v3_steps=1450,
                    stage_a_export_args=["--backend", "none"], v3_export_args=["--backend", "none", "--no-eval"]),
    "spoof": dict(module="train_spoof", eval_kind="cm", arch="lcnn-lfb64", max_steps=600, cont_steps=900,
                  v2_steps=1800, v2_args=["--lr", "5e-4"], v3_steps=1200, stage_a_export_args=[], v3_export_args=[]),
}


def rel(path: str) -> str:
    """A path inside the repository relative to its root, where every step runs (as the former shell recipes spelled it)."""
    r = os.path.relpath(path, ROOT)
    return path if r.startswith("..") else r


class Runner:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.fetched: set[str] = set()  # v2 files a dry run would have taken from git history

    def say(self, line: str) -> None:
        print("+", line, flush=True)

    def py(self, module: str, *args: str, quiet: bool = False, nice: bool = False) -> None:
        """python -m training.voxkey_train.MODULE ARGS (stdout to /dev/null when quiet)."""
        cmd = [sys.executable, "-m", f"training.voxkey_train.{module}", *args]
        if nice:
            cmd = ["nice", "-n", str(self.a.nice), *cmd]
        self.say(shlex.join(cmd) + (" > /dev/null" if quiet else ""))
        if not self.a.dry_run:
            subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL if quiet else None)

    def npm_eval(self, *args: str) -> None:
        cmd = ["npm", "run", "eval", "--", *args]
        self.say(shlex.join(cmd))
        if not self.a.dry_run:
            subprocess.run(cmd, check=True, cwd=ROOT)

    def exists(self, path: str) -> bool:
        """A non-empty file (or one a dry run would have fetched)."""
        p = os.path.join(ROOT, path)
        return path in self.fetched or (os.path.isfile(p) and os.path.getsize(p) > 0)

    def fetch_v2(self, name: str, path: str, required: bool = False) -> bool:
        """models/NAME.onnx at V2_COMMIT -> path, unless path already holds it; False without the git history."""
        if self.exists(path):
            return True
        spec = f"{V2_COMMIT}:models/{name}.onnx"
        have = subprocess.run(["git", "cat-file", "-e", spec], cwd=ROOT, capture_output=True).returncode == 0
        if not have:
            if required:
                sys.exit(f"v3: {spec} is not in this repository's history (pass the v2 file's path instead)")
            return False
        self.say(f"git show {spec} > {shlex.quote(path)}")
        if self.a.dry_run:
            self.fetched.add(path)
        else:
            blob = subprocess.run(["git", "show", spec], check=True, cwd=ROOT, capture_output=True).stdout
            with open(os.path.join(ROOT, path), "wb") as f:
                f.write(blob)
        return True

    def fs(self, op: str, src: str, dst: str) -> None:
        self.say(shlex.join([op, src, dst]))
        if not self.a.dry_run:
            (shutil.copyfile if op == "cp" else shutil.move)(os.path.join(ROOT, src), os.path.join(ROOT, dst))

    def mkdirs(self, *paths: str) -> None:
        if not self.a.dry_run:
            for p in paths:
                os.makedirs(os.path.join(ROOT, p), exist_ok=True)

    def data_cache(self) -> None:
        if not os.path.exists(os.path.join(WORK, "cache", "index.csv")):
            jobs = ["--jobs", str(self.a.jobs)] if self.a.jobs else []
            self.py("data", "--data-dir", self.a.data_dir, *jobs)


def two_stage_training(r: Runner, kind: str, name: str) -> None:
    """Stages A (v1 recipe, skipped when --init-onnx exists) and B (v2: warm restart from --init-onnx) -> models/NAME."""
    a, k = r.a, KINDS[kind]
    data, arch, module, init = a.data_dir, a.arch, k["module"], a.init_onnx
    if not r.exists(init):
        r.py(module, "--data-dir", data, "--arch", arch, "--max-steps", str(a.max_steps))
        ckpt = f"training/checkpoints/{kind}_{arch}.pt"
        if a.cont_steps != 0:
            c2 = f"training/checkpoints/{kind}_{arch}-c2.pt"
            if not r.exists(c2):
                r.fs("cp", ckpt, c2)
            r.py(module, "--data-dir", data, "--arch", arch, "--tag", f"{arch}-c2", "--max-steps", str(a.cont_steps))
            ckpt = c2
        out_dir = os.path.dirname(init)
        r.py("export", kind, "--data-dir", data, "--ckpt", ckpt, "--name", os.path.basename(init).removesuffix(".onnx"),
             "--out-dir", out_dir, "--results-dir", out_dir, "--no-manifest", *k["stage_a_export_args"])
    r.py(module, "--data-dir", data, "--arch", arch, "--tag", f"{arch}-v2", "--init-onnx", init, "--max-steps",
         str(a.v2_steps), *k["v2_args"])
    r.py("export", kind, "--data-dir", data, "--ckpt", f"training/checkpoints/{kind}_{arch}-v2.pt", "--name", name)
    r.py("evaluate", k["eval_kind"], "--data-dir", data, "--onnx", f"models/{name}.onnx",
         "--out", f"training/results/{k['eval_kind']}-{name}-onnx.json", quiet=True)


def v3_training(r: Runner, kind: str, tag: str, *v3_args: str) -> None:
    """v3: warm restart from the v2 ONNX file (from git history; without it, stages A and B rebuild v2 first, exported
    to models/ under the v2 name and moved to $VOXKEY_WORK), export to models/, ONNX evaluation."""
    a, k = r.a, KINDS[kind]
    v2_name = f"voxkey-{kind}-v2"
    v2 = rel(os.path.join(WORK, f"{v2_name}.onnx"))
    if not r.fetch_v2(v2_name, v2):
        two_stage_training(r, kind, v2_name)
        r.fs("mv", f"models/{v2_name}.onnx", v2)
    r.py(k["module"], "--data-dir", a.data_dir, "--tag", tag, "--init-onnx", v2, *v3_args, nice=True)
    r.py("export", kind, "--data-dir", a.data_dir, "--ckpt", f"training/checkpoints/{kind}_{tag}.pt", "--name", a.name,
         *k["v3_export_args"])
    r.py("evaluate", k["eval_kind"], "--data-dir", a.data_dir, "--onnx", f"models/{a.name}.onnx",
         "--out", f"training/results/{k['eval_kind']}-{a.name}-onnx.json", quiet=True)


def speaker(r: Runner) -> None:
    a = r.a
    data, arch = a.data_dir, a.arch
    r.mkdirs(os.path.dirname(a.init_onnx), "training/checkpoints", "training/results")
    r.data_cache()
    if a.arch_compare:
        # short architecture comparison at ~equal CPU time (same seed and batches): ECAPA 300 steps vs thin ResNet 190
        for cmp_arch, max_steps, stop in (("ecapa256", 2200, 300), ("resnet-thin", 1400, 190)):
            r.py("train_speaker", "--data-dir", data, "--arch", cmp_arch, "--tag", f"cmp-{cmp_arch}", "--max-steps",
                 str(max_steps), "--stop-step", str(stop))
            r.py("evaluate", "sv", "--data-dir", data, "--ckpt", f"training/checkpoints/speaker_cmp-{cmp_arch}.pt",
                 "--out", f"training/results/sv-compare-{cmp_arch}-{stop}.json", quiet=True)
    # The shipped run's LR schedule: it was restarted from its checkpoints with shorter cosine cycles as the shared
    # machine got slower (max-steps:stop-step); the last cycle is the one exported (by v3_training).
    schedule = a.v3_schedule or f"3800:308 3400:1170 3000:1228 {a.v3_steps}:{a.v3_steps}"
    common = ["--arch", arch, "--lr", "1e-3", "--margin-ramp", "200"]
    sampling = ["--sampling", "spk-sqrt", "--imprint-per-class", "3", "--imprint-crop-s", "2", "--save-at", "0,400,1500"]
    v2 = rel(os.path.join(WORK, "voxkey-speaker-v2.onnx"))
    if r.fetch_v2("voxkey-speaker-v2", v2):  # no git history: v3_training rebuilds v2 first, then one cycle
        for sched in schedule.split():
            max_steps, stop = sched.split(":")
            if stop == str(a.v3_steps):
                break
            r.py("train_speaker", "--data-dir", data, "--tag", f"{arch}-v3", "--init-onnx", v2, *common, "--max-steps",
                 max_steps, "--stop-step", stop, *sampling, nice=True)
    v3_training(r, "speaker", f"{arch}-v3", *common, "--max-steps", str(a.v3_steps), *sampling)
    if not a.skip_engine:
        trials = ["--sv", os.path.join(data, "trials", "sv-dev.csv"), "--cm", os.path.join(data, "trials", "cm-dev.csv")]
        # AS-norm (--write-cohort) was tried and not chosen (worst dev block, docs/accuracy.md); the decision
        # calibration with the test-duration quality term is what ships
        r.npm_eval(*trials, "--write-calibration", "--quality-duration")
        r.npm_eval(*trials)  # the tables with the calibration in use


def spoof(r: Runner) -> None:
    a = r.a
    r.mkdirs(os.path.dirname(a.init_onnx), "training/checkpoints", "training/results")
    r.data_cache()
    if not os.path.exists(os.path.join(WORK, "spoofgen", "index.csv")):
        r.py("gen_spoof")
    v3_training(r, "spoof", f"{a.arch}-v3", "--arch", a.arch, "--lr", "5e-4", "--max-steps", str(a.v3_steps),
                "--stop-step", str(a.v3_stop), "--rawboost-p", "0.3")
    if not a.skip_engine:
        data = a.data_dir
        trials = ["--sv", os.path.join(data, "trials", "sv-dev.csv"), "--cm", os.path.join(data, "trials", "cm-dev.csv")]
        r.npm_eval(*trials, "--write-spoof-threshold")
        r.npm_eval(*trials)


def compare(r: Runner) -> None:
    """The v3 comparisons (issue 12), as run in the sessions of 2026-11-25 (2 shared CPU cores); each run is evaluated
    on dev with evaluate.py; the tables are in docs/accuracy.md."""
    a = r.a
    data = a.data_dir
    r.mkdirs("training/results", "training/checkpoints", rel(WORK))
    spk_v2, spoof_v2 = a.v2_speaker_onnx, a.v2_spoof_onnx
    r.fetch_v2("voxkey-speaker-v2", spk_v2, required=True)
    r.fetch_v2("voxkey-spoof-v2", spoof_v2, required=True)

    def train_eval(module: str, tag: str, train_args: list[str], eval_kind: str, out: str) -> None:
        r.py(module, "--data-dir", data, *train_args, nice=True)
        r.py("evaluate", eval_kind, "--data-dir", data, "--ckpt", f"training/checkpoints/{tag}.pt", "--out", out,
             quiet=True, nice=True)

    for s in a.sections or DEFAULT_SECTIONS:
        if s == "spoof-lofo":
            # family:steps (the first v3 session ran 80/50/50 steps on an overloaded machine; re-run with 250 each)
            for fold in a.folds.split():
                fam, steps = fold.split(":")[0], fold.split(":")[-1]  # as the former shell recipe split them
                train_eval("train_spoof", f"spoof_lofo-{fam}",
                           ["--tag", f"lofo-{fam}", "--init-onnx", spoof_v2, "--lr", "5e-4", "--max-steps", steps,
                            "--rawboost-p", "0.3", "--exclude-families", fam], "cm", f"training/results/cm-lofo-{fam}.json")
        elif s == "spoof-oc":
            # approach comparison on the codec-LM fold: one-class softmax instead of BCE, same data and steps
            train_eval("train_spoof", "spoof_lofo-oc-codec-lm-tts",
                       ["--arch", "lcnn-lfb64-oc", "--tag", "lofo-oc-codec-lm-tts", "--init-onnx", spoof_v2, "--lr", "5e-4",
                        "--max-steps", str(a.oc_steps), "--rawboost-p", "0.3", "--exclude-families", "codec-lm-tts"],
                       "cm", "training/results/cm-lofo-oc-codec-lm-tts.json")
        elif s == "spoof-oc-all":
            # the one-class softmax at v3's length on every family (v3's recipe with the one-class head; third session)
            train_eval("train_spoof", "spoof_oc-all-v3",
                       ["--arch", "lcnn-lfb64-oc", "--tag", "oc-all-v3", "--init-onnx", spoof_v2, "--lr", "5e-4",
                        "--max-steps", "1200", "--stop-step", "984", "--rawboost-p", "0.3"],
                       "cm", "training/results/cm-oc-all-v3.json")
        elif s == "spoof-aug":
            # augmentation comparison on the codec-LM fold: the same BCE run without v3's added augmentation
            # (--rawboost-p 0 turns off both the RawBoost-style noise and the Common Voice band limit on spoofs;
            # reverberation, noise, telephone and low-pass stay, as in v2)
            train_eval("train_spoof", "spoof_lofo-norawboost-codec-lm-tts",
                       ["--tag", "lofo-norawboost-codec-lm-tts", "--init-onnx", spoof_v2, "--lr", "5e-4",
                        "--max-steps", str(a.oc_steps), "--rawboost-p", "0", "--exclude-families", "codec-lm-tts"],
                       "cm", "training/results/cm-lofo-norawboost-codec-lm-tts.json")
        elif s == "speaker-clip-full":
            # the sampling comparison's winner over a whole cosine cycle (the 400-1600-step runs were cut from a 3800-step one)
            train_eval("train_speaker", "speaker_clip-full",
                       ["--arch", "ecapa256", "--tag", "clip-full", "--init-onnx", spk_v2, "--lr", "1e-3",
                        "--margin-ramp", "200", "--max-steps", "2400", "--sampling", "clip", "--imprint-per-class", "3",
                        "--imprint-crop-s", "2", "--save-at", "1200,1800"],
                       "sv", "training/results/sv-clip-full-2400.json")
        elif s == "speaker-cmp":
            # the sampling comparison: two candidates from the same warm start (v2 weights, head imprinted from class
            # means), the same seed, LR schedule (cosine over 3800 steps) and number of steps (--cmp-steps): classes
            # drawn uniformly over clips vs p ~ sqrt(clips per speaker) (the shipped choice)
            for samp in ("clip", "spk-sqrt"):
                train_eval("train_speaker", f"speaker_cmp-{samp}",
                           ["--arch", "ecapa256", "--tag", f"cmp-{samp}", "--init-onnx", spk_v2, "--lr", "1e-3",
                            "--margin-ramp", "200", "--max-steps", "3800", "--stop-step", str(a.cmp_steps),
                            "--sampling", samp, "--imprint-per-class", "3", "--imprint-crop-s", "2"],
                           "sv", f"training/results/sv-cmp-{samp}-{a.cmp_steps}.json")


def main() -> None:
    ap = argparse.ArgumentParser(description="The v3 recipe: the speaker and spoof models trained here (issue 12) and "
                                 "their comparisons. See the module's docstring and training/README.md.")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="speaker|spoof|compare")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", default=DATA_DIR, help="the data set (default $VOXKEY_DATA_DIR, else $DATA_DIR, else "
                       "../shared/datasets beside the repository)")
        p.add_argument("--nice", type=int, default=10, help="niceness of the training runs (default 10)")
        p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")

    for kind in ("speaker", "spoof"):
        k = KINDS[kind]
        p = sub.add_parser(kind, help=f"train and export voxkey-{kind}-v3, then the engine's "
                           + ("calibration" if kind == "speaker" else "spoof threshold"))
        common(p)
        p.add_argument("--jobs", type=int, default=None, help="data cache worker processes (default: data.py's, 2)")
        p.add_argument("--arch", default=k["arch"], help=f"default {k['arch']}")
        p.add_argument("--max-steps", type=int, default=k["max_steps"], help="stage A main cycle (only without v2)")
        p.add_argument("--cont-steps", type=int, default=k["cont_steps"], help="stage A continuation (0: none)")
        p.add_argument("--v2-steps", type=int, default=k["v2_steps"], help="stage B (v2), only without the git history")
        p.add_argument("--init-onnx", default=rel(os.path.join(WORK, "stage-a", f"voxkey-{kind}-stage-a.onnx")),
                       help="stage B's starting point; when it exists stage A is skipped")
        p.add_argument("--v3-steps", type=int, default=k["v3_steps"], help="the exported v3 cosine cycle")
        p.add_argument("--name", default=f"voxkey-{kind}-v3", help="the exported model's name (models/NAME.onnx)")
        p.add_argument("--skip-engine", action="store_true", help="no npm run eval at the end")
        if kind == "speaker":
            p.add_argument("--v3-schedule", default=None, help='"max-steps:stop-step ..." cycles before the exported one '
                           '(default "3800:308 3400:1170 3000:1228 N:N", N = --v3-steps: the shipped run)')
            p.add_argument("--arch-compare", action="store_true",
                           help="first re-run the short v1 comparison (ECAPA 300 steps vs thin ResNet 190 steps)")
        else:
            p.add_argument("--v3-stop", type=int, default=984, help="where the v3 cycle stops (the shipped run: 984)")
    p = sub.add_parser("compare", help="the v3 comparisons (leave-one-family-out, one-class softmax, sampling)")
    common(p)
    p.add_argument("sections", nargs="*", metavar="section",
                   help=f"one or more of {', '.join(SECTIONS)} (default: {' '.join(DEFAULT_SECTIONS)})")
    p.add_argument("--folds", default="codec-lm-tts:250 vc-any:250 neural-vocoder:250", help='spoof-lofo: "family:steps ..."')
    p.add_argument("--oc-steps", type=int, default=250, help="spoof-oc and spoof-aug steps")
    p.add_argument("--cmp-steps", type=int, default=400, help="speaker-cmp steps per candidate")
    p.add_argument("--v2-speaker-onnx", default=rel(os.path.join(WORK, "voxkey-speaker-v2.onnx")),
                   help="the speaker warm start (taken from git history when missing)")
    p.add_argument("--v2-spoof-onnx", default=rel(os.path.join(WORK, "voxkey-spoof-v2.onnx")),
                   help="the spoof warm start (taken from git history when missing)")
    a = ap.parse_args()
    unknown = set(getattr(a, "sections", [])) - set(SECTIONS)  # checked here: nargs="*" with choices rejects no sections
    if unknown:
        ap.error(f"compare: unknown section(s) {', '.join(sorted(unknown))}; one of {', '.join(SECTIONS)}")
    {"speaker": speaker, "spoof": spoof, "compare": compare}[a.cmd](Runner(a))


if __name__ == "__main__":
    main()
