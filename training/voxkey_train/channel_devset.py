"""The speaker channel dev set: the dev speaker trials (trials/sv-dev.csv) with enrolment and test each through a
user channel (channels.py), as 16 kHz WAV files outside the repository, plus a trials CSV `npm run eval` reads.

  nice -n 10 $VOXKEY_VENV/bin/python -m training.voxkey_train.channel_devset --jobs 2
  npm run eval -- --sv ../shared/datasets/trials/sv-dev.csv --channels $VOXKEY_WORK/sv-channel-dev/trials/sv-dev-channels.csv --max-far 0.01 --threads 1

For the robust-comparison study (training/voxkey_train/sv_channel_study.py), --study also writes
  speech/.../<utt>.enrol-<channel>.lowpass.wav   each enrolment-side version low-passed to LOWPASS_HZ (bandwidth matching)
  trials/sv-dev-channels-lowpassed-enrol.csv      the trials with those as enrolments
and, under $VOXKEY_WORK/sv-channel-train, train speakers' clips, each as it is and through drawn channels
(trials/train-channels.csv pairs them, only so that `npm run eval -- --sv` embeds them): by default TRAIN_SPEAKERS
seeded speakers x TRAIN_CLIPS clips and one channel; the shipped embedding projection's set is every train speaker,
up to 20 clips each, two channels drawn per clip:

  ... channel_devset --jobs 2 --study --train-speakers all --train-min-clips 1 --train-max-clips 20 --train-channel-draws 2

--enrol-augment writes every enrolment recording (the clean set's and the channel set's enrolment side) through
ENROL_AUGMENTATIONS, for sv_channel_study --enrol-augment (docs/accuracy.md, "Enrolment augmentation"):
  speech/.../<utt>.enrol-<channel>.aug-<augmentation>.wav, speech/.../<utt>.clean-none.aug-<augmentation>.wav
  trials/enrol-augment.csv   the files, each as a trial with itself (only so that `npm run eval -- --channels` embeds them)

Output (default $VOXKEY_WORK/sv-channel-dev; VOXKEY_WORK defaults to training/work, data.py):
  speech/<corpus>/<speaker>/<utt>.<side>-<channel>.wav   side: enrol | test | same (see below)
  trials/sv-dev-channels.csv   enrol,test,target,lang,enrol_channel,test_channel (sv-dev.csv's rows, in its order)

Every distinct clip of sv-dev.csv gets an enrolment-side channel and a test-side channel, each drawn uniformly
from channels.CHANNELS with an RNG seeded by (SEED, the clip's path, the side); a trial pairs the enrolment clip's
enrolment-side version with the test clip's test-side version. Independent draws give the same channel on both
sides in only about 1 trial in 30, so a seeded SAME_SHARE of the trials instead put the test clip through the
enrolment clip's channel (side `same`): the "same channel" pair kind. Everything depends on the seed only (not on
--jobs or finishing order); existing files are kept, so an interrupted run continues.
"""
from __future__ import annotations

import argparse
import csv
import os
import zlib
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

import numpy as np

from . import audio_io as io
from . import channels as C
from .data import WORK, data_dir_arg

SEED = 20261127
SAME_SHARE = 0.06
DEFAULT_OUT = os.path.join(WORK, "sv-channel-dev")
TRAIN_OUT = os.path.join(WORK, "sv-channel-train")
LOWPASS_HZ = 3800
LOWPASS = C.Channel(f"lowpass-{LOWPASS_HZ}", "band", (("high_hz", LOWPASS_HZ), ("low_hz", 20)))
TRAIN_SPEAKERS, TRAIN_CLIPS = 200, 3
# Enrolment augmentation study: each enrolment recording also through these fixed channels (a voiceprint would keep
# the mean of its embeddings as they are and through them).
ENROL_AUGMENTATIONS = [
    C.get("band-300-3400"),
    C.Channel("room-0.5", "room", (("rt60", (0.5, 0.5)),)),
    C.Channel("noise-pink-10", "noise", (("colour", "pink"), ("snr_db", (10.0, 10.0)))),
]


def clip_rng(path: str, side: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32(path.encode()), zlib.crc32(side.encode())])


def version_path(path: str, side: str, channel: str) -> str:
    return f"{path.rsplit('.', 1)[0]}.{side}-{channel}.wav"


