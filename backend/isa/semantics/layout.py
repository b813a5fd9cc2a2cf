"""TTRANS, TCONCAT, TEXTRACT, TINSERT, TFILLPAD: bit-exact layout operations (Mode 3).

Authority: seed ADR 0083 decision 137 (TTRANS); ASL
``asl/tile/model/execution/rearrangement.asl`` (TEXTRACT, TINSERT, TTRANS, TCONCAT),
``asl/tile/model/execution/generation.asl`` (TFILLPAD) and
``asl/tile/model/legality/layout-rearrangement.asl`` (their shape rules).

Every operation here moves logical elements bit-for-bit and never produces numeric
status. Arrays are logical (row-major) views; a B.DATR Layout transformation of the
destination is a physical-placement concern of the executor. Each ``*_legal`` helper is
pure and returns the violated rule text or None; the operations themselves raise
:class:`SemanticError` for the same rules, because offsets come from per-PE GPRs and
are therefore data-dependent.
"""

from __future__ import annotations

import numpy as np

from ..datatypes import DataType, info
from .core import SemanticError, no_status, scalar_operand

Shape = tuple[int, int]
#: Offsets are natural operands, integer {0..65535} in the ASL.
_NATURAL_MAX = 65535


def _ints(off: int | np.ndarray | list[int]) -> list[int]:
    """An offset (int, per-PE array, e.g. raw uint64 GPRs, or a list of Python ints) as
    Python ints, one per entry (a scalar: one)."""
    if isinstance(off, list) and all(type(v) is int for v in off):
        return off  # the executor's per-PE GPR values, read once
    values: list[int] = np.asarray(off).reshape(-1).tolist()
    return [int(v) for v in values]


def _per_pe(values: list[int], p: int) -> list[int]:
    """One offset per PE: a single offset serves every PE."""
    if len(values) == 1:
        return values * p
    if len(values) != p:
        raise ValueError(f"{len(values)} offsets for {p} PEs")
    return values


def _offset_rule(
    what: str, bound: Shape, extent: Shape, ros: list[int], cos: list[int], rel: str
) -> str | None:
    """The shared TEXTRACT/TINSERT offset rule on Python ints: every offset a natural
    0..65535 (a negative int is a huge unsigned one), then ``offset + extent <= bound``
    for rows, then for columns."""
    lo_r, hi_r, lo_c, hi_c = min(ros), max(ros), min(cos), max(cos)
    if lo_r < 0 or hi_r > _NATURAL_MAX or lo_c < 0 or hi_c > _NATURAL_MAX:
        return f"{what} offset is outside 0..65535"
    if hi_r + extent[0] > bound[0]:
        return f"{what} row offset + {rel} ValidRow exceeds {_other(rel)} ValidRow"
    if hi_c + extent[1] > bound[1]:
        return f"{what} column offset + {rel} ValidCol exceeds {_other(rel)} ValidCol"
    return None


def _other(rel: str) -> str:
    return "source" if rel == "destination" else "destination"


def _windows(
    p: int, ros: list[int], cos: list[int], shape: Shape
) -> list[tuple[int, slice, slice]]:
    """(PE, row slice, column slice) of each PE's window at its offsets."""
    r, c = shape
    return [(k, slice(ro, ro + r), slice(co, co + c)) for k, ro, co in zip(range(p), ros, cos)]


def ttrans_shape_legal(src_valid: Shape, dst_valid: Shape) -> str | None:
    """TTRANS: destination (ValidRow, ValidCol) must be the transposed source shape."""
    if tuple(dst_valid) != (src_valid[1], src_valid[0]):
        return "TTRANS destination valid shape is not the transposed source valid shape"
    return None


