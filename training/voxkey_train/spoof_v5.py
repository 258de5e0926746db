"""Spoof model v5: a small head on the frozen Whisper encoder's pooled hidden states.

    python -m voxkey_train.spoof_v5 features --version asis     # every clip of the manifest + lossless/, as it is
    python -m voxkey_train.spoof_v5 features --version channel  # train clips through a drawn channel (both classes)
    python -m voxkey_train.spoof_v5 select                      # leave-one-family-out and leave-one-corpus-out
    python -m voxkey_train.spoof_v5 export                      # the chosen head -> models/voxkey-spoof-v5.onnx
    python -m voxkey_train.spoof_v5 fold-scores --families F,.. --out S.npz   # LOFO heads' CM dev logits (cm_fusion_check)
    python -m voxkey_train.spoof_v5 fold-scores --corpora all --out S.npz     # the same for leave-one-corpus-out heads

    --states N (features) encodes only up to the first N hidden states (the encoder's prefix graph), and
    --layers N (select, export) gives the head the first N: a head that reads fewer layers lets the engine skip
    the rest of the encoder when no phrase is checked.
    --encoder NAME (every step) reads another speech encoder of models/manifest.json (for example
    voxkey-whisper-tiny-en-encoder-int8); its work files go to $VOXKEY_WORK/spoof-v5-<what NAME adds>.

Features: for each recording, the encoder (--encoder; by default the float models/voxkey-whisper-tiny-en-encoder.onnx,
built by import_whisper, not shipped; fed as whisper.py says)
gives the hidden states of every layer (or of the first N); their mean and standard deviation over time, layer
by layer, are the head's input ([layers, 2 * D], flattened). The head standardises them and applies a linear layer or a small MLP:
the ONNX file takes the hidden states and does the pooling itself, so the engine runs the encoder once and
hands its output to both this head and the phrase decoder.

Work files go to $VOXKEY_WORK/spoof-v5 (VOXKEY_WORK as in data.py: default training/work).
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .data import WORK as DATA_WORK
from .pretrained import DATA_DIR, MODELS, ort_session
from .families import LOCO_MIN_CLIPS, LOFO_GROUPS, loco_folds
from .whisper import chunks, log_mel

ENCODER = "voxkey-whisper-tiny-en-encoder"
SR = 16000
# $VOXKEY_WORK folder -> (generated source, split); a clip's attack is its index's `attack` column, else the source's name.
# v4gen: the v4 generation stage's spoofs (spoof_v4.gen --pack-mp3 $VOXKEY_WORK/spoofgen-v4-mp3), train speakers only
GENERATED = {"kokoro": ("kokoro", "dev"), "kokoro-train": ("kokoro", "train"), "spoofgen-v4-mp3": ("v4gen", "train")}


@dataclass(frozen=True)
class Setup:
    """What every step of one run reads: the speech encoder whose hidden states the head sees, and the generated
    families its rows include (--with-generated; features --generated)."""
    encoder: str = ENCODER
    generated: frozenset[str] = frozenset()

    @property
    def work(self) -> Path:
        """Features of different encoders never share a folder."""
        suffix = self.encoder.removeprefix(ENCODER).strip("-")
        return Path(DATA_WORK) / ("spoof-v5-" + suffix if suffix else "spoof-v5")


def manifest_rows(setup: Setup) -> list[dict]:
    """The data set's clips, its lossless recordings, and the generated clips of the setup's generated sources
    present under $VOXKEY_WORK (gen_kokoro.py: dev clips say dev texts, train clips other texts; v4gen: train
    clips only; `generated` keeps them out of the data set's dev figures, which they would otherwise change)."""
    with open(DATA_DIR / "manifest.csv") as f:
        rows = list(csv.DictReader(f))
    lossless = DATA_DIR / "lossless" / "manifest.csv"
    if lossless.exists():
        with open(lossless) as f:
            for r in csv.DictReader(f):
                rows.append({**r, "attack": "", "lossless_of": r["mp3_path"]})
    for folder, (source, split) in GENERATED.items():
        index = Path(DATA_WORK) / folder / "index.csv"
        if source in setup.generated and index.exists():
            with open(index, newline="", encoding="utf-8") as f:
                for r in csv.DictReader(f):
                    rows.append({"path": str(index.parent / r["path"]), "corpus": folder, "speaker": r["voice_a"], "kind": "spoof",
                                 "attack": r.get("attack") or source, "split": split, "duration_s": r["duration_s"],
                                 "generated": source})
    missing = setup.generated - {r["generated"] for r in rows if r.get("generated")}
    if missing:  # asked for, but silently absent, they would leave a run without them that looks like one with them
        folders = ", ".join(str(Path(DATA_WORK) / f) for f, (src, _) in GENERATED.items() if src in missing)
        raise SystemExit(f"no generated clips of {', '.join(sorted(missing))}: no index.csv under {folders} "
                         "(gen_kokoro for kokoro, spoof_v4.gen --pack-mp3 for v4gen)")
    return rows


def load(path: Path) -> np.ndarray:
    import soundfile as sf
    y, sr = sf.read(str(path), dtype="float32", always_2d=True)
    if sr != SR:
        raise ValueError(f"{path}: {sr} Hz")
    return np.ascontiguousarray(y.mean(1))


def encoder_session(states: int = 0, encoder: str = ENCODER):
    """The encoder; with `states` (1-4), its graph up to the first that many hidden states only: the committed
    prefix file when the manifest lists one, else cut here from the whole graph."""
    entry = next(m for m in json.loads((MODELS / "manifest.json").read_text())["models"] if m["name"] == encoder)
    if not states:
        return ort_session(MODELS / entry["file"])
    committed = next((p for p in entry.get("prefixes", []) if p["states"] == states), None)
    if committed and (MODELS / committed["file"]).exists():
        return ort_session(MODELS / committed["file"])
    import tempfile
    from .pretrained import stacked_prefix
    path = Path(tempfile.mkdtemp()) / f"encoder-{states}-states.onnx"
    stacked_prefix(MODELS / entry["file"], "hidden_states", states, path)
    return ort_session(path)


def hidden_states(session, samples: np.ndarray) -> np.ndarray:
    """[layers, frames, D]: every 30 s chunk encoded on its own, the chunks' frames concatenated."""
    parts = []
    for mel in chunks(log_mel(samples)):
        mel = np.ascontiguousarray(mel)
        parts.append(session.run(["hidden_states"], {"mel": mel[None]})[0][0])
    return np.concatenate(parts, axis=1)


def pooled(hidden: np.ndarray) -> np.ndarray:
    """[layers * 2 * D]: per layer, the mean then the (population) standard deviation over time."""
    mean = hidden.mean(axis=1)
    std = np.sqrt(np.maximum((hidden * hidden).mean(axis=1) - mean * mean, 0.0))
    return np.concatenate([mean, std], axis=1).reshape(-1).astype(np.float32)


def both_classes_augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """What differs between recordings of either class and says nothing about synthesis: leading and trailing
    silence (with a faint noise floor), gain and DC offset."""
    lead, trail = (int(rng.uniform(0, 0.6) * SR) for _ in range(2))
    floor = 10 ** (rng.uniform(-80, -55) / 20)
    y = np.concatenate([rng.normal(0, floor, lead), x, rng.normal(0, floor, trail)]).astype(np.float32)
    y = y * 10 ** (rng.uniform(-12, 6) / 20) + rng.uniform(-0.01, 0.01)
    return np.clip(y, -1, 1).astype(np.float32)


CHANNEL_REAL_PER_CORPUS = 600


def channel_subset(rows: list[dict]) -> list[dict]:
    """Every train spoof and up to CHANNEL_REAL_PER_CORPUS real clips of each corpus (seeded) go through a
    channel: the large real corpora would otherwise fill the pass without adding conditions."""
    rng = np.random.default_rng(5)
    by_corpus: dict[str, list[dict]] = {}
    for r in rows:
        if r["kind"] == "bonafide":
            by_corpus.setdefault(r["corpus"], []).append(r)
    keep = {r["path"] for r in rows if r["kind"] != "bonafide"}
    for clips in by_corpus.values():
        picked = rng.permutation(len(clips))[:CHANNEL_REAL_PER_CORPUS]
        keep.update(clips[i]["path"] for i in picked)
    return [r for r in rows if r["path"] in keep]


def channel_pass_rows(setup: Setup) -> list[dict]:
    """The clips the channel pass puts through a channel: the train split's, real ones subsampled per corpus."""
    return channel_subset([r for r in manifest_rows(setup) if r.get("split") == "train" and not r.get("lossless_of")])


def drawn_channel(path: str):
    """A clip's channel and the generator that goes on to apply it, seeded by the clip's path alone."""
    from . import channels
    rng = np.random.default_rng(zlib.crc32(path.encode()))
    return channels.draw_channel(rng), rng


def extract(setup: Setup, version: str, limit: int | None, shard: int, shards: int, states: int = 0,
            generated: str | None = None) -> None:
    from . import channels
    rows = channel_pass_rows(setup) if version == "channel" else manifest_rows(setup)
    if generated:
        rows = [r for r in rows if r.get("generated") == generated]
    rows = rows[shard::shards][:limit]
    part = f"{generated}-{shard}of{shards}" if generated else f"{shard}of{shards}"
    out = setup.work / (f"features-{version}-s{states}-{part}.npz" if states else f"features-{version}-{part}.npz")
    setup.work.mkdir(parents=True, exist_ok=True)
    session = encoder_session(states, setup.encoder)
    feats, paths, chans = [], [], []
    for i, r in enumerate(rows):
        x = load(DATA_DIR / r["path"])
        chan = "none"
        if version == "channel":
            spec, rng = drawn_channel(r["path"])
            x = both_classes_augment(channels.apply_channel(x, spec, rng), rng)
            chan = spec.name
        feats.append(pooled(hidden_states(session, x)))
        paths.append(r["path"])
        chans.append(chan)
        if i % 500 == 0:
            print(f"{version} {shard}/{shards}: {i}/{len(rows)}", flush=True)
    np.savez(out, feats=np.stack(feats), paths=np.array(paths), channels=np.array(chans))
    print(f"wrote {out}: {len(paths)} clips")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("features")
    f.add_argument("--version", choices=["asis", "channel"], default="asis")
    f.add_argument("--limit", type=int)
    f.add_argument("--shard", type=int, default=0)
    f.add_argument("--shards", type=int, default=1)
    f.add_argument("--states", type=int, default=0, help="encode only up to the first N hidden states (default: all)")
    f.add_argument("--generated", choices=sorted({a for a, _ in GENERATED.values()}),
                   help="only the clips of this generated family (their features go to files of their own)")
    s = sub.add_parser("select")
    s.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "cm-v5-selection.json"))
    s.add_argument("--candidates", default=",".join(CANDIDATES), help="comma-separated heads to compare")
    s.add_argument("--layers", type=int, default=ENCODER_STATES, help="hidden states the head reads: the first N (of 5)")
    fs = sub.add_parser("fold-scores", help="each leave-one-family-out head's logits on every CM dev trial (.npz), "
                        "for cm_fusion_check lofo")
    which = fs.add_mutually_exclusive_group(required=True)
    which.add_argument("--families", help="comma-separated families, one fold each")
    which.add_argument("--corpora", help="leave-one-corpus-out folds instead: comma-separated corpora of real speech, "
                       f"or 'all' (every corpus with >= {LOCO_MIN_CLIPS} real clips, and the smaller ones as one fold)")
    fs.add_argument("--head", default="mlp128x5", choices=sorted(CANDIDATES))
    fs.add_argument("--layers", type=int, default=ENCODER_STATES, help="hidden states the head reads: the first N (of 5)")
    fs.add_argument("--out", required=True)
    cs = sub.add_parser("channel-shares", help="the channel pass's share of each channel among real and spoofed train "
                        "clips, from the seeded draw alone (no features needed)")
    cs.add_argument("--out")
    e = sub.add_parser("export")
    e.add_argument("--name", default="voxkey-spoof-v5")
    e.add_argument("--head", default="linear", choices=sorted(CANDIDATES))
    e.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "cm-voxkey-spoof-v5.json"))
    e.add_argument("--layers", type=int, default=ENCODER_STATES, help="hidden states the head reads: the first N (of 5)")
    for p in (f, s, e, fs):
        p.add_argument("--encoder", default=ENCODER, help="the speech encoder whose hidden states the head reads "
                       "(the default, the float encoder, is built by import_whisper, not shipped)")
    for p in (s, e, fs, cs):
        p.add_argument("--with-generated", action="append", default=[], choices=sorted({a for a, _ in GENERATED.values()}),
                       help="train and measure with this generated source too (kokoro: one family; v4gen: the v4 "
                       "generation stage's nine; their clips under $VOXKEY_WORK)")
    args = ap.parse_args()
    generated = getattr(args, "with_generated", []) + ([args.generated] if getattr(args, "generated", None) else [])
    setup = Setup(getattr(args, "encoder", ENCODER), frozenset(generated))
    if args.cmd == "features" and not 0 <= args.states < ENCODER_STATES:
        ap.error(f"--states takes 1-{ENCODER_STATES - 1} (0 or none: every hidden state)")
    if args.cmd in ("select", "export", "fold-scores") and not 0 < args.layers <= ENCODER_STATES:
        ap.error(f"--layers takes 1-{ENCODER_STATES}")
    if args.cmd == "features":
        extract(setup, args.version, args.limit, args.shard, args.shards, args.states, args.generated)
    elif args.cmd == "channel-shares":
        shares = drawn_channel_shares(setup)
        gap = max(abs(v["real"] - v["spoof"]) for v in shares.values())
        for ch, v in shares.items():
            print(f"{ch:28s} real {v['real']:6.1%} ({v['real_clips']})  spoofed {v['spoof']:6.1%} ({v['spoof_clips']})")
        print(f"largest difference between the classes: {gap:.1%}")
        if args.out:
            Path(args.out).write_text(json.dumps({"generated": sorted(setup.generated), "largest_difference": gap,
                                                  "channel_shares": shares}, indent=1) + "\n")
    elif args.cmd == "select":
        select(setup, Path(args.out), args.candidates.split(","), args.layers)
    elif args.cmd == "export":
        export(setup, args.name, args.head, Path(args.out), args.layers)
    elif args.cmd == "fold-scores":
        if args.corpora:
            corpus_fold_scores(setup, args.corpora, args.head, Path(args.out), args.layers)
        else:
            fold_scores(setup, args.families.split(","), args.head, Path(args.out), args.layers)