def plan(trials):
    """-> (the trial rows with enrol/test replaced by channel versions and channel columns, the files to write:
    (dataset path, side, channel))."""
    clips = sorted({t["enrol"] for t in trials} | {t["test"] for t in trials})
    side_channel = {(c, side): C.draw_channel(clip_rng(c, side)).name for c in clips for side in ("enrol", "test")}
    same_draw = np.random.default_rng([SEED, 1]).random(len(trials)) < SAME_SHARE
    rows, files = [], set()
    for t, same in zip(trials, same_draw):
        enrol_channel = side_channel[(t["enrol"], "enrol")]
        test_side, test_channel = ("same", enrol_channel) if same else ("test", side_channel[(t["test"], "test")])
        files.add((t["enrol"], "enrol", enrol_channel))
        files.add((t["test"], test_side, test_channel))
        rows.append({"enrol": version_path(t["enrol"], "enrol", enrol_channel), "test": version_path(t["test"], test_side, test_channel),
                     "target": t["target"], "lang": t["lang"], "enrol_channel": enrol_channel, "test_channel": test_channel})
    return rows, sorted(files)


def augmented_path(version: str, augmentation: str) -> str:
    return f"{version[: -len('.wav')]}.aug-{augmentation}.wav"


class Then(NamedTuple):
    """A second channel after a version's own (the study sets' low-passed and augmented enrolments): its file suffix
    and the RNG side it is seeded with (None: unseeded, for the deterministic low-pass)."""
    channel: C.Channel
    suffix: str
    rng_side: str | None = None


LOWPASSED = Then(LOWPASS, ".lowpass")


def augmented(augmentation: C.Channel) -> Then:
    return Then(augmentation, f".aug-{augmentation.name}", f"aug:{augmentation.name}")


def _write(job):
    data_dir, out_dir, path, side, channel = job[:5]
    then = job[5] if len(job) > 5 else None
    dst = os.path.join(out_dir, version_path(path, side, channel))
    if then:
        dst = dst[: -len(".wav")] + then.suffix + ".wav"
    if os.path.exists(dst):
        return
    x = io.load_audio(os.path.join(data_dir, path))
    y = C.apply_channel(x, channel, clip_rng(path, f"{side}:{channel}"))
    if then:
        y = C.apply_channel(y, then.channel, clip_rng(path, then.rng_side) if then.rng_side else None)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    io.save_wav(dst + ".tmp", y)
    os.replace(dst + ".tmp", dst)


