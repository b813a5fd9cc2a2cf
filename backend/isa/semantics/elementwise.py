"""Mode-0 (tile-tile) elementwise operations.

Each entry point is ``fn(dt, *sources, **controls) -> (result, status)`` (the operation
table, ``backend/isa/optable.py``, says which serves which mnemonic): sources are
``(P, R, C)`` carrier arrays of the valid region, status is ``uint8 (P,)``. TCMP returns
a bool predicate array, TSEL takes a bool predicate array; packing predicate bits into
Tile bytes is the executor's concern. Type-set legality is the executor's as well:
every function here is total over the numeric carriers.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from ..datatypes import DataType
from .convert import convert
from .core import binary, compare, fold_flags, is_float, no_status, unary
from .floatarith import float_fma

__all__ = ["binary_semantics", "tcmp", "tcvt", "tfma", "tsel", "unary_semantics"]

Result = tuple[np.ndarray, np.ndarray]


def binary_semantics(op: str) -> Callable[..., Result]:
    """The entry point of the :func:`.core.binary` op ``op`` (``"add"``: TADD)."""
    # a partial (not a closure): one Python frame less per bundle
    run = partial(binary, op)
    run.__doc__ = f"Typed elementwise {op} of two tiles (see core.binary)."
    return run


def unary_semantics(op: str) -> Callable[..., Result]:
    """The entry point of the :func:`.core.unary` op ``op`` (``"exp"``: TEXP)."""
    run = partial(unary, op)
    run.__doc__ = f"Typed elementwise {op} of one tile (see core.unary)."
    return run


def tcmp(dt: DataType, src0: np.ndarray, src1: np.ndarray, cmode: int = 0) -> Result:
    """TCMP: predicate ``src0 CMODE src1`` (CMode 0 EQ default; see core.compare)."""
    return compare(cmode, dt, src0, src1)


def tsel(dt: DataType, pred: np.ndarray, src_true: np.ndarray, src_false: np.ndarray) -> Result:
    """TSEL: predicate 1 copies SrcTrue bits, 0 copies SrcFalse bits; never any status."""
    pred = np.asarray(pred, bool)
    r = np.where(pred, np.asarray(src_true), np.asarray(src_false))
    return r.astype(np.asarray(src_true).dtype, copy=False), no_status(pred.shape[0])


def tfma(dt: DataType, left: np.ndarray, right: np.ndarray, addend: np.ndarray) -> Result:
    """TFMA: ``left * right + addend`` with one rounding (``TileFixedFusedMultiplyAddValue``).

    Integers wrap modulo the element width; floats are fused (floatarith.float_fma).
    """
    if is_float(dt):
        r, flags = float_fma(DataType(dt), left, right, addend)
        return r, fold_flags(flags)
    prod, _ = binary("mul", dt, left, right)
    return binary("add", dt, prod, addend)


def tcvt(
    dt: DataType,
    src: np.ndarray,
    dst_dt: DataType | None = None,
    rmode: int = 0,
    sat: bool | int = False,
    canonicalize: int = 0,
) -> Result:
    """TCVT from ``dt`` (the BSTART type) to ``dst_dt`` (None: same type); see convert."""
    return convert(dt, dt if dst_dt is None else dst_dt, src, rmode, sat, canonicalize)
