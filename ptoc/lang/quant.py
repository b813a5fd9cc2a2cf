"""Uniform quantization with a compile-time multiplier and zero point (TQUANT/TDEQUANT).

Per-row parameters and MX formats are the compound ``quantize_rows``/``quantize_mx``.
"""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa import op
from ptoc.dialects import tile_quant as tq

from ..dtypes import type_list
from ..tile import Tile
from ._core import as_dtype, as_number, as_tile, check_type, emit_tile, fail
from .elementwise import rounding_mode


def _params(fn: str, multiplier: Any, zero_point: Any) -> tuple[float | None, int | None]:
    m = float(as_number(multiplier, fn, "the multiplier"))
    zp = as_number(zero_point, fn, "the zero point")
    if isinstance(zp, float):
        if not zp.is_integer():
            fail(
                f"{fn}: the zero point is an integer, not {zp!r}",
                "use pt.quantize_rows for float zero points",
            )
        zp = int(zp)
    # the catalog defaults (multiplier 1.0, zero point 0) need no scalar operand
    return (None if m == 1.0 else m), (None if zp == 0 else zp)


def quantize(
    t: Tile,
    dtype: Any = "s8",
    multiplier: float = 1.0,
    zero_point: int = 0,
    rounding: str = "rne",
    saturate: bool = True,
) -> Tile:
    """fp32 -> s8/u8: ``round(t * multiplier + zero_point)``, the exact value rounded once
    (D10), clamped to the type's range with ``saturate`` (else the low 8 bits); NaN gives
    0 (TQUANT)."""
    fn = "pt.quantize"
    t = as_tile(t, fn)
    check_type(fn, tq.QuantOp.MNEMONIC, t.dtype)
    d = as_dtype(dtype, fn)
    legal = op(tq.QuantOp.MNEMONIC).type_rules.get("dst", frozenset())
    if d.datatype not in legal:
        fail(f"{fn} produces {type_list(legal)}, not {d.name}")
    m, zp = _params(fn, multiplier, zero_point)
    mode = rounding_mode(fn, rounding)
    return emit_tile(fn, tq.QuantOp(t.value, d.catalog_name, m, zp, mode, bool(saturate)))


def dequantize(q: Tile, multiplier: float = 1.0, zero_point: int = 0) -> Tile:
    """s8/u8 -> fp32: ``fl32((q - zero_point) * multiplier)`` (TDEQUANT)."""
    fn = "pt.dequantize"
    q = as_tile(q, fn)
    check_type(fn, tq.DequantOp.MNEMONIC, q.dtype)
    m, zp = _params(fn, multiplier, zero_point)
    return emit_tile(fn, tq.DequantOp(q.value, "FP32", m, zp))


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "dequantize",
    "quantize",
]
