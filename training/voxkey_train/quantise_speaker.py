"""Static int8 quantisation of the CAM++ speaker model: models/voxkey-speaker-v4.onnx -> voxkey-speaker-v4-int8.onnx.

    $VOXKEY_VENV/bin/python -m training.voxkey_train.quantise_speaker [--check-only]   (from the repository root)

One reproducible command (needs node and the engine built, `npm run build`, for the engine's front-end):

1. The float model's float16-stored weights are cast back to float32 (exactly: they are float16 values).
2. An exact rewrite of every CAM layer's context path: CAM++ adds the segment means (100-frame average pooling)
   to the utterance mean, broadcasts that to every frame and only then runs two 1x1 convolutions and a sigmoid
   on it. Those are per-frame operations, so they run on the segment columns first and the mask is broadcast
   after. The segment means and the broadcast are MatMuls with one averaging matrix and its 0/1 transpose, and
   the two context convolutions MatMul + Add (segment_context): the same values up to float rounding (lowest dev
   cosine in the results file) at a fraction of the cost.
3. onnxruntime.quantization: quant_pre_process, then quantize_static (QDQ, per-channel int8 weights, uint8
   activations, MinMax calibration) of the D-TDNN blocks' bottleneck (1x1) and local (k=3) convolutions, with
   the ReLU after each bottleneck quantised too, so that onnxruntime folds it into the convolution's uint8 output
   (a range from 0: twice as fine a step; the other ReLUs are left out),
   calibrated on train-split clips' speaker-model input as the engine computes it (decode, Silero VAD, joined
   speech, Kaldi fbank with CMN: packages/engine/scripts/dump-speaker-features.mjs). Every other convolution stays in
   float: the 2-D front-end, the first TDNN layer, the transit layers and the embedding layer each cost more
   accuracy than the rest together when quantised, and so do the first 4 dense layers (per-group sensitivity
   in docs/benchmarks.md); the context path is MatMuls on a handful of columns after step 2, so int8 would
   gain nothing there.
   A second build also quantises the 2-D front-end's nine 3x3 convolutions (its input convolution and two 1x1
   shortcuts stay float). That costs accuracy only on short recordings: int8 rounding is noise, and the
   embedding averages it over fewer frames (lowest dev cosine 0.980 over every clip, 0.996 over those of at least
   4 s of speech). So the file holds both front-ends behind an ONNX `If` on the input's length: at least
   LONG_FRAMES frames (4 s of net speech) take the int8 front-end, shorter ones the float one; the rest of the
   model is shared (front_end_by_length). Each branch keeps its own float32 weights as initializers of the
   branch, so that onnxruntime treats them as constants there and pre-packs them (with the float16 weights cast
   in the branch, the float front-end ran 20% slower than in the main graph).
4. Check: every dev bona fide clip through the float model and the int8 model (the engine's features);
   the lowest cosine must be >= 0.995, else nothing is written (exit 1).
5. models/voxkey-speaker-v4-int8.onnx (float weights stored as float16 like the source), the manifest entry's
   `quantisation` block and training/results/quantise-voxkey-speaker-v4-int8.json (clips, nodes, cosines).

--check-only rebuilds the file and compares it with the committed one.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .pretrained import DATA_DIR, MANIFEST, MODELS, REPO, check_or_write, fp16_weights, ort_session, sha256, strip_metadata

SOURCE = "voxkey-speaker-v4"
TARGET = "voxkey-speaker-v4-int8"
MIN_COSINE = 0.995
CALIBRATION_CLIPS = 200
CALIBRATION_SEED = 33
FEATURE_SCALE = 1  # kaldi-fbank-80-cmn-unit-scale, the source entry's input.features
SEGMENT_FRAMES = 100  # CAM++ seg_len
RESULTS = REPO / "training" / "results" / f"quantise-{TARGET}.json"


def manifest_rows() -> list[dict]:
    import csv
    with open(DATA_DIR / "manifest.csv", newline="") as f:
        return list(csv.DictReader(f))


def calibration_clips(rows: list[dict]) -> list[str]:
    """A seeded sample of train-split bona fide clips of at least 2 s (paths relative to the data set)."""
    train = sorted(r["path"] for r in rows if r["split"] == "train" and r["kind"] == "bonafide" and float(r["duration_s"]) >= 2)
    picked = np.random.default_rng(CALIBRATION_SEED).choice(len(train), CALIBRATION_CLIPS, replace=False)
    return [train[i] for i in sorted(picked)]


def dev_clips(rows: list[dict]) -> list[str]:
    return sorted(r["path"] for r in rows if r["split"] == "dev" and r["kind"] == "bonafide")


def engine_features(clips: list[str], work: Path) -> list[np.ndarray]:
    """The speaker model's input [T, 80] for each clip, computed by the engine's own front-end."""
    out = work / f"feats-{hashlib.sha1(chr(10).join(clips).encode()).hexdigest()[:12]}"
    out.mkdir(parents=True, exist_ok=True)
    listing = out / "clips.txt"
    listing.write_text("".join(f"{DATA_DIR / c}\n" for c in clips))
    dump = REPO / "packages" / "engine" / "scripts" / "dump-speaker-features.mjs"
    subprocess.run(["node", str(dump), str(out), str(FEATURE_SCALE), str(listing)], check=True)
    return [np.fromfile(out / f"{i}.fbank.f32", dtype=np.float32).reshape(-1, 80) for i in range(len(clips))]


def float32_weights(model):
    """Undo fp16_weights: each float16 initializer followed by a Cast to float becomes a float32 initializer."""
    from onnx import numpy_helper
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    folded, kept = {}, []
    for node in graph.node:
        source = inits.get(node.input[0]) if node.op_type == "Cast" and node.input else None
        if source is not None and source.data_type == 10:  # FLOAT16
            folded[node.output[0]] = numpy_helper.from_array(numpy_helper.to_array(source).astype(np.float32), node.output[0])
        else:
            kept.append(node)
    used = {name for node in kept for name in node.input}
    initializers = [i for i in graph.initializer if i.name in used and i.data_type != 10] + list(folded.values())
    del graph.node[:]
    graph.node.extend(kept)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    return model


def segment_context(model) -> int:
    """Step 2 of the module doc: the CAM context convolutions on segment columns, the mask broadcast after.

    The segment means come from one [T, S] averaging matrix (a MatMul) instead of an AveragePool per layer, and the
    mask reaches the frames through its transpose, the [S, T] 0/1 membership matrix (a MatMul, exact): both are
    built once, from the first CAM layer's input, because every CAM layer of CAM++ runs at the same frame rate
    (after the first TDNN layer's stride). onnxruntime's AveragePool and Expand/Reshape/Slice broadcast cost more
    than these small MatMuls (docs/benchmarks.md). Same values as the pooling up to float rounding.
    """
    from onnx import TensorProto, helper, numpy_helper
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def only_consumer(name: str, op: str):
        (node,) = consumers[name]
        if node.op_type != op:
            raise SystemExit(f"unexpected CAM layer: {node.name} is {node.op_type}, expected {op}")
        return node

    dead, replaced, rewritten, first_input = set(), {}, 0, None
    for add in list(graph.node):
        if add.op_type != "Add":
            continue
        mean, broadcast = (producer.get(x) for x in add.input)
        if not mean or not broadcast or mean.op_type != "ReduceMean" or broadcast.op_type != "Slice":
            continue
        flat = producer[broadcast.input[0]]
        repeat = producer[flat.input[0]]
        unsqueeze = producer[repeat.input[0]]
        pool = producer[unsqueeze.input[0]]
        attributes = {a.name: a for a in pool.attribute}
        kernel = attributes["kernel_shape"].ints[0]
        if (flat.op_type, repeat.op_type, unsqueeze.op_type, pool.op_type, kernel, attributes["ceil_mode"].i) != (
                "Reshape", "Expand", "Unsqueeze", "AveragePool", SEGMENT_FRAMES, 1):
            raise SystemExit(f"unexpected CAM context path at {add.name}")
        first_input = first_input or pool.input[0]
        conv1 = only_consumer(add.output[0], "Conv")
        relu = only_consumer(conv1.output[0], "Relu")
        conv2 = only_consumer(relu.output[0], "Conv")
        sigmoid = only_consumer(conv2.output[0], "Sigmoid")
        mul = only_consumer(sigmoid.output[0], "Mul")
        add.input[1] = pool.output[0]
        replaced[pool.name] = helper.make_node("MatMul", [pool.input[0], "cam_segment_average"], [pool.output[0]],
                                               name=pool.name + "_segment_means")
        for node in (unsqueeze, repeat, flat, broadcast):
            if all(c in (unsqueeze, repeat, flat, broadcast, add) for c in consumers.get(node.output[0], [])):
                dead.add(node.name)
        for conv in (conv1, conv2):
            replaced[conv.name] = segment_conv_as_matmul(graph, conv)
        mask = sigmoid.output[0]
        replaced[sigmoid.name] = [sigmoid, helper.make_node("MatMul", [mask, "cam_segment_broadcast"], [mask + "_frames"],
                                                            name=mask + "_frames")]
        mul.input[list(mul.input).index(mask)] = mask + "_frames"
        rewritten += 1
    if not rewritten:
        raise SystemExit("no CAM context path found")

    def constant(name: str, value) -> str:
        graph.initializer.append(numpy_helper.from_array(np.array(value, dtype=np.int64), name))
        return name

    zero, one, length = constant("cam_zero", 0), constant("cam_one", 1), constant("cam_segment_frames", SEGMENT_FRAMES)
    axis0, axis1, time_axis = constant("cam_axis0", [0]), constant("cam_axis1", [1]), constant("cam_time_axis", [2])
    node = helper.make_node
    segment_nodes = [  # frames -> segment index [T]; averaging matrix [T, S], each column 1/frames of its segment
        node("Shape", [first_input], ["cam_shape"]),
        node("Gather", ["cam_shape", time_axis], ["cam_frames_1"], axis=0),
        node("Squeeze", ["cam_frames_1", axis0], ["cam_frames"]),
        node("Range", [zero, "cam_frames", one], ["cam_frame_index"]),
        node("Div", ["cam_frame_index", length], ["cam_frame_segment"]),
        node("Sub", ["cam_frames", one], ["cam_last_frame"]),
        node("Div", ["cam_last_frame", length], ["cam_last_segment"]),
        node("Add", ["cam_last_segment", one], ["cam_segments"]),
        node("Range", [zero, "cam_segments", one], ["cam_segment_index"]),
        node("Unsqueeze", ["cam_frame_segment", axis1], ["cam_frame_column"]),
        node("Unsqueeze", ["cam_segment_index", axis0], ["cam_segment_row"]),
        node("Equal", ["cam_frame_column", "cam_segment_row"], ["cam_membership"]),
        node("Cast", ["cam_membership"], ["cam_membership_float"], to=TensorProto.FLOAT),
        node("ReduceSum", ["cam_membership_float", axis0], ["cam_segment_sizes"], keepdims=1),
        node("Div", ["cam_membership_float", "cam_segment_sizes"], ["cam_segment_average"]),
        node("Transpose", ["cam_membership_float"], ["cam_segment_broadcast"], perm=[1, 0]),
    ]
    nodes = []
    for n in graph.node:
        if n.name in dead:
            continue
        replacement = replaced.get(n.name, n)
        nodes.extend(replacement if isinstance(replacement, list) else [replacement])
        if first_input in n.output:
            nodes.extend(segment_nodes)
    with_nodes(model, nodes)
    return rewritten


def with_nodes(model, nodes: list):
    """The main graph's nodes replaced by `nodes`: initializers no node reads dropped, stale shape information
    cleared, the model checked."""
    import onnx
    graph = model.graph
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for n in graph.node for name in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.value_info[:]
    onnx.checker.check_model(model)
    return model


def segment_conv_as_matmul(graph, conv) -> list:
    """A 1x1 context convolution on the few segment columns as MatMul + Add: onnxruntime's Conv costs tens of
    microseconds per call on a [C, S] input, the MatMul a few; same values up to float rounding."""
    from onnx import helper, numpy_helper
    initializers = {i.name: i for i in graph.initializer}
    weight = numpy_helper.to_array(initializers[conv.input[1]])
    bias = numpy_helper.to_array(initializers[conv.input[2]])
    if weight.ndim != 3 or weight.shape[2] != 1:
        raise SystemExit(f"unexpected CAM context convolution {conv.name}: weight {weight.shape}")
    name = conv.output[0]
    graph.initializer.extend([
        numpy_helper.from_array(weight[:, :, 0], name + "_matrix"),
        numpy_helper.from_array(bias.reshape(-1, 1), name + "_column_bias"),
    ])
    return [
        helper.make_node("MatMul", [name + "_matrix", conv.input[0]], [name + "_product"], name=name + "_matmul"),
        helper.make_node("Add", [name + "_product", name + "_column_bias"], [name], name=name + "_bias"),
    ]


def conv_groups(model) -> dict[str, list[str]]:
    """The convolutions by role, from the weight shapes of CAM++ (feat_dim 80, growth 32, bottleneck 128)."""
    weights = {i.name: list(i.dims) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    groups: dict[str, list[str]] = {}
    dense_seen = {"bottleneck": 0, "local": 0}
    for index, node in enumerate(convs):
        shape = weights[node.input[1]]
        if len(shape) == 4:
            role = "front-end input" if shape[1] == 1 else "front-end shortcut" if shape[2:] == [1, 1] else "front-end"
        elif index == len(convs) - 1:
            role = "embedding"
        elif shape[0] == 128 and shape[2] == 1:
            role = "bottleneck"
        elif shape == [32, 128, 3]:
            role = "local"
        elif shape[2] == 5:
            role = "tdnn-first"
        else:
            role = "transit"
        if role in dense_seen:
            dense_seen[role] += 1
            if dense_seen[role] <= FLOAT_DENSE_LAYERS:
                role = f"first-dense-layers-{role}"
        groups.setdefault(role, []).append(node.name)
    return groups


def unfused_relus(model, quantised_convs: set[str]) -> list[str]:
    """The ReLUs that do not read a quantised convolution's output: left out of quantisation, so that only the
    ReLUs onnxruntime folds into their convolution's uint8 output (a range from 0, twice as fine) are quantised."""
    producer = {o: n for n in model.graph.node for o in n.output}
    return [n.name for n in model.graph.node if n.op_type == "Relu"
            and not (n.input[0] in producer and producer[n.input[0]].name in quantised_convs)]


QUANTISED_ROLES = ("bottleneck", "local")
# Also quantised for recordings of at least LONG_FRAMES frames (10 ms each): the front-end's 3x3 convolutions.
LONG_RECORDING_ROLES = QUANTISED_ROLES + ("front-end",)
LONG_FRAMES = 400
# The first dense layers of block 1 stay float: with them in int8 the shortest dev clips fell just under the
# cosine limit (0.9943 at worst), with them in float 0.9962 (the sensitivity study in docs/benchmarks.md).
# The 2-D front-end stays float for short recordings, although it is most of the time: its 3x3 convolutions in
# int8 make the model about 0.47x the float one, but the lowest dev cosine 0.980 over every clip (0.9954 from
# 2.5 s of speech, 0.9960 from 4 s), hence LONG_FRAMES; its input convolution and 1x1 shortcuts stay float at
# every length (in int8 too: 0.989 from 4 s).
FLOAT_DENSE_LAYERS = 4


def tdnn_input(model) -> str:
    """The front-end's output: the input of the first TDNN layer, the only 1-D convolution of kernel 5."""
    initializers = {i.name: list(i.dims) for i in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}

    def weight_shape(name: str):
        while name not in initializers and name in producer and producer[name].op_type in ("Cast", "DequantizeLinear"):
            name = producer[name].input[0]
        return initializers.get(name)

    for node in model.graph.node:
        shape = weight_shape(node.input[1]) if node.op_type == "Conv" else None
        if shape is not None and len(shape) == 3 and shape[2] == 5:
            return node.input[0]
    raise SystemExit("no first TDNN layer found")


def ancestors(model, tensor: str) -> list:
    """The nodes `tensor` depends on, in graph order."""
    producer = {o: n for n in model.graph.node for o in n.output}
    seen, stack = {}, [tensor]
    while stack:
        node = producer.get(stack.pop())
        if node is not None and node.name not in seen:
            seen[node.name] = node
            stack.extend(node.input)
    return [n for n in model.graph.node if n.name in seen]


def front_end_branch(model, nodes: list, prefix: str, output: str):
    """The front-end's nodes as an `If` branch: every name prefixed, the graph input read from the outer scope,
    the weights the branch's own initializers."""
    import onnx
    from onnx import TensorProto, helper
    initializers = {i.name: i for i in model.graph.initializer}
    produced = {o for n in nodes for o in n.output}
    own = []
    for name in sorted({x for n in nodes for x in n.input if x and x not in produced and x in initializers}):
        copy = onnx.TensorProto()
        copy.CopyFrom(initializers[name])
        copy.name = prefix + name
        own.append(copy)
    renamed = []
    for node in nodes:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.name = prefix + node.name
        for i, name in enumerate(copy.input):
            if name in produced or name in initializers:
                copy.input[i] = prefix + name
        for i, name in enumerate(copy.output):
            copy.output[i] = prefix + name
        renamed.append(copy)
    outputs = [helper.make_tensor_value_info(prefix + output, TensorProto.FLOAT, None)]
    return helper.make_graph(renamed, prefix + "front_end", [], outputs, initializer=own)


def front_end_by_length(short_model, long_model, long_frames: int):
    """short_model with its 2-D front-end replaced by an `If`: inputs of at least `long_frames` frames run
    long_model's front-end, shorter ones short_model's own; everything after the front-end is short_model's
    (the two builds quantise it alike). Both models are float32-weighted (before fp16_weights)."""
    from onnx import helper, numpy_helper
    boundary, long_boundary = tdnn_input(short_model), tdnn_input(long_model)
    short_front, long_front = ancestors(short_model, boundary), ancestors(long_model, long_boundary)
    graph = short_model.graph
    front_names = {n.name for n in short_front}
    front_outputs = {o for n in short_front for o in n.output}
    # shape values the rest of the model reads too (of the input) are computed in both places
    shared = {x for n in graph.node if n.name not in front_names for x in n.input if x in front_outputs and x != boundary}
    outside_too = {n.name for value in shared for n in ancestors(short_model, value)}
    rest = [n for n in graph.node if n.name not in front_names or n.name in outside_too]
    switch = [
        helper.make_node("Shape", ["feats"], ["speaker_feats_shape"], name="speaker_feats_shape"),
        helper.make_node("Gather", ["speaker_feats_shape", "speaker_frame_axis"], ["speaker_frames"], axis=0,
                         name="speaker_frames"),
        helper.make_node("GreaterOrEqual", ["speaker_frames", "speaker_long_frames"], ["speaker_is_long"],
                         name="speaker_is_long"),
        helper.make_node("If", ["speaker_is_long"], [boundary], name="speaker_front_end",
                         then_branch=front_end_branch(long_model, long_front, "long/", long_boundary),
                         else_branch=front_end_branch(short_model, short_front, "short/", boundary)),
    ]
    graph.initializer.extend([numpy_helper.from_array(np.array(1, dtype=np.int64), "speaker_frame_axis"),
                              numpy_helper.from_array(np.array(long_frames, dtype=np.int64), "speaker_long_frames")])
    return with_nodes(short_model, switch + rest)


def embed(session, feats: list[np.ndarray]) -> np.ndarray:
    name = session.get_inputs()[0].name
    return np.stack([session.run(None, {name: f[None]})[0][0] for f in feats])


def main() -> None:
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check-only", action="store_true", help="rebuild and compare with the committed file")
    ap.add_argument("--work", default=os.environ.get("VOXKEY_WORK", tempfile.gettempdir()) + "/voxkey-quantise-speaker")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    source_path = MODELS / f"{SOURCE}.onnx"
    target_path = MODELS / f"{TARGET}.onnx"
    rows = manifest_rows()
    calibration = calibration_clips(rows)
    dev = dev_clips(rows)
    t0 = time.time()
    calibration_feats = engine_features(calibration, work)
    dev_feats = engine_features(dev, work)
    print(f"features: {len(calibration)} calibration clips, {len(dev)} dev clips ({time.time() - t0:.0f} s)")

    names = ("float32.onnx", "segments.onnx", "pre.onnx", "int8.onnx")
    float_path, rewritten_path, pre_path, quant_path = (work / name for name in names)
    model = float32_weights(onnx.load(str(source_path)))
    onnx.save(model, str(float_path))
    rewritten = segment_context(model)
    onnx.save(model, str(rewritten_path))
    quant_pre_process(str(rewritten_path), str(pre_path), skip_symbolic_shape=True)
    groups = conv_groups(onnx.load(str(pre_path)))

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.items = iter([{"feats": f[None]} for f in calibration_feats])

        def get_next(self):
            return next(self.items, None)

    def quantise(roles: tuple[str, ...], path: Path):
        excluded = [name for role, names in groups.items() if role not in roles for name in names]
        quantised_convs = {name for role in roles for name in groups[role]}
        excluded += unfused_relus(onnx.load(str(pre_path)), quantised_convs)
        quantize_static(str(pre_path), str(path), Calibration(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv", "Relu"],
                        nodes_to_exclude=excluded, calibrate_method=CalibrationMethod.MinMax)
        return onnx.load(str(path))

    long_path = work / "int8-long.onnx"
    quantised = fp16_weights(front_end_by_length(quantise(QUANTISED_ROLES, quant_path),
                                                 quantise(LONG_RECORDING_ROLES, long_path), LONG_FRAMES))
    strip_metadata(quantised)
    built = work / f"{TARGET}.onnx"
    onnx.save(quantised, str(built))

    reference = embed(ort_session(source_path), dev_feats)
    exact = embed(ort_session(rewritten_path), dev_feats)
    candidate = embed(ort_session(built), dev_feats)

    def cosines(x: np.ndarray) -> np.ndarray:
        return (x * reference).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(reference, axis=1)

    cos = cosines(candidate)
    rewrite_cos = cosines(exact)
    worst = np.argsort(cos)[:5]
    long = np.array([f.shape[0] >= LONG_FRAMES for f in dev_feats])
    summary = {
        "devClips": len(dev),
        "minCosine": round(float(cos.min()), 6),
        "p1Cosine": round(float(np.percentile(cos, 1)), 6),
        "meanCosine": round(float(cos.mean()), 6),
        "longFrontEnd": {"minFrames": LONG_FRAMES, "devClips": int(long.sum()),
                         "minCosine": round(float(cos[long].min()), 6), "meanCosine": round(float(cos[long].mean()), 6)},
        "shortFrontEnd": {"devClips": int((~long).sum()), "minCosine": round(float(cos[~long].min()), 6),
                          "meanCosine": round(float(cos[~long].mean()), 6)},
        "segmentRewriteMinCosine": round(float(rewrite_cos.min()), 7),
        "worstClips": [{"clip": dev[i], "cosine": round(float(cos[i]), 6), "frames": int(dev_feats[i].shape[0])} for i in worst],
    }
    print(json.dumps(summary, indent=2))
    if cos.min() < MIN_COSINE:
        print(f"QUANTISATION REJECTED: lowest dev cosine {cos.min():.5f} < {MIN_COSINE}", file=sys.stderr)
        sys.exit(1)

    check_or_write(built, target_path, a.check_only, None)
    if a.check_only:
        return
    digest = sha256(target_path)

    import onnxruntime
    quantisation = {
        "command": "$VOXKEY_VENV/bin/python -m training.voxkey_train.quantise_speaker",
        "sourceModel": SOURCE,
        "sourceSha256": sha256(source_path),
        "onnxruntime": onnxruntime.__version__,
        "method": "quantize_static, QDQ, per-channel int8 weights, uint8 activations, MinMax calibration; "
                  "the ReLU after each quantised convolution folded into its uint8 output; two front-ends behind an "
                  f"If on the input's length: from {LONG_FRAMES} frames (4 s of net speech) the 2-D front-end's "
                  "3x3 convolutions in int8 too, shorter inputs the float front-end",
        "rewrite": f"CAM context path on segment columns, segment means, mask broadcast and context convolutions "
                   f"as MatMuls ({rewritten} layers; exact up to float rounding: lowest dev cosine "
                   f"{summary['segmentRewriteMinCosine']})",
        "calibration": {
            "clips": len(calibration),
            "selection": f"train split, bona fide, >= 2 s, numpy default_rng({CALIBRATION_SEED}) sample; "
                         f"list in {RESULTS.relative_to(REPO)}",
            "features": "the engine's speaker-model input (packages/engine/scripts/dump-speaker-features.mjs)",
        },
        "quantisedNodes": {role: len(groups[role]) for role in QUANTISED_ROLES},
        "quantisedNodesFromLongFrames": {role: len(groups[role]) for role in LONG_RECORDING_ROLES if role not in QUANTISED_ROLES},
        "floatNodes": {role: (names if len(names) <= 12 else f"{len(names)} convolutions")
                       for role, names in groups.items() if role not in QUANTISED_ROLES},
        "devCheck": {k: summary[k] for k in ("devClips", "minCosine", "p1Cosine", "meanCosine", "longFrontEnd", "shortFrontEnd")},
    }
    RESULTS.write_text(json.dumps({**quantisation, "sha256": digest, "calibrationClips": calibration,
                                   "quantisedNodeNames": {r: groups[r] for r in QUANTISED_ROLES},
                                   "floatNodeNames": {r: n for r, n in groups.items() if r not in QUANTISED_ROLES},
                                   "dev": summary}, indent=2) + "\n")
    doc = json.loads(MANIFEST.read_text())
    entry = next((m for m in doc["models"] if m["name"] == TARGET), None)
    if entry is None:
        print(f"note: {TARGET} has no manifest entry yet: add one (see models/README.md), then run again")
    else:
        entry["sha256"] = digest
        entry["quantisation"] = quantisation
        MANIFEST.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {target_path}, {RESULTS.relative_to(REPO)}" + ("" if entry is None else f", {MANIFEST.relative_to(REPO)}"))


if __name__ == "__main__":
    main()
