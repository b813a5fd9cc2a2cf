"""Reference semantics of the data-movement compound interfaces.

``gather_pattern`` (pto-isa mask-pattern TGATHER), ``gather_flat`` (index-form TGATHER),
``gather_blocks`` (TGATHERB), ``scatter_flat`` (NPU TSCATTER) and ``transpose`` (TTRANS with
a tmp tile). All of them move raw bits: no element is ever converted or canonicalised.
Flat offsets address the tile's valid region in row-major order (row stride = valid
columns); ptoc tiles have no addressable physical padding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import CompoundError, as_dtype, bits, from_bits, index_tile, nonempty, tile

#: mask pattern -> (period, kept offset); read right to left, the rightmost bit is lane 0
PATTERNS: dict[str, tuple[int, int]] = {
    "P0101": (2, 0),
    "P1010": (2, 1),
    "P0001": (4, 0),
    "P0010": (4, 1),
    "P0100": (4, 2),
    "P1000": (4, 3),
    "P1111": (1, 0),
}
#: pto-isa ``MaskPattern`` enum values
PATTERN_CODES = {
    1: "P0101",
    2: "P1010",
    3: "P0001",
    4: "P0010",
    5: "P0100",
    6: "P1000",
    7: "P1111",
}
BLOCK_BYTES = 32  # TGATHERB block


def _bit_tile(name: str, t: Any) -> np.ndarray:
    t = nonempty(name, tile(name, t))
    if t.dtype.itemsize not in (1, 2, 4):
        raise CompoundError(f"{name} elements must be 1, 2 or 4 bytes wide, not {t.dtype}")
    return t


def _reinterpret(out: np.ndarray, dtype: Any) -> np.ndarray:
    """Bit-copy ``out`` into element type ``dtype`` of the same width (pto-isa allows it)."""
    if dtype is None:
        return out
    dt = as_dtype(dtype)
    if dt.itemsize != out.dtype.itemsize:
        raise CompoundError(
            f"dtype {dt} must have the source element size ({out.dtype.itemsize} bytes)"
        )
    return from_bits(bits(out), dt)


def gather_pattern(t: np.ndarray, pattern: str | int, *, dtype: Any = None) -> np.ndarray:
    """pto-isa mask-pattern TGATHER: keep the columns of each row that the pattern selects.

    ``pattern`` is one of P0101 (c % 2 == 0), P1010 (c % 2 == 1), P0001 (c % 4 == 0),
    P0010 (c % 4 == 1), P0100 (c % 4 == 2), P1000 (c % 4 == 3), P1111 (every column), or
    its pto-isa enum value 1..7. The pattern restarts at column 0 of every row, so the
    result is (R, K) with K = the number of kept columns in one row (row r of the result
    is pto-isa's contiguous dst storage r*K .. r*K+K-1). ``dtype`` optionally
    reinterprets the result bits as another type of the same width.
    """
    t = _bit_tile("t", t)
    if isinstance(pattern, (int, np.integer)) and not isinstance(pattern, bool):
        name = PATTERN_CODES.get(int(pattern))
    else:
        name = str(pattern).upper()
    if name not in PATTERNS:
        raise CompoundError(
            f"unknown mask pattern {pattern!r}; expected one of {sorted(PATTERNS)}"
        )
    period, off = PATTERNS[name]
    if t.shape[1] <= off:
        raise CompoundError(f"{name} keeps no column of a {t.shape[1]}-column tile")
    return _reinterpret(np.ascontiguousarray(t[:, off::period]), dtype)


def gather_flat(t: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """pto-isa index-form TGATHER: ``out[r, c] = t.flat[offsets[r, c]]``.

    ``offsets`` is an integer (R', C') tile of flat element offsets into ``t``'s valid
    region in row-major order; every offset must be in ``0 .. t.size - 1`` (else
    CompoundError: ADR 0083 makes an out-of-range index illegal). Result: (R', C') of
    ``t``'s element type.
    """
    t = _bit_tile("t", t)
    idx = nonempty("offsets", index_tile("offsets", offsets))
    bad = (idx < 0) | (idx >= t.size)
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        raise CompoundError(f"offsets{k} = {int(idx[k])} is outside 0..{t.size - 1}")
    flat = bits(t).reshape(-1)
    return from_bits(flat[idx], t.dtype)


def gather_blocks(t: np.ndarray, byte_offsets: np.ndarray) -> np.ndarray:
    """pto-isa TGATHERB: gather 32-byte blocks of ``t``'s storage by byte offset.

    ``byte_offsets`` is an integer (R', NB) tile, one entry per 32-byte destination block.
    Destination row r, block b receives the 32 bytes of ``t``'s row-major valid storage
    starting at byte ``byte_offsets[r, b]``. Every offset must be a multiple of 32 and
    the block must lie inside the storage (else CompoundError). Result: (R', NB*32/size)
    of ``t``'s element type.
    """
    t = _bit_tile("t", t)
    off = nonempty("byte_offsets", index_tile("byte_offsets", byte_offsets))
    nbytes = t.size * t.dtype.itemsize
    if np.any(off % BLOCK_BYTES):
        k = tuple(int(i) for i in np.argwhere(off % BLOCK_BYTES)[0])
        raise CompoundError(f"byte_offsets{k} = {int(off[k])} is not a multiple of 32")
    bad = (off < 0) | (off + BLOCK_BYTES > nbytes)
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        raise CompoundError(
            f"byte_offsets{k} = {int(off[k])}: its 32-byte block leaves the {nbytes}-byte tile"
        )
    raw = np.ascontiguousarray(t).view(np.uint8).reshape(-1)
    rows, nb = off.shape
    out = raw[off[:, :, None] + np.arange(BLOCK_BYTES)].reshape(rows, nb * BLOCK_BYTES)
    return np.ascontiguousarray(out).view(t.dtype)


def scatter_flat(
    t: np.ndarray, offsets: np.ndarray, shape: tuple[int, int], into: np.ndarray | None = None
) -> np.ndarray:
    """NPU TSCATTER: ``out.flat[offsets[r, c]] = t[r, c]`` in row-major source order.

    ``offsets`` has ``t``'s shape; each is a flat element offset into the (R', C') =
    ``shape`` destination, in ``0 .. R'*C' - 1`` (else CompoundError). Duplicates: the
    last writer in row-major source order wins. Positions nobody writes hold +0 (all
    zero bits) when ``into`` is None, else ``into``'s element (``into`` has ``shape``
    and ``t``'s element type and is not modified).
    """
    t = _bit_tile("t", t)
    idx = index_tile("offsets", offsets)
    if idx.shape != t.shape:
        raise CompoundError(f"offsets shape {idx.shape} differs from t shape {t.shape}")
    if len(shape) != 2 or min(shape) <= 0:
        raise CompoundError(f"shape must be a nonzero (rows, cols) pair, not {shape!r}")
    size = int(shape[0]) * int(shape[1])
    bad = (idx < 0) | (idx >= size)
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        raise CompoundError(f"offsets{k} = {int(idx[k])} is outside 0..{size - 1}")
    if into is None:
        out = np.zeros(size, bits(t).dtype)
    else:
        into = tile("into", into)
        if into.shape != tuple(shape) or into.dtype != t.dtype:
            raise CompoundError(
                f"into must be a {tuple(shape)} {t.dtype} tile, not {into.shape} {into.dtype}"
            )
        out = bits(into).reshape(-1)
    flat_idx = idx.reshape(-1)
    # last writer wins: keep, per destination, the last source position that names it
    rev_first = np.unique(flat_idx[::-1], return_index=True)[1]
    winners = flat_idx.size - 1 - rev_first
    out[flat_idx[winners]] = bits(t).reshape(-1)[winners]
    return from_bits(out.reshape(shape), t.dtype)


def transpose(t: np.ndarray, scratch: Any = None, *, dtype: Any = None) -> np.ndarray:
    """pto-isa TTRANS(dst, src, tmp): ``out[c, r] = t[r, c]``, a bit copy.

    ``scratch`` is accepted for pto-isa compatibility and ignored: the tmp tile is A2A3
    staging space and never changes the result, so this is the direct transpose
    (ADR 0083 decision 137 has no temporary operand). ``dtype`` optionally reinterprets
    the bits as another type of the same width.
    """
    del scratch
    t = nonempty("t", tile("t", t))
    return _reinterpret(np.ascontiguousarray(t.T), dtype)
