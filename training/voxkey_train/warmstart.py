"""Warm start: copy the weights of a shipped ONNX model back into its PyTorch module.

The exported graphs keep the PyTorch parameter names (the speaker export wraps the network as
`model.*` next to its backend `mu`/`W`), so a later model version can continue from the committed
one instead of from scratch: the committed .onnx is the checkpoint that survives a new machine.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
import torch


def load_onnx_weights(module: torch.nn.Module, onnx_path: str, prefix: str = "", optional=("center",)) -> int:
    """optional: parameters a new variant adds (e.g. the one-class centre); they keep their init."""
    inits = {i.name: i for i in onnx.load(onnx_path).graph.initializer}
    state = module.state_dict()
    loaded = 0
    for name, tensor in state.items():
        init = inits.get(prefix + name)
        if init is None:
            if name.endswith("num_batches_tracked") or name in optional:
                continue
            raise KeyError(f"{onnx_path} has no initializer {prefix + name}")
        value = torch.from_numpy(np.array(onnx.numpy_helper.to_array(init)))
        if value.shape != tensor.shape:
            raise ValueError(f"{prefix + name}: shape {tuple(value.shape)} != {tuple(tensor.shape)}")
        tensor.copy_(value)
        loaded += 1
    return loaded
