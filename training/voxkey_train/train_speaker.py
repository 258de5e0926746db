"""Speaker-embedding training (AAM-softmax), seeded, resumable, time-budgeted.

Run from the repo root:  python3 -m training.voxkey_train.train_speaker --arch ecapa256 --tag ecapa256
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from . import augment as A
from .data import Cache, TRAIN_DIR, data_dir_arg
from .features import compute_fbank, energy_vad_concat
from .models import AAMSoftmax, build_model
from .warmstart import load_onnx_weights

CKPT_DIR = os.path.join(TRAIN_DIR, "checkpoints")


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def build_train_set(cache: Cache, speeds=(0.9, 1.0, 1.1)):
    rows = cache.rows
    idx = [i for i, r in enumerate(rows) if r["kind"] == "bonafide" and r["split"] == "train"]
    spk = sorted({(rows[i]["corpus"], rows[i]["speaker"]) for i in idx})
    spk_id = {s: k for k, s in enumerate(spk)}
    items = []  # (wave int16 raw, wave int16 mp3 or None, class)
    t0 = time.time()
    for i in idx:
        r = rows[i]
        x = energy_vad_concat(cache.wav(i))
        xm = energy_vad_concat(cache.wav(i, mp3=True)) if r["mp3_len"] > 0 else None
        for si, sp in enumerate(speeds):
            a = A.resample_speed(x, sp)
            b = A.resample_speed(xm, sp) if xm is not None else None
            c = spk_id[(r["corpus"], r["speaker"])] * len(speeds) + si
            items.append((A_to16(a), A_to16(b) if b is not None else None, c))
    log(f"train set: {len(idx)} clips, {len(spk)} speakers x {len(speeds)} speeds, {len(items)} items, {time.time()-t0:.0f}s")
    return items, len(spk) * len(speeds)


def A_to16(x):
    return np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)


def class_sampler(items, mode):
    """Sampling of training items. 'clip': uniform over items (v1/v2). 'spk-sqrt': a class
    (speaker x speed) with probability proportional to sqrt(its clip count), then one of its clips
    uniformly: many-utterance speakers (speechocean762, prolific Common Voice contributors) are drawn
    more often than single-clip ones, but not in proportion to their clip count."""
    if mode == "clip":
        return None
    by_cls = {}
    for k, (_, _, c) in enumerate(items):
        by_cls.setdefault(c, []).append(k)
    cls = sorted(by_cls)
    w = np.sqrt(np.array([len(by_cls[c]) for c in cls], np.float64))
    return cls, [np.array(by_cls[c]) for c in cls], np.cumsum(w / w.sum())


def make_batch(items, step, seed, bs, n_samples, babble_pool, pitch_p=0.0, sampler=None):
    rng = np.random.default_rng([seed, step])
    if sampler is None:
        sel = rng.integers(0, len(items), bs)
    else:
        _, members, cdf = sampler
        ci = np.minimum(np.searchsorted(cdf, rng.random(bs)), len(members) - 1)
        sel = [members[c][rng.integers(len(members[c]))] for c in ci]
    feats, labels = [], []
    for k in sel:
        raw, mp3, c = items[k]
        src = mp3 if (mp3 is not None and rng.random() < 0.5) else raw
        x = A.crop_or_pad(src.astype(np.float32) / 32768.0, n_samples, rng)
        if rng.random() < pitch_p:
            x = A.pitch_shift(x, rng)
        if rng.random() < 0.3:
            x = A.reverb(x, rng)
        u = rng.random()
        if u < 0.25:
            x = A.add_noise(x, A.coloured_noise(n_samples, rng), rng.uniform(5, 25))
        elif u < 0.45:
            bab = sum(A.crop_or_pad(babble_pool[j].astype(np.float32) / 32768.0, n_samples, rng)
                      for j in rng.integers(0, len(babble_pool), int(rng.integers(2, 6))))
            x = A.add_noise(x, bab, rng.uniform(8, 25))
        u = rng.random()
        if u < 0.1:
            x = A.telephone(x, rng)
        elif u < 0.3:
            x = A.lowpass(x, rng)
        if rng.random() < 0.05:
            x = A.gain_clip(x, rng)
        else:
            x = A.random_gain(x, rng)
        feats.append(compute_fbank(x))
        labels.append(c)
    T = min(f.shape[0] for f in feats)
    return torch.stack([f[:T] for f in feats]), torch.tensor(labels)


def lr_at(step, max_steps, lr_max, warm=150, lr_min=5e-5):
    if step < warm:
        return lr_max * (step + 1) / warm
    p = min(1.0, (step - warm) / max(1, max_steps - warm))
    return lr_min + 0.5 * (lr_max - lr_min) * (1 + np.cos(np.pi * p))


@torch.no_grad()
def imprint_head(model, head, items, crop_s=3.0, batch=64, per_class=None):
    """Set each class weight to the mean embedding of its clips (warm start of a new head);
    per_class: use at most this many clips of each class (the first ones), to save time."""
    model.eval()
    n = int(crop_s * 16000)
    sums = torch.zeros_like(head.w)
    t0 = time.time()
    if per_class:
        seen = {}
        keep = []
        for it in items:
            seen[it[2]] = seen.get(it[2], 0) + 1
            if seen[it[2]] <= per_class:
                keep.append(it)
        items = keep
    for s in range(0, len(items), batch):
        chunk = items[s: s + batch]
        feats = torch.stack([compute_fbank(A.crop_or_pad(raw.astype(np.float32) / 32768.0, n)) for raw, _, _ in chunk])
        embs = torch.nn.functional.normalize(model(feats))
        for (_, _, c), e in zip(chunk, embs):
            sums[c] += e
    head.w.copy_(torch.nn.functional.normalize(sums))
    model.train()
    log(f"head imprinted from {len(items)} items in {time.time()-t0:.0f}s")


@torch.no_grad()
def embed_wave(model, x):
    x = energy_vad_concat(x)
    f = compute_fbank(x).unsqueeze(0)
    return model(f)[0]


def main():
    ap = argparse.ArgumentParser()
    data_dir_arg(ap)
    ap.add_argument("--arch", default="ecapa256")
    ap.add_argument("--tag", default=None)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--crop-s", type=float, default=2.0)
    ap.add_argument("--max-steps", type=int, default=3000, help="LR schedule length (total steps)")
    ap.add_argument("--stop-step", type=int, default=None, help="stop (with checkpoint) at this step")
    ap.add_argument("--time-budget-min", type=float, default=None, help="stop after this many minutes (resumable)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--margin", type=float, default=0.2)
    ap.add_argument("--scale", type=float, default=30.0)
    ap.add_argument("--ckpt-every-s", type=float, default=180)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--margin-ramp", type=int, default=600, help="steps over which the margin grows to --margin")
    ap.add_argument("--pitch-p", type=float, default=0.15, help="share of crops pitch-shifted (same speaker)")
    ap.add_argument("--sampling", default="clip", choices=["clip", "spk-sqrt"],
                    help="clip: uniform over clips (v2); spk-sqrt: class with p ~ sqrt(#clips), then a clip")
    ap.add_argument("--imprint-per-class", type=int, default=None, help="clips per class for head imprinting")
    ap.add_argument("--imprint-crop-s", type=float, default=3.0)
    ap.add_argument("--save-at", default="", help="comma-separated steps at which a copy of the checkpoint is kept")
    ap.add_argument("--init-onnx", default=None,
                    help="start a new run from a shipped model's weights (head imprinted from class means)")
    a = ap.parse_args()
    tag = a.tag or a.arch
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(CKPT_DIR, exist_ok=True)
    ck = os.path.join(CKPT_DIR, f"speaker_{tag}.pt")

    cache = Cache()
    items, n_cls = build_train_set(cache)
    babble_pool = [it[0] for it in items[1::3]]  # speed 1.0 raw waves
    model = build_model(a.arch)
    head = AAMSoftmax(192, n_cls, a.margin, a.scale)
    opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=a.lr, weight_decay=2e-5)
    step = 0
    if os.path.exists(ck):
        st = torch.load(ck, map_location="cpu")
        model.load_state_dict(st["model"]); head.load_state_dict(st["head"]); opt.load_state_dict(st["opt"])
        step = st["step"]
        log(f"resumed {ck} at step {step}")
    elif a.init_onnx:
        n = load_onnx_weights(model, a.init_onnx, prefix="model.")
        log(f"initialised {n} tensors from {a.init_onnx}")
        imprint_head(model, head, items, crop_s=a.imprint_crop_s, per_class=a.imprint_per_class)
    log(f"{a.arch}: {sum(p.numel() for p in model.parameters())/1e6:.2f}M params, {n_cls} classes")

    def save():
        tmp = ck + ".tmp"
        torch.save({"model": model.state_dict(), "head": head.state_dict(), "opt": opt.state_dict(),
                    "step": step, "arch": a.arch, "args": vars(a)}, tmp)
        os.replace(tmp, ck)
        log(f"checkpoint step {step} -> {ck}")

    sampler = class_sampler(items, a.sampling)
    save_at = {int(x) for x in a.save_at.split(",") if x}
    n_samples = int(a.crop_s * 16000) + 240
    t_start = last_ck = time.time()
    stop = min(a.max_steps, a.stop_step or a.max_steps)
    model.train()
    run_loss = run_acc = None
    if step == 0 and 0 in save_at:  # the warm-started state (head imprinted), for comparisons from the same start
        import shutil
        save()
        shutil.copyfile(ck, ck.replace(".pt", "-step0.pt"))
    while step < stop:
        feats, labels = make_batch(items, step, a.seed, a.batch_size, n_samples, babble_pool, a.pitch_p, sampler)
        lr = lr_at(step, a.max_steps, a.lr)
        for g in opt.param_groups:
            g["lr"] = lr
        m = a.margin * min(1.0, step / max(1, a.margin_ramp))
        loss, acc = head(model(feats), labels, m)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        step += 1
        run_loss = loss.item() if run_loss is None else 0.98 * run_loss + 0.02 * loss.item()
        run_acc = acc.item() if run_acc is None else 0.98 * run_acc + 0.02 * acc.item()
        if step % 25 == 0:
            log(f"step {step} loss {run_loss:.3f} acc {run_acc:.3f} lr {lr:.2e} m {m:.2f} "
                f"{(time.time()-t_start)/60:.1f} min")
        if time.time() - last_ck > a.ckpt_every_s or step in save_at:
            save(); last_ck = time.time()
        if step in save_at:
            import shutil
            shutil.copyfile(ck, ck.replace(".pt", f"-step{step}.pt"))
        if a.time_budget_min and time.time() - t_start > a.time_budget_min * 60:
            log("time budget reached")
            break
    save()


if __name__ == "__main__":
    main()