# ------------------------------------------------------------------ selection and training
ENCODER_STATES = 5  # the embedding's output and each of tiny.en's 4 layers


def feature_shards(setup: Setup, version: str, layers: int = ENCODER_STATES) -> tuple[int, list[Path]]:
    """(states per clip, shard files) of a version: features of every hidden state, or else those of the fewest
    states that include the first `layers`."""
    stored = {ENCODER_STATES: sorted(p for p in setup.work.glob(f"features-{version}-*of*.npz")
                                     if not re.match(rf"features-{version}-s[0-9]+-", p.name))}
    for n in range(layers, ENCODER_STATES):
        stored[n] = sorted(setup.work.glob(f"features-{version}-s{n}-*of*.npz"))
    states = next((n for n in sorted(stored, key=lambda n: (n != ENCODER_STATES, n)) if stored[n]), ENCODER_STATES)
    return states, stored[states]


def load_features(setup: Setup, version: str, layers: int = ENCODER_STATES) -> dict[str, np.ndarray]:
    """{path: pooled features of the first `layers` hidden states} from every shard of a version."""
    out: dict[str, np.ndarray] = {}
    states, shards = feature_shards(setup, version, layers)
    for shard in shards:
        z = np.load(shard)
        width = z["feats"].shape[1] // states * layers
        # (the first extraction run named the lossless clips with a doubled folder)
        out.update(zip((p.replace("lossless/lossless/", "lossless/") for p in z["paths"].tolist()), z["feats"][:, :width]))
    return out


