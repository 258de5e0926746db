"""Spoof countermeasure training: bona fide (train split) vs spoof (train split + generated).

Run from the repo root: python3 -m training.voxkey_train.train_spoof
Seeded (per-step RNG), resumable from training/checkpoints/spoof_<tag>.pt, time-budgeted.
"""
from __future__ import annotations

import argparse
import csv
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from . import augment as A
from .data import Cache, TRAIN_DIR, WORK, data_dir_arg
from .families import LOCO_MIN_CLIPS, family_of, lofo_excluded, real_corpora_named
from .spoof_model import WIN, build_cm, oc_softmax_loss
from .warmstart import load_onnx_weights

CKPT_DIR = os.path.join(TRAIN_DIR, "checkpoints")


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def load_pools(cache: Cache, exclude_families=(), spoofgen=None, exclude_corpora=()):
    """Bona fide train clips (Common Voice; other corpora with their MP3 round trip) and spoof
    clips by family -> attack (kept as int16 to halve memory). exclude_families: left out (LOFO);
    exclude_corpora: real corpora left out (leave-one-corpus-out), with their clips' channel versions."""
    rows = cache.rows
    corpus_of = {r["path"]: r["corpus"] for r in rows}
    bona_cv, bona_other = [], {}
    for i, r in enumerate(rows):
        if r["kind"] == "bonafide" and r["split"] == "train" and r["corpus"] not in exclude_corpora:
            if r["corpus"] == "commonvoice":
                bona_cv.append((cache.raw[r["raw_off"]: r["raw_off"] + r["raw_len"]], None))
            else:
                mp3 = cache.mp3[r["mp3_off"]: r["mp3_off"] + r["mp3_len"]] if r["mp3_len"] > 0 else None
                bona_other.setdefault(r["corpus"], []).append(
                    (np.asarray(cache.raw[r["raw_off"]: r["raw_off"] + r["raw_len"]]),
                     np.asarray(mp3) if mp3 is not None else None))
    bona_cv = [(np.asarray(x), None) for x, _ in bona_cv]
    d = spoofgen or os.path.join(WORK, "spoofgen")
    wave = np.load(os.path.join(d, "wave.npy"), mmap_mode="r")
    with open(os.path.join(d, "index.csv")) as f:
        idx = list(csv.DictReader(f))
    fam, bona_chan = {}, []
    for r in idx:
        o, n = int(r["off"]), int(r["len"])
        if "ch_off" in r:  # v4 (spoof_v4/gen.py): every clip also through a user channel; memory-mapped, not copied
            clip = (wave[o: o + n], wave[int(r["ch_off"]): int(r["ch_off"]) + int(r["ch_len"])])
            if r["family"] == "bonafide":
                if corpus_of.get(r["src"]) not in exclude_corpora:
                    bona_chan.append(clip)
                continue
            f = r["family"]
        else:
            clip = (np.asarray(wave[o: o + n]), None)
            f = family_of(r["attack"])
        if f in exclude_families:
            continue
        fam.setdefault(f, {}).setdefault(r["attack"], []).append(clip)
    corp = sorted(bona_other)
    w = np.sqrt(np.array([len(bona_other[c]) for c in corp], np.float64))
    log("bona fide cv", len(bona_cv), "other", {c: len(bona_other[c]) for c in corp}, "spoof families",
        {k: sum(len(x) for x in v.values()) for k, v in fam.items()}, "excluded", list(exclude_families), sorted(exclude_corpora),
        "bona fide through channels", len(bona_chan))
    return bona_cv, (corp, [bona_other[c] for c in corp], w / w.sum()), fam, bona_chan


def pad_edges(x, rng):
    """random leading/trailing low-level silence/noise (both classes)"""
    parts = []
    for _ in range(2):
        n = int(rng.uniform(0, 1.0) * 16000)
        lvl = 10 ** (rng.uniform(-75, -40) / 20)
        seg = (A.coloured_noise(n, rng) * lvl) if n > 0 else np.zeros(0, np.float32)
        parts.append(seg.astype(np.float32))
    return np.concatenate([parts[0], x, parts[1]])