def train_plan(data_dir, speakers=TRAIN_SPEAKERS, min_clips=TRAIN_CLIPS, max_clips=TRAIN_CLIPS, channel_draws=1):
    """Seeded train bona fide speakers with >= min_clips clips of >= 2 s (`speakers` of them, or all when None), up to
    max_clips clips each, each clip as it is and through `channel_draws` drawn channels (a channel drawn twice for a
    clip is written once). The defaults are the study's set."""
    with open(os.path.join(data_dir, "manifest.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["split"] == "train" and r["kind"] == "bonafide" and float(r["duration_s"]) >= 2]
    by_speaker = {}
    for r in rows:
        by_speaker.setdefault(f"{r['corpus']}/{r['speaker']}", []).append(r["path"])
    eligible = sorted(k for k, v in by_speaker.items() if len(v) >= min_clips)
    rng = np.random.default_rng([SEED, 2])
    if speakers is None:
        chosen = eligible
    else:
        chosen = [eligible[i] for i in sorted(rng.choice(len(eligible), min(speakers, len(eligible)), replace=False))]
    files = []
    for spk in chosen:
        clips = sorted(by_speaker[spk])
        for path in sorted(str(p) for p in rng.choice(clips, min(max_clips, len(clips)), replace=False)):
            files.append((path, "train", "none"))
            drawn = []
            for draw in range(channel_draws):
                channel = C.draw_channel(clip_rng(path, "train" if draw == 0 else f"train{draw}")).name
                if channel not in drawn:
                    drawn.append(channel)
                    files.append((path, "train", channel))
    return files


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    data_dir_arg(p)
    p.add_argument("--out", default=DEFAULT_OUT, help="output folder (default $VOXKEY_WORK/sv-channel-dev)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--study", action="store_true", help="also write the robust-comparison study's sets (see above)")
    p.add_argument("--enrol-augment", action="store_true", help="also write every enrolment recording (clean and channel "
                   "version) through ENROL_AUGMENTATIONS, listed in trials/enrol-augment.csv")
    p.add_argument("--train-speakers", default=str(TRAIN_SPEAKERS), help=f"--study: train speakers drawn, or 'all' (default {TRAIN_SPEAKERS})")
    p.add_argument("--train-min-clips", type=int, default=TRAIN_CLIPS, help=f"--study: clips a train speaker needs (default {TRAIN_CLIPS})")
    p.add_argument("--train-max-clips", type=int, default=TRAIN_CLIPS, help=f"--study: clips taken per train speaker (default {TRAIN_CLIPS})")
    p.add_argument("--train-channel-draws", type=int, default=1, help="--study: channels drawn per train clip (default 1)")
    args = p.parse_args()
    with open(os.path.join(args.data_dir, "trials", "sv-dev.csv")) as f:
        trials = list(csv.DictReader(f))
    rows, files = plan(trials)
    C.noise_bank(args.data_dir)  # built once here, not by every worker
    jobs = [(args.data_dir, args.out, path, side, channel) for path, side, channel in files]
    with ProcessPoolExecutor(args.jobs, initializer=os.nice, initargs=(10,)) as pool:
        for i, _ in enumerate(pool.map(_write, jobs, chunksize=16)):
            if (i + 1) % 500 == 0:
                print(f"  {i + 1}/{len(jobs)} files", flush=True)
    os.makedirs(os.path.join(args.out, "trials"), exist_ok=True)
    with open(os.path.join(args.out, "trials", "sv-dev-channels.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["enrol", "test", "target", "lang", "enrol_channel", "test_channel"])
        w.writeheader()
        w.writerows(rows)
    same = sum(r["enrol_channel"] == r["test_channel"] for r in rows)
    print(f"{len(files)} files, {len(rows)} trials ({same} with the same channel on both sides) in {args.out}")
    if args.study:
        write_study_sets(args, rows, files)
    if args.enrol_augment:
        write_enrol_augment_set(args, rows, files)


def write_study_sets(args, rows, files):
    enrol_files = [(path, side, channel, LOWPASSED) for path, side, channel in files if side == "enrol"]
    speakers = None if args.train_speakers == "all" else int(args.train_speakers)
    train_files = train_plan(args.data_dir, speakers, args.train_min_clips, args.train_max_clips, args.train_channel_draws)
    jobs = [(args.data_dir, args.out, *f) for f in enrol_files] + [(args.data_dir, TRAIN_OUT, *f) for f in train_files]
    with ProcessPoolExecutor(args.jobs, initializer=os.nice, initargs=(10,)) as pool:
        list(pool.map(_write, jobs, chunksize=16))
    with open(os.path.join(args.out, "trials", "sv-dev-channels-lowpassed-enrol.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["enrol", "test", "target", "lang", "enrol_channel", "test_channel"])
        w.writeheader()
        w.writerows({**r, "enrol": r["enrol"][: -len(".wav")] + ".lowpass.wav"} for r in rows)
    os.makedirs(os.path.join(TRAIN_OUT, "trials"), exist_ok=True)
    with open(os.path.join(TRAIN_OUT, "trials", "train-channels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["enrol", "test", "target", "lang", "enrol_channel", "test_channel"])
        for path, _, channel in train_files:
            if channel != "none":
                w.writerow([version_path(path, "train", "none"), version_path(path, "train", channel), 1, "", "none", channel])
    print(f"{len(enrol_files)} low-passed enrolment versions; {len(train_files)} train files in {TRAIN_OUT}")


def write_enrol_augment_set(args, rows, files):
    """Each enrolment-side version of the channel set and each clean enrolment clip (as version `clean-none`) through
    every ENROL_AUGMENTATIONS channel; trials/enrol-augment.csv lists each (as a trial with itself) only so that
    `npm run eval -- --channels` embeds them."""
    clean_enrol = sorted({r["enrol"] for r in csv.DictReader(open(os.path.join(args.data_dir, "trials", "sv-dev.csv")))})
    versions = [(path, side, channel) for path, side, channel in files if side == "enrol"] + [(p, "clean", "none") for p in clean_enrol]
    jobs = [(args.data_dir, args.out, *v, augmented(a)) for v in versions for a in ENROL_AUGMENTATIONS]
    with ProcessPoolExecutor(args.jobs, initializer=os.nice, initargs=(10,)) as pool:
        list(pool.map(_write, jobs, chunksize=16))
    with open(os.path.join(args.out, "trials", "enrol-augment.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["enrol", "test", "target", "lang", "enrol_channel", "test_channel"])
        for path, side, channel in versions:
            for a in ENROL_AUGMENTATIONS:
                augmented = augmented_path(version_path(path, side, channel), a.name)
                w.writerow([augmented, augmented, 1, "", a.name, a.name])
    print(f"{len(versions)} enrolment versions x {len(ENROL_AUGMENTATIONS)} augmentations in {args.out}")


if __name__ == "__main__":
    main()