class Head:
    """Standardisation + a linear layer (hidden=0) or a one-hidden-layer MLP, trained with class- and
    family-balanced weights so no corpus or family dominates by its size. With members > 1, that many are
    trained from consecutive seeds and their logits averaged: one MLP's held-out figures move by tens of points
    from seed to seed (docs/accuracy.md), an average of several far less."""

    def __init__(self, hidden: int, weight_decay: float, epochs: int, seed: int = 0, members: int = 1):
        self.hidden, self.weight_decay, self.epochs, self.seed, self.members = hidden, weight_decay, epochs, seed, members

    def fit(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> "Head":
        import torch
        self.mean = x.mean(0)
        self.scale = x.std(0) + 1e-5
        xs = torch.from_numpy((x - self.mean) / self.scale).float()
        weights = np.zeros(len(y), np.float64)
        for label in (0, 1):
            in_class = y == label
            names = np.unique(groups[in_class])
            for g in names:
                members = in_class & (groups == g)
                weights[members] = 0.5 / len(names) / members.sum()
        w = torch.from_numpy(weights / weights.mean()).float()
        yt = torch.from_numpy(y.astype(np.float32))
        self.nets = [self._train(xs, yt, w, self.seed + m) for m in range(self.members)]
        return self

    def _train(self, xs, yt, w, seed: int):
        import torch
        torch.manual_seed(seed)
        dim = xs.shape[1]
        layers = [torch.nn.Dropout(0.2), torch.nn.Linear(dim, 1)] if self.hidden == 0 else [
            torch.nn.Dropout(0.2), torch.nn.Linear(dim, self.hidden), torch.nn.GELU(), torch.nn.Dropout(0.3), torch.nn.Linear(self.hidden, 1)]
        net = torch.nn.Sequential(*layers)
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=self.weight_decay)
        gen = torch.Generator().manual_seed(seed)
        for _ in range(self.epochs):
            net.train()
            for idx in torch.randperm(len(yt), generator=gen).split(256):
                logits = net(xs[idx]).squeeze(1)
                loss = (torch.nn.functional.binary_cross_entropy_with_logits(logits, yt[idx], reduction="none") * w[idx]).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        return net.eval()

    @property
    def net(self):
        """The members as one module: the mean of their logits."""
        import torch

        class Mean(torch.nn.Module):
            def __init__(self, nets):
                super().__init__()
                self.nets = torch.nn.ModuleList(nets)

            def forward(self, x):
                return torch.stack([n(x) for n in self.nets]).mean(0)

        return self.nets[0] if len(self.nets) == 1 else Mean(self.nets).eval()

    def logits(self, x: np.ndarray) -> np.ndarray:
        import torch
        with torch.no_grad():
            return self.net(torch.from_numpy((x - self.mean) / self.scale).float()).squeeze(1).numpy()


