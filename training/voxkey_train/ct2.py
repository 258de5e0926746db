"""Reader for CTranslate2 model files (`model.bin`, binary format version 6): a flat list of named tensors.

Layout: uint32 version, the spec's name and revision, uint32 variable count, then per variable its name
(uint16 length, bytes with a trailing NUL), uint8 rank, uint32 dims, uint8 dtype, uint32 byte count and the
raw little-endian data; last the aliases (name -> variable name), e.g. a projection tied to the embeddings.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
SUPPORTED_VERSION = 6


class Ct2Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.offset = 0

    def take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += struct.calcsize(fmt)
        return value[0]

    def string(self) -> str:
        n = self.take("<H")
        raw = self.data[self.offset:self.offset + n]
        self.offset += n
        return raw.rstrip(b"\0").decode("utf-8")


def read_ct2_model(path: Path) -> tuple[str, dict[str, np.ndarray]]:
    """(spec name, {variable name: array}) with aliases resolved to the array they name."""
    r = Ct2Reader(Path(path).read_bytes())
    version = r.take("<I")
    if version != SUPPORTED_VERSION:
        raise ValueError(f"CTranslate2 binary version {version}, expected {SUPPORTED_VERSION}")
    spec = r.string()
    r.take("<I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    for _ in range(r.take("<I")):
        name = r.string()
        shape = [r.take("<I") for _ in range(r.take("<B"))]
        dtype_code = r.take("<B")
        if dtype_code not in DTYPES:
            raise ValueError(f"{name}: unsupported CTranslate2 dtype {dtype_code}")
        nbytes = r.take("<I")
        array = np.frombuffer(r.data, dtype=DTYPES[dtype_code], count=nbytes // np.dtype(DTYPES[dtype_code]).itemsize, offset=r.offset)
        variables[name] = array.reshape(shape).copy()
        r.offset += nbytes
    for _ in range(r.take("<I")):
        alias, target = r.string(), r.string()
        variables[alias] = variables[target]
    if r.offset != len(r.data):
        raise ValueError(f"{len(r.data) - r.offset} trailing bytes after the last alias")
    return spec, variables
