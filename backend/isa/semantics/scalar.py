"""Mode-1 tile-scalar operations.

Entry points are ``fn(dt, src, scalar_gpr[, cmode]) -> (result, status)`` (the operation
table says which serves which mnemonic). The scalar
is each PE's raw 64-bit GPR value, a uint64 array of shape (P,), of which only the low
element-width bits participate (``TileRawElementValue``); an omitted B.IOR is the
executor's zero. TSELS takes ``(dt, pred, src_true, scalar_gpr)`` and TEXPANDS
``(dt, shape, scalar_gpr)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..datatypes import DataType
from .core import (
    BundleControlSemanticError,
    SemanticError,
    binary,
    compare,
    is_float,
    no_status,
    scalar_operand,
)

__all__ = ["scalar_semantics", "tcmps", "texpands", "tsels"]

Result = tuple[np.ndarray, np.ndarray]


def _check_divisor(mnemonic: str, op: str, dt: DataType, scalar: np.ndarray) -> None:
    """An integer zero scalar divisor is illegal before any effect.

    TDIVS.asl names this an "Illegal Block Exception", hence
    :class:`BundleControlSemanticError` (Fault_BundleControl); TREMS.asl only says
    "illegal before effects", hence a plain :class:`SemanticError` (Fault_TileLegality).
    A floating zero scalar is a legal divisor (the profile's x/0 result).
    """
    if is_float(dt) or not np.any(scalar == 0):
        return
    if op == "div":
        raise BundleControlSemanticError(f"{mnemonic} has an integer zero scalar divisor")
    raise SemanticError(f"{mnemonic} has an integer zero scalar divisor")


def scalar_semantics(mnemonic: str, op: str) -> Callable[..., Result]:
    """The entry point of ``mnemonic``: the :func:`.core.binary` op ``op`` of the tile (left)
    and each PE's scalar (right)."""

    def run(dt: DataType, src: np.ndarray, scalar_gpr: np.ndarray) -> Result:
        s = scalar_operand(dt, scalar_gpr)
        if op in ("div", "rem"):
            _check_divisor(mnemonic, op, dt, s)
        return binary(op, dt, src, s)

    run.__doc__ = f"{mnemonic}: typed elementwise {op} of a tile and each PE's scalar."
    return run


def tcmps(dt: DataType, src: np.ndarray, scalar_gpr: np.ndarray, cmode: int = 0) -> Result:
    """TCMPS: predicate ``src CMODE scalar`` (see core.compare)."""
    s = scalar_operand(dt, scalar_gpr)
    return compare(cmode, dt, src, np.broadcast_to(s, np.shape(src)))


def tsels(
    dt: DataType, pred: np.ndarray, src_true: np.ndarray, scalar_gpr: np.ndarray
) -> Result:
    """TSELS: predicate 1 copies SrcTrue bits, 0 the scalar's low bits; no status."""
    pred = np.asarray(pred, bool)
    s = scalar_operand(dt, scalar_gpr)
    r = np.where(pred, np.asarray(src_true), s)
    return r.astype(s.dtype, copy=False), no_status(pred.shape[0])


def texpands(dt: DataType, shape: tuple[int, int, int], scalar_gpr: np.ndarray) -> Result:
    """TEXPANDS: every valid element receives the scalar's low raw bits (no conversion)."""
    s = scalar_operand(dt, scalar_gpr)
    out = np.empty(shape, s.dtype)
    out[...] = s  # broadcast assignment: no broadcast view object
    return out, no_status(shape[0])