CANDIDATES = {
    "linear": dict(hidden=0, weight_decay=1e-2, epochs=30),
    "mlp128": dict(hidden=128, weight_decay=1e-2, epochs=30),
    "mlp128x5": dict(hidden=128, weight_decay=1e-2, epochs=30, members=5),
}


def labelled_rows(setup: Setup):
    from .families import family_of
    rows = manifest_rows(setup)
    for r in rows:
        r["label"] = 1 if r["kind"] == "bonafide" else 0
        r["family"] = "bonafide" if r["label"] else family_of(r["attack"])
        r["group"] = r["corpus"] if r["label"] else r["family"]
    return rows


def training_set(rows, feats: dict, channel_feats: dict, exclude) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train-split clips as they are and through their drawn channel, less the excluded ones."""
    xs, ys, gs = [], [], []
    for r in rows:
        if r["split"] != "train" or exclude(r) or r["path"] not in feats:
            continue
        for source in (feats, channel_feats):
            if r["path"] in source:
                xs.append(source[r["path"]]); ys.append(r["label"]); gs.append(r["group"])
    return np.stack(xs), np.array(ys), np.array(gs)


def threshold_for(real_scores_by_corpus: dict[str, np.ndarray], max_flagged: float) -> float:
    """The highest bona fide probability threshold that flags at most max_flagged of every corpus with
    >= LOCO_MIN_CLIPS real clips, the smaller corpora pooled."""
    blocks, small = [], []
    for corpus, s in real_scores_by_corpus.items():
        (blocks if len(s) >= LOCO_MIN_CLIPS else small).append(s)
    if small:
        blocks.append(np.concatenate(small))
    # flagged = score < threshold; allow floor(max_flagged * n) flagged clips per block
    return float(min(np.sort(b)[int(np.floor(max_flagged * len(b)))] for b in blocks))


# The engine's logits differ from these (its TypeScript front-end and another onnxruntime build feed the int8
# encoder, whose activation rounding amplifies small differences): for the int8 encoder's head, dev clips with
# logits near the thresholds differed by 0.011 (median) and at most 0.32 (docs/accuracy.md, "voxkey-spoof-v5-lower-int8"),
# so a threshold set at a clip's score here would leave that clip on the line in the engine.
CONSISTENCY_MARGIN = 0.5


def consistent_threshold(threshold: float, lossless: np.ndarray, coded: np.ndarray) -> float:
    """The threshold lowered until every lossless recording and its MP3 twin are on one side of it, both at least
    CONSISTENCY_MARGIN logit away (issue 30: coding alone must never change a verdict, here or in the engine):
    each step goes that margin below the lower score of every pair in the band, and is repeated, because a lower
    threshold can bring other pairs into it."""
    low, high = np.minimum(lossless, coded), np.maximum(lossless, coded)
    while True:
        in_band = (low < threshold + CONSISTENCY_MARGIN) & (high >= threshold - CONSISTENCY_MARGIN)
        if not in_band.any():
            return threshold
        threshold = float(low[in_band].min()) - CONSISTENCY_MARGIN


def channel_shares(setup: Setup, rows: list[dict], layers: int = ENCODER_STATES) -> dict[str, dict[str, float]]:
    """{channel: {"real": share, "spoof": share}} of the channel pass's clips (the shards `load_features` reads),
    each class apart: a codec or a channel that one class has more often than the other would be evidence of the
    class (issue 30, item 1)."""
    label_of = {r["path"]: r["label"] for r in rows}
    counts: dict[str, list[int]] = {}
    for shard in feature_shards(setup, "channel", layers)[1]:
        z = np.load(shard)
        for path, channel in zip(z["paths"].tolist(), z["channels"].tolist()):
            if path in label_of:
                counts.setdefault(channel, [0, 0])[label_of[path]] += 1
    totals = [sum(c[k] for c in counts.values()) or 1 for k in (0, 1)]
    return {ch: {"real": c[1] / totals[1], "spoof": c[0] / totals[0]} for ch, c in sorted(counts.items())}


def drawn_channel_shares(setup: Setup) -> dict[str, dict[str, float]]:
    """The channel pass's shares without its features: `extract` draws each clip's channel from a generator seeded
    by the clip's path alone, so the rows give the same figures `select` prints from the shards, for a run whose
    features are not on this machine (the dataset's train clips and the setup's generated ones, as the shipped
    head's two channel passes, `features --version channel` and the same with `--generated kokoro`, cover them)."""
    counts: dict[str, list[int]] = {}
    for r in channel_pass_rows(setup):
        spec, _ = drawn_channel(r["path"])
        counts.setdefault(spec.name, [0, 0])[r["kind"] == "bonafide"] += 1
    totals = [sum(c[k] for c in counts.values()) or 1 for k in (0, 1)]
    return {ch: {"real": c[1] / totals[1], "spoof": c[0] / totals[0], "real_clips": c[1], "spoof_clips": c[0]}
            for ch, c in sorted(counts.items())}


def select(setup: Setup, out_path: Path, candidates: list[str], layers: int = ENCODER_STATES) -> None:
    from .metrics import eer
    rows = labelled_rows(setup)
    feats, chan = load_features(setup, "asis", layers), load_features(setup, "channel", layers)
    print(f"features: {len(feats)} as-is, {len(chan)} through channels")
    shares = channel_shares(setup, rows, layers)
    print("channel pass, share of each channel among real / spoofed clips: "
          + ", ".join(f"{ch} {v['real']:.1%} / {v['spoof']:.1%}" for ch, v in shares.items()), flush=True)
    dev = [r for r in rows if r["split"] == "dev" and r["path"] in feats and not r.get("lossless_of")]
    real_dev = [r for r in dev if r["label"] == 1]
    families = sorted({r["family"] for r in rows if r["label"] == 0})
    report: dict = {"channel_shares": shares, "candidates": {}}
    for name in candidates:
        params = CANDIDATES[name]
        result: dict = {"lofo": {}, "loco": {}}
        for fam in families:
            trained = any(r["family"] == fam and r["split"] == "train" for r in rows)
            spoofs = [r for r in dev if r["family"] == fam]
            if not spoofs:
                continue
            left_out = LOFO_GROUPS.get(fam, (fam,))  # with the generated families that make the same kind of attack
            head = Head(**params).fit(*training_set(rows, feats, chan, lambda r, f=left_out: r["family"] in f))
            scores = head.logits(np.stack([feats[r["path"]] for r in real_dev + spoofs]))
            result["lofo"][fam] = {"eer": eer(scores, [1] * len(real_dev) + [0] * len(spoofs))[0], "dev_spoofs": len(spoofs),
                                   "unseen_in_every_fold": not trained}
            print(f"{name} LOFO {fam}: EER {result['lofo'][fam]['eer']:.3f} ({len(spoofs)} dev spoofs)", flush=True)
        for fold, corpora in loco_folds(rows).items():
            head = Head(**params).fit(*training_set(rows, feats, chan, lambda r, cs=corpora: r["label"] == 1 and r["corpus"] in cs))
            others = {}
            for r in real_dev:
                if r["corpus"] not in corpora:
                    others.setdefault(r["corpus"], []).append(r)
            other_scores = {c: head.logits(np.stack([feats[r["path"]] for r in rs])) for c, rs in others.items()}
            threshold = threshold_for(other_scores, 0.01)
            held = [r for r in rows if r["label"] == 1 and r["corpus"] in corpora and r["path"] in feats and not r.get("lossless_of")]
            held_scores = head.logits(np.stack([feats[r["path"]] for r in held]))
            result["loco"][fold] = {"flagged": float((held_scores < threshold).mean()), "clips": len(held)}
            print(f"{name} LOCO {fold}: {result['loco'][fold]['flagged']:.3%} of {len(held)} real clips flagged", flush=True)
        lofo = [v["eer"] for f, v in result["lofo"].items()]
        result["lofo_mean"] = float(np.mean(lofo))
        result["lofo_worst"] = max(result["lofo"].items(), key=lambda kv: kv[1]["eer"])[0]
        result["loco_worst"] = max(result["loco"].items(), key=lambda kv: kv[1]["flagged"])[0]
        report["candidates"][name] = result
        print(f"{name}: LOFO mean {result['lofo_mean']:.3f}, worst {result['lofo_worst']}; LOCO worst {result['loco_worst']}", flush=True)
    out_path.write_text(json.dumps(report, indent=1))
    print(f"wrote {out_path}")


def cm_dev_trial_paths() -> list[str]:
    with open(DATA_DIR / "trials" / "cm-dev.csv", newline="") as f:
        return [r["path"] for r in csv.DictReader(f)]


def fold_heads(rows, feats: dict, chan: dict, candidate: str, excludes: dict):
    """(fold, head) for each fold of `excludes` ({fold: which rows to leave out}), trained as `select` trains it."""
    for fold, exclude in excludes.items():
        yield fold, Head(**CANDIDATES[candidate]).fit(*training_set(rows, feats, chan, exclude))


def fold_scores(setup: Setup, families: list[str], candidate: str, out: Path, layers: int = ENCODER_STATES) -> None:
    """For each family, the head trained without it (and its related generated families) as `select` trains it,
    scoring every clip of the CM dev trials as it is, then the dev clips of the generated sources asked for:
    {family: logits in the order of `paths`} + `paths` + `generated` ({path: family} of the generated clips)."""
    rows = labelled_rows(setup)
    known = sorted({r["family"] for r in rows if r["label"] == 0 and r["split"] == "train"})
    # a generated family with dev clips only (--with-generated kokoro without kokoro-train) is unseen by every head
    unseen = sorted({r["family"] for r in rows if r.get("generated") and r["split"] == "dev"} - set(known))
    unknown = [f for f in families if f not in known + unseen]
    if unknown:  # a misspelt family would leave nothing out and pass for a fold
        raise SystemExit(f"--families: no train spoofs of {', '.join(unknown)}; families with train spoofs: {', '.join(known)}"
                         + (f"; generated, dev clips only: {', '.join(unseen)}" if unseen else ""))
    feats, chan = load_features(setup, "asis", layers), load_features(setup, "channel", layers)
    trials = cm_dev_trial_paths()
    # the generated sources' dev clips too (not in the data set's trial list): their paths follow the trials'
    generated_dev = [r for r in rows if r.get("generated") and r["split"] == "dev" and r["path"] in feats]
    trials += [r["path"] for r in generated_dev]
    x = np.stack([feats[p] for p in trials])
    excludes = {fam: (lambda r, f=LOFO_GROUPS.get(fam, (fam,)): r["family"] in f) for fam in families}
    scores = {}
    for fam, head in fold_heads(rows, feats, chan, candidate, excludes):
        scores[fam] = head.logits(x)
        print(f"{fam}: fold head scored {len(trials)} trials", flush=True)
    np.savez(out, paths=np.array(trials), generated=np.array(json.dumps({r["path"]: r["family"] for r in generated_dev})),
             **scores)
    print(f"wrote {out}")


def corpus_fold_scores(setup: Setup, corpora: str, candidate: str, out: Path, layers: int = ENCODER_STATES) -> None:
    """For each leave-one-corpus-out fold (families.loco_folds), the head trained without that corpus's real clips,
    as `select` trains it, scoring every clip of the CM dev trials as it is: {fold: logits in the trial list's
    order} + `paths`, and the left-out corpora's other real clips: `held_out` (JSON {fold: {paths, logits}}).
    Unlike `fold_scores`, no generated dev clips: a corpus fold is read by its real clips only."""
    rows = labelled_rows(setup)
    folds = loco_folds(rows)
    if corpora != "all":
        known = {c for cs in folds.values() for c in cs}
        wanted = corpora.split(",")
        if unknown := [c for c in wanted if c not in known]:
            raise SystemExit(f"--corpora: no real clips of {', '.join(unknown)}; corpora: {', '.join(sorted(known))}")
        folds = {c: {c} for c in wanted}
    feats, chan = load_features(setup, "asis", layers), load_features(setup, "channel", layers)
    trials = cm_dev_trial_paths()
    x = np.stack([feats[p] for p in trials])
    in_trials = set(trials)
    excludes = {fold: (lambda r, cs=left_out: r["label"] == 1 and r["corpus"] in cs) for fold, left_out in folds.items()}
    scores, held_out = {}, {}
    for fold, head in fold_heads(rows, feats, chan, candidate, excludes):
        scores[fold] = head.logits(x)
        # the left-out corpora's other real clips (train split), unseen by this head too
        held = [r["path"] for r in rows if r["label"] == 1 and r["corpus"] in folds[fold] and not r.get("lossless_of")
                and r["path"] in feats and r["path"] not in in_trials]
        held_out[fold] = {"paths": held, "logits": head.logits(np.stack([feats[p] for p in held])).tolist() if held else []}
        print(f"{fold}: fold head scored {len(trials)} trials and {len(held)} other real clips of the corpus", flush=True)
    np.savez(out, paths=np.array(trials), folds=np.array(json.dumps({k: sorted(v) for k, v in folds.items()})),
             held_out=np.array(json.dumps(held_out)), **scores)
    print(f"wrote {out}")


# ------------------------------------------------------------------ the shipped head
def head_graph(head: Head):
    import torch

    class HeadGraph(torch.nn.Module):
        """[B, layers, frames, D] hidden states -> [B] logit of bona fide (pooling as `pooled` does)."""

        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.from_numpy(head.mean.astype(np.float32)))
            self.register_buffer("scale", torch.from_numpy(head.scale.astype(np.float32)))
            self.net = head.net

        def forward(self, hidden_states):
            mean = hidden_states.mean(dim=2)
            std = torch.sqrt(torch.clamp((hidden_states * hidden_states).mean(dim=2) - mean * mean, min=0.0))
            x = torch.cat([mean, std], dim=2).flatten(1)
            return self.net((x - self.mean) / self.scale).squeeze(1)

    return HeadGraph().eval()