def augment_common(x, rng, spoof=False, rawboost_p=0.0):
    if rng.random() < 0.7:
        x = pad_edges(x, rng)
    x = A.crop_or_pad(x, WIN, rng)
    if rng.random() < 0.15:
        x = A.pitch_shift(x, rng)
    if rng.random() < rawboost_p:
        x = A.rawboost(x, rng)
    if rng.random() < 0.15:
        x = A.reverb(x, rng, rt60=rng.uniform(0.15, 0.5))
    if rng.random() < 0.2:
        x = A.add_noise(x, A.coloured_noise(WIN, rng), rng.uniform(15, 40))
    u = rng.random()
    if u < 0.05:
        x = A.telephone(x, rng)
    elif u < 0.3:
        x = A.lowpass(x, rng)
    elif spoof and rawboost_p > 0 and u < 0.55:
        # Common Voice (all bona fide) is the only material band-limited at ~6 kHz: give spoofs the
        # same band limit so that a missing top band is no sign of real speech
        x = A.cv_bandlimit(x, rng)
    return A.random_gain(x, rng, -25, 3)


def make_batch(pools, step, seed, bs, rawboost_p=0.0, chan_p=0.0):
    """Balanced batches. Bona fide: half Common Voice, half the other corpora (corpus drawn with
    p ~ sqrt(#clips), its MP3 round trip 60% of the time). Spoof: family uniformly, then an attack
    of that family uniformly, then a clip. chan_p (v4): that share of the crops of BOTH classes comes
    through a user channel (Opus/MP3/GSM/G.726/Speex, spoof_v4/gen.py): for bona fide a train clip's channel
    version, for a spoof its own channel version, so a codec is never evidence either way."""
    bona_cv, (corp, other, cw), fam, bona_chan = pools
    fams = sorted(fam)
    rng = np.random.default_rng([seed, step])
    xs, ys = [], []
    for j in range(bs):
        if j % 2 == 0:
            if bona_chan and rng.random() < chan_p:
                x = bona_chan[rng.integers(len(bona_chan))][1]
            elif bona_cv and rng.random() < 0.5:  # none when Common Voice is the corpus left out
                x = bona_cv[rng.integers(len(bona_cv))][0]
            else:
                pool = other[int(min(np.searchsorted(np.cumsum(cw), rng.random()), len(other) - 1))]
                raw, mp3 = pool[rng.integers(len(pool))]
                x = mp3 if (mp3 is not None and rng.random() < 0.6) else raw
            y = 1.0
        else:
            f = fam[fams[rng.integers(len(fams))]]
            atts = sorted(f)
            clips = f[atts[rng.integers(len(atts))]]
            clean, chan = clips[rng.integers(len(clips))]
            x = chan if (chan is not None and rng.random() < chan_p) else clean
            y = 0.0
        x = np.asarray(x, np.float32) / 32768.0
        xs.append(augment_common(x, rng, spoof=y == 0.0, rawboost_p=rawboost_p))
        ys.append(y)
    return torch.from_numpy(np.stack(xs)), torch.tensor(ys)


