"""Lowerings of the quantization interfaces (``docs/compound.md`` §10-13).

* ``quantize_rows``: ``x*s`` (TROWEXPANDMUL, or TMULS for a scalar), ``+o``
  (TROWEXPANDADD / TADDS), then TQUANT with multiplier 1.0 and zero point 0 (RNE, Sat):
  pto-isa's two FP32 roundings. A scalar scale is a TMULS too: TQUANT's own multiplier
  would round the exact ``x * m`` once (D10), not ``fl32(x * m)``.
* ``dequantize_rows``: TCVT to FP32 (exact), ``-o`` (TROWEXPANDSUB / TSUBS), ``*s``
  (TROWEXPANDMUL / TMULS). A scalar positive scale with an integer offset on S8/U8 is
  one TDEQUANT (``q - zp`` is exact, so one rounding remains either way).
* ``quantize_mx``: the FP32 bits (a view as U32), TANDS of the sign, per 32-column
  group TROWMAX of the magnitudes (the bits of amax; above +inf's bits a NaN group); the
  biased exponent E by TSHRS, ``scale = max(E - 8, 0)`` by TMAXS/TSUBS, TSELS 0xFF for
  NaN groups, TCVT to U8 and a view as E8M0; ``scaling`` = TRECIP of the scales as FP32
  (exact); TROWEXPANDMUL and a saturating TCVT to E4M3 for the elements. The groups are
  TEXTRACT column windows. (TCVT to E8M0 rounds the exponent of a non-power of two, so
  it cannot extract E, and it would raise NX, UF and NV that the reference does not.)
* ``dequantize_mx``: TCVT E4M3 and E8M0 to FP32 (exact; E8M0 0xFF is NaN) and one
  TROWEXPANDMUL per group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import quant
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.compound_ops.quant import (
    AffineRowsOp,
    DequantizeMxOp,
    DequantizeRowsOp,
    QuantizeMxOp,
    QuantizeRowsOp,
)
from ptoc.dialects.modes import CMode, RMode
from ptoc.dialects.tile_base import scalar_bits

from .build import Emit, dt, shape, width

GROUP = 32


def _scale(e: Emit, op: AffineRowsOp) -> SSAValue | float:
    """The scale: a scalar, or the (R, 1) tile."""
    if op.scale is not None:
        return float(op.scale.value)
    t = op.scale_tile
    assert t is not None
    return e.norm(t)


def _offset(e: Emit, op: AffineRowsOp) -> SSAValue | float | None:
    """The offset: a scalar, the (R, 1) tile, or None."""
    if op.offset is not None:
        return float(op.offset.value)
    t = op.offset_tile
    return None if t is None else e.norm(t)


def _apply(
    e: Emit,
    x: SSAValue,
    p: SSAValue | float,
    tile_op: type[red.ExpandBinaryOp],
    scalar_op: type[ew.ScalarOp],
) -> SSAValue:
    if isinstance(p, SSAValue):
        return e.expand(tile_op, x, p)
    return e.scalar(scalar_op, x, p)


def _fp32_bits(v: float) -> int:
    return scalar_bits(DataType.FP32, v)


def lower_quantize_rows(e: Emit, op: QuantizeRowsOp) -> Sequence[SSAValue]:
    x = e.norm(op.src)
    out_dt = dt(op.outs[0])
    scale, offset = _scale(e, op), _offset(e, op)
    # Never TQUANT's own multiplier: TQUANT rounds the exact x*m once (D10), the
    # interface rounds fl32(x*m) first.
    y = _apply(e, x, scale, red.RowExpandMulOp, ew.MulsOp)
    if offset is not None:
        y = _apply(e, y, offset, red.RowExpandAddOp, ew.AddsOp)
    return [e.quant(y, out_dt)]


def lower_dequantize_rows(e: Emit, op: DequantizeRowsOp) -> Sequence[SSAValue]:
    q = e.norm(op.src)
    scale, offset = _scale(e, op), _offset(e, op)
    src_dt = dt(q)
    if (
        not isinstance(scale, SSAValue)
        and not isinstance(offset, SSAValue)
        and src_dt in ("S8", "U8")
        and (offset is None or float(offset).is_integer())
    ):
        zp = 0 if offset is None else int(offset)
        rule = quant.tdequant_scalars_legal(
            DataType[src_dt],
            np.array([_fp32_bits(scale)], np.uint64),
            np.array([zp & 0xFFFFFFFFFFFFFFFF], np.uint64),
        )
        if (
            rule is None
        ):  # fl32((q - zp) * m): q - zp is exact, one rounding as in the reference
            return [e.dequant(q, scale, zp or None)]
    y = e.cvt(q, "FP32")
    if offset is not None:
        y = _apply(e, y, offset, red.RowExpandSubOp, ew.SubsOp)
    return [_apply(e, y, scale, red.RowExpandMulOp, ew.MulsOp)]


def _groups(e: Emit, t: SSAValue) -> list[SSAValue]:
    """The (R, 32) column windows of ``t`` (TEXTRACT; the tile itself for one group)."""
    rows, cols = shape(t)
    if cols == GROUP:
        return [t]
    return [e.extract(t, (0, g), (rows, GROUP)) for g in range(0, cols, GROUP)]


def _columns(e: Emit, t: SSAValue) -> list[SSAValue]:
    rows, cols = shape(t)
    if cols == 1:
        return [t]
    return [e.extract(t, (0, g), (rows, 1)) for g in range(cols)]


#: FP32 bytes per PE of one row block of an MX tile (its group windows are TEXTRACTs,
#: which need their source in one allocation)
MX_BLOCK_BYTES = 32768


def row_blocks(e: Emit, t: SSAValue, fp32_cols: int) -> list[SSAValue]:
    """``t`` cut into row blocks of at most :data:`MX_BLOCK_BYTES` as FP32 (GM views;
    ``t`` itself when it fits)."""
    rows, cols = shape(t)
    per = max(1, MX_BLOCK_BYTES // (4 * fp32_cols))
    if rows <= per:
        return [t]
    w = width(t)
    return [
        e.view(t, dt(t), (min(per, rows - r0), cols), offset=r0 * cols * w)
        for r0 in range(0, rows, per)
    ]


def stack(e: Emit, parts: list[SSAValue]) -> SSAValue:
    """Row blocks stacked back (one view of their bytes one after the other)."""
    if len(parts) == 1:
        return parts[0]
    rows = sum(shape(p)[0] for p in parts)
    return e.view(parts, dt(parts[0]), (rows, shape(parts[0])[1]))


#: bits of FP32 +inf: a magnitude's bits above it are a NaN
_INF_BITS = 0x7F800000
_NAN_BITS = 0x7FC00000
_E8M0_NAN = 0xFF


def _mx_block(e: Emit, x: SSAValue) -> list[SSAValue]:
    """One row block: the reference formula on the FP32 bits, in the integer domain.

    ``|x|`` is the bits with the sign cleared, and for non-negative floats the integer
    order of the bits is the numeric order, so TROWMAX of the U32 magnitudes is the bits
    of amax (or, above 0x7F800000, says the group holds a NaN). Its biased exponent E
    gives ``scale = max(E, 8) - 8`` by integer ops; ``scaling = 2**(127 - scale)`` is the
    exact TRECIP of the E8M0 scale converted back to FP32. Only integer operations, bit
    copies, exact conversions and the element step itself touch the data, so the status
    is exactly the reference's (NV for a signalling NaN, the element step's flags).
    """
    rows, cols = shape(x)
    x = e.cvt(x, "FP32")  # FP16/BF16 widen exactly (a signalling NaN raises NV)
    mag = e.scalar(ew.AndsOp, e.view(x, "U32", (rows, cols)), 0x7FFFFFFF)
    m = e.concat_all([e.reduce(red.RowMaxOp, g) for g in _groups(e, mag)])  # (R, G) bits
    biased = e.scalar(ew.ShrsOp, m, 23)  # E (255 for inf and NaN groups)
    scale = e.scalar(ew.SubsOp, e.scalar(ew.MaxsOp, biased, 8), 8)  # max(E - 8, 0)
    g = shape(m)[1]
    ok = e.cmps(CMode.LE, m, _INF_BITS)  # the group holds no NaN
    scale = e.sels(ok, scale, _E8M0_NAN)
    amax = e.sels(ok, e.view(m, "FP32", (rows, g)), float("nan"))
    scales = e.view(e.cvt(scale, "U8"), "E8M0", (rows, g))
    # 2**(scale - 127) (0xFF: NaN) and its reciprocal 2**(127 - scale): both exact
    scaling = e.unary(ew.RecipOp, e.cvt(scales, "FP32"))
    cols_s = _columns(e, scaling)
    parts = [
        e.expand(red.RowExpandMulOp, gx, c) for gx, c in zip(_groups(e, x), cols_s, strict=True)
    ]
    elements = e.cvt(e.concat_all(parts), "E4M3", RMode.RNE, sat=True)
    return [elements, scales, amax, scaling]


def lower_quantize_mx(e: Emit, op: QuantizeMxOp) -> Sequence[SSAValue]:
    x = e.norm(op.inputs[0])
    blocks = [_mx_block(e, b) for b in row_blocks(e, x, shape(x)[1])]
    return [stack(e, [b[i] for b in blocks]) for i in range(4)]


def _dmx_block(e: Emit, el: SSAValue, sc: SSAValue) -> SSAValue:
    x = e.cvt(el, "FP32")
    s = e.cvt(sc, "FP32")  # 2**(e - 127); 0xFF is NaN
    parts = [
        e.expand(red.RowExpandMulOp, g, c)
        for g, c in zip(_groups(e, x), _columns(e, s), strict=True)
    ]
    return e.concat_all(parts)


def lower_dequantize_mx(e: Emit, op: DequantizeMxOp) -> Sequence[SSAValue]:
    el, sc = e.norm(op.inputs[0]), e.norm(op.inputs[1])
    if dt(el) == "U8":  # raw E4M3 bits: reinterpret through the scratch area
        el = e.view(el, "E4M3", shape(el))
    if dt(sc) == "U8":
        sc = e.view(sc, "E8M0", shape(sc))
    cols = shape(el)[1]
    els, scs = row_blocks(e, el, cols), row_blocks(e, sc, cols)
    if len(els) != len(scs):  # the scales are narrower: cut them like the elements
        per = shape(els[0])[0]
        g = shape(sc)[1]
        scs = [
            e.view(sc, dt(sc), (shape(b)[0], g), offset=i * per * g) for i, b in enumerate(els)
        ]
    return [stack(e, [_dmx_block(e, a, b) for a, b in zip(els, scs, strict=True)])]


LOWERINGS = {
    QuantizeRowsOp: lower_quantize_rows,
    DequantizeRowsOp: lower_dequantize_rows,
    QuantizeMxOp: lower_quantize_mx,
    DequantizeMxOp: lower_dequantize_mx,
}