def ttrans(dt: DataType, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TTRANS: ``dst[c, r] = src[r, c]`` bit-for-bit; (P, R, C) -> (P, C, R)."""
    return np.ascontiguousarray(src.transpose(0, 2, 1)), no_status(src.shape[0])


def tconcat_shapes_legal(a_valid: Shape, b_valid: Shape, dst_valid: Shape) -> str | None:
    """TCONCAT: equal nonzero ValidRow everywhere; dst ValidCol = left + right ValidCol."""
    if a_valid[0] <= 0 or a_valid[0] != b_valid[0] or dst_valid[0] != a_valid[0]:
        return "TCONCAT sources and destination must share one nonzero ValidRow"
    if dst_valid[1] != a_valid[1] + b_valid[1]:
        return "TCONCAT destination ValidCol must be the sum of the source ValidCols"
    return None


def tconcat(dt: DataType, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TCONCAT: columns of ``a`` (P, R, ca) followed by columns of ``b`` (P, R, cb)."""
    rule = tconcat_shapes_legal(a.shape[1:], b.shape[1:], (a.shape[1], a.shape[2] + b.shape[2]))
    if rule is not None:
        raise SemanticError(rule)
    return np.concatenate([a, b], axis=2), no_status(a.shape[0])


def textract_shape_legal(
    src_valid: Shape, out_shape: Shape, row_off: int | np.ndarray, col_off: int | np.ndarray
) -> str | None:
    """TEXTRACT: ``offset + destination valid extent <= source valid extent`` (every PE)."""
    return _offset_rule("TEXTRACT", src_valid, out_shape, _ints(row_off), _ints(col_off),
                        "destination")  # fmt: skip


def textract(
    dt: DataType,
    src: np.ndarray,
    row_off: int | np.ndarray,
    col_off: int | np.ndarray,
    out_shape: Shape,
) -> tuple[np.ndarray, np.ndarray]:
    """TEXTRACT: ``dst[r, c] = src[r + row_off, c + col_off]`` for the (VR, VC) ``out_shape``.

    Offsets are ints or per-PE (P,) arrays (raw GPR values). Returns ``(dst, status)``.
    """
    p = src.shape[0]
    ros, cos = _ints(row_off), _ints(col_off)
    rule = _offset_rule("TEXTRACT", src.shape[1:], out_shape, ros, cos, "destination")
    if rule is not None:
        raise SemanticError(rule)
    ros, cos = _per_pe(ros, p), _per_pe(cos, p)
    r, c = out_shape
    ro, co = ros[0], cos[0]
    if ros.count(ro) == p and cos.count(co) == p:  # one window for every PE: a slice
        return src[:, ro : ro + r, co : co + c].copy(), no_status(p)
    out = np.empty((p, r, c), src.dtype)
    for k, rows, cols in _windows(p, ros, cos, out_shape):
        out[k] = src[k, rows, cols]
    return out, no_status(p)


def tinsert_shape_legal(
    old_valid: Shape, src_valid: Shape, row_off: int | np.ndarray, col_off: int | np.ndarray
) -> str | None:
    """TINSERT: ``offset + source valid extent <= destination valid extent`` (every PE)."""
    return _offset_rule("TINSERT", old_valid, src_valid, _ints(row_off), _ints(col_off),
                        "source")  # fmt: skip


def tinsert(
    dt: DataType,
    old: np.ndarray,
    src: np.ndarray,
    row_off: int | np.ndarray,
    col_off: int | np.ndarray,
    old_valid: Shape | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """TINSERT: a copy of ``old`` with ``src`` (P, sr, sc) written at the offsets.

    ``old`` is the snapshotted old destination: its valid region, or its full physical
    payload when the executor wants the padding carried over (the ASL copies the whole
    old payload and definedness, then marks the valid region defined). ``old_valid``
    (default ``old.shape[1:]``) bounds the insertion. Returns ``(dst, status)``.
    """
    p = old.shape[0]
    valid = (
        (old_valid[0], old_valid[1]) if old_valid is not None else (old.shape[1], old.shape[2])
    )
    ros, cos = _ints(row_off), _ints(col_off)
    rule = _offset_rule("TINSERT", valid, src.shape[1:], ros, cos, "source")
    if rule is not None:
        raise SemanticError(rule)
    ros, cos = _per_pe(ros, p), _per_pe(cos, p)
    dst = old.copy()
    for k, rows, cols in _windows(p, ros, cos, (src.shape[1], src.shape[2])):
        dst[k, rows, cols] = src[k]
    return dst, no_status(p)


def tfillpad_shapes_legal(
    src_physical: Shape, src_valid: Shape, dst_physical: Shape, dst_valid: Shape
) -> str | None:
    """TFILLPAD: the destination's physical and valid extents contain the source's."""
    if dst_physical[0] < src_physical[0] or dst_physical[1] < src_physical[1]:
        return "TFILLPAD destination physical shape is smaller than the source's"
    if dst_valid[0] < src_valid[0] or dst_valid[1] < src_valid[1]:
        return "TFILLPAD destination valid shape is smaller than the source's"
    return None


def tfillpad(
    dt: DataType, src: np.ndarray, pad_gpr: np.ndarray, dst_physical: Shape
) -> tuple[np.ndarray, np.ndarray]:
    """TFILLPAD: the FULL physical destination (P, Rows, Col), all of it defined.

    Coordinates inside the source valid rectangle (P, sr, sc) receive the source element;
    every other physical coordinate receives the padding scalar, the low element-width
    bits of the per-PE GPR ``pad_gpr`` (``TileRawElementValue``). Returns ``(dst, status)``.
    """
    p, sr, sc = src.shape
    rows, cols = dst_physical
    if sr > rows or sc > cols:
        raise ValueError("TFILLPAD source valid region does not fit the destination")
    pad = scalar_operand(dt, np.asarray(pad_gpr, dtype=np.uint64))
    dst = np.empty((p, rows, cols), dtype=info(dt).carrier)
    dst[...] = pad
    dst[:, :sr, :sc] = src
    return dst, no_status(p)