def main():
    ap = argparse.ArgumentParser()
    data_dir_arg(ap)
    ap.add_argument("--arch", default="lcnn-lfb64")
    ap.add_argument("--tag", default=None)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-steps", type=int, default=1500)
    ap.add_argument("--stop-step", type=int, default=None)
    ap.add_argument("--time-budget-min", type=float, default=None)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--ckpt-every-s", type=float, default=180)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--init-onnx", default=None, help="start a new run from a shipped model's weights")
    ap.add_argument("--exclude-families", default="", help="comma-separated families left out (LOFO), see families.py")
    ap.add_argument("--exclude-corpora", default="",
                    help="comma-separated real corpora left out (leave-one-corpus-out); 'small': every corpus with fewer "
                    f"than {LOCO_MIN_CLIPS} real clips (families.loco_folds)")
    ap.add_argument("--rawboost-p", type=float, default=0.0,
                    help="share of crops (both classes) with RawBoost-style noise; >0 also band-limits spoofs like Common Voice")
    ap.add_argument("--spoofgen", default=None, help="generated-spoof folder (default $VOXKEY_WORK/spoofgen; v4: .../spoofgen-v4)")
    ap.add_argument("--chan-p", type=float, default=0.0, help="share of crops of both classes through a user channel (v4 data only)")
    ap.add_argument("--save-at", default="", help="comma-separated steps at which a copy of the checkpoint is kept")
    a = ap.parse_args()
    tag = a.tag or a.arch
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(CKPT_DIR, exist_ok=True)
    ck = os.path.join(CKPT_DIR, f"spoof_{tag}.pt")
    excl = tuple(f for x in a.exclude_families.split(",") if x for f in lofo_excluded(x))
    cache = Cache()
    try:
        corpora = real_corpora_named(a.exclude_corpora, cache.rows)
    except ValueError as e:
        ap.error(f"--exclude-corpora: {e}")
    pools = load_pools(cache, excl, a.spoofgen, frozenset(corpora))
    save_at = {int(x) for x in a.save_at.split(",") if x}
    model = build_cm(a.arch)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=1e-4)
    step = 0
    if os.path.exists(ck):
        st = torch.load(ck, map_location="cpu", weights_only=False)  # our own checkpoint (holds numpy scalars)
        model.load_state_dict(st["model"]); opt.load_state_dict(st["opt"]); step = st["step"]
        log(f"resumed {ck} at step {step}")
    elif a.init_onnx:
        log(f"initialised {load_onnx_weights(model, a.init_onnx)} tensors from {a.init_onnx}")

    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "arch": a.arch,
                    "args": vars(a), "excluded": list(excl), "excluded_corpora": sorted(corpora)}, ck + ".tmp")
        os.replace(ck + ".tmp", ck)
        log(f"checkpoint step {step}")

    t0 = last = time.time()
    stop = min(a.max_steps, a.stop_step or a.max_steps)
    run = None
    model.train()
    while step < stop:
        torch.manual_seed(a.seed * 7919 + step)  # dropout masks reproducible across resumes
        x, y = make_batch(pools, step, a.seed, a.batch_size, a.rawboost_p, a.chan_p)
        warm = 100
        lr = a.lr * min(1, (step + 1) / warm) * (0.5 * (1 + np.cos(np.pi * min(1, step / a.max_steps))) * 0.97 + 0.03)
        for g in opt.param_groups:
            g["lr"] = lr
        logit = model(x)
        if a.arch.endswith("-oc"):
            loss = oc_softmax_loss(model.cos, y)
        else:
            loss = F.binary_cross_entropy_with_logits(logit, y)
        opt.zero_grad(); loss.backward(); opt.step()
        step += 1
        acc = ((logit > 0).float() == y).float().mean().item()
        run = (loss.item(), acc) if run is None else (0.97 * run[0] + 0.03 * loss.item(), 0.97 * run[1] + 0.03 * acc)
        if step % 25 == 0:
            log(f"step {step} loss {run[0]:.3f} acc {run[1]:.3f} lr {lr:.2e} {(time.time()-t0)/60:.1f} min")
        if time.time() - last > a.ckpt_every_s or step in save_at:
            save(); last = time.time()
        if step in save_at:
            import shutil
            shutil.copyfile(ck, ck.replace(".pt", f"-step{step}.pt"))
        if a.time_budget_min and time.time() - t0 > a.time_budget_min * 60:
            log("time budget reached"); break
    save()


if __name__ == "__main__":
    main()