def dev_blocks(rows, feats: dict, scores_of) -> dict[str, np.ndarray]:
    """Real dev clips by corpus (the lossless recordings as their own block), scored."""
    blocks: dict[str, list[str]] = {}
    for r in rows:
        if r["split"] == "dev" and r["label"] == 1 and r["path"] in feats:
            blocks.setdefault(f"{r['corpus']}-lossless" if r.get("lossless_of") else r["corpus"], []).append(r["path"])
    return {name: scores_of(paths) for name, paths in blocks.items()}


def export(setup: Setup, name: str, candidate: str, out_json: Path, layers: int = ENCODER_STATES) -> None:
    import torch
    from .metrics import eer, min_dcf
    from .pretrained import make_variant, sha256
    rows = labelled_rows(setup)
    feats, chan = load_features(setup, "asis", layers), load_features(setup, "channel", layers)
    head = Head(**CANDIDATES[candidate]).fit(*training_set(rows, feats, chan, lambda r: False))

    def scores_of(paths):
        return head.logits(np.stack([feats[p] for p in paths]))

    blocks = dev_blocks(rows, feats, scores_of)
    pairs = [(r["path"], r["lossless_of"]) for r in rows if r.get("lossless_of") and r["path"] in feats and r["lossless_of"] in feats]
    lossless, coded = scores_of([a for a, _ in pairs]), scores_of([b for _, b in pairs])
    rule = {"verification": threshold_for(blocks, 0.01), "enrolment": threshold_for(blocks, 0.002)}
    t_verify, t_enrol = (consistent_threshold(rule[k], lossless, coded) for k in ("verification", "enrolment"))
    dev = [r for r in rows if r["split"] == "dev" and r["path"] in feats and not r.get("lossless_of") and not r.get("generated")]
    dev_scores = scores_of([r["path"] for r in dev])
    generated = {}
    for r in rows:
        if r["split"] == "dev" and r.get("generated") and r["path"] in feats:
            generated.setdefault(r["generated"], []).append(r["path"])
    generated_scores = {attack: scores_of(paths) for attack, paths in generated.items()}
    labels = np.array([r["label"] for r in dev])
    spoof_scores = dev_scores[labels == 0]
    flips = {f"{label}": int(((lossless < t) != (coded < t)).sum()) for label, t in (("verification", t_verify), ("enrolment", t_enrol))}
    sigmoid = lambda z: float(1 / (1 + np.exp(-z)))  # noqa: E731
    summary = {
        "model": name, "head": candidate, "encoder_states": layers,
        "dev_eer": eer(dev_scores, labels)[0], "dev_min_dcf": min_dcf(dev_scores, labels),
        "verification_threshold": sigmoid(t_verify), "enrolment_threshold": sigmoid(t_enrol),
        "thresholds_by_the_flagging_rule_alone": {k: sigmoid(v) for k, v in rule.items()},
        "dev_spoofs_passing_by_the_flagging_rule_alone": {k: float((spoof_scores >= v).mean()) for k, v in rule.items()},
        "dev_spoofs_passing_at_verification": float((spoof_scores >= t_verify).mean()),
        "dev_spoofs_passing_at_enrolment": float((spoof_scores >= t_enrol).mean()),
        "real_flagged_at_verification": {k: float((v < t_verify).mean()) for k, v in blocks.items()},
        "real_flagged_at_enrolment": {k: float((v < t_enrol).mean()) for k, v in blocks.items()},
        "lossless_vs_mp3_pairs": len(pairs), "lossless_vs_mp3_flips": flips,
        "generated_dev_clips_passing": {attack: {"clips": len(v), "verification": float((v >= t_verify).mean()),
                                                 "enrolment": float((v >= t_enrol).mean())} for attack, v in generated_scores.items()},
    }
    print(json.dumps(summary, indent=1))
    work = setup.work / "export"
    work.mkdir(parents=True, exist_ok=True)
    raw = work / f"{name}.raw.onnx"
    example = torch.randn(2, layers, 150, feats[next(iter(feats))].shape[0] // (2 * layers))
    torch.onnx.export(head_graph(head), (example,), str(raw), input_names=["hidden_states"], output_names=["logit"],
                      dynamic_shapes={"hidden_states": {0: torch.export.Dim("B", min=1, max=64), 2: torch.export.Dim("T", min=1, max=100_000)}},
                      opset_version=18, dynamo=True, external_data=False, verbose=False)
    target = MODELS / f"{name}.onnx"
    make_variant(raw, "fp32", target)
    import onnxruntime as ort
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    probe = [r["path"] for r in dev[:8]]
    enc = encoder_session(0 if layers == ENCODER_STATES else layers, setup.encoder)
    got = np.array([session.run(["logit"], {"hidden_states": hidden_states(enc, load(DATA_DIR / p))[None]})[0][0] for p in probe])
    worst = float(np.abs(got - scores_of(probe)).max())
    print(f"ONNX head vs training head on {len(probe)} dev clips (from audio): max |logit diff| = {worst:.2e}")
    summary.update(file=target.name, sha256=sha256(target), onnx_vs_training_max_logit_diff=worst)
    out_json.write_text(json.dumps(summary, indent=1))
    print(f"wrote {target} and {out_json}")


if __name__ == "__main__":
    main()
