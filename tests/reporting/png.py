"""A minimal PNG decoder for screenshots (8-bit RGB or RGBA, no interlacing): the
pixels as a numpy array, with zlib and struct only."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path: Path, rows: int | None = None) -> np.ndarray:
    """The image (its first ``rows`` rows) as an array (height, width, channels) of
    uint8."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    pos, idat = 8, []
    width = height = channels = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    height = min(height, rows) if rows is not None else height
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        if f == 0:
            row = line
        elif f == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(width, channels), axis=0).reshape(-1) & 255
        elif f == 2:  # Up
            row = (line + prev) & 255
        else:  # Average (3) and Paeth (4) depend on the reconstructed left neighbour
            cur = [0] * stride
            up = prev.tolist()
            src = line.tolist()
            for i in range(stride):
                a = cur[i - channels] if i >= channels else 0
                c = up[i - channels] if i >= channels else 0
                pred = (a + up[i]) >> 1 if f == 3 else _paeth(a, up[i], c)
                cur[i] = (src[i] + pred) & 255
            row = np.array(cur, dtype=np.int64)
        out[y] = row
        prev = row
    return out.reshape(height, width, channels)
