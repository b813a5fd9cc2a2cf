"""Lowerings of the quantization interfaces (``docs/compound.md`` §10-13).

* ``quantize_rows``: ``x*s`` (TROWEXPANDMUL, or TMULS for a scalar), ``+o``
  (TROWEXPANDADD / TADDS), then TQUANT with multiplier 1.0 and zero point 0 (RNE, Sat):
  pto-isa's two FP32 roundings. A scalar scale is a TMULS too: TQUANT's own multiplier
  would round the exact ``x * m`` once (D10), not ``fl32(x * m)``.
* ``dequantize_rows``: TCVT to FP32 (exact), ``-o`` (TROWEXPANDSUB / TSUBS), ``*s``
  (TROWEXPANDMUL / TMULS). A scalar positive scale with an integer offset on S8/U8 is
  one TDEQUANT (``q - zp`` is exact, so one rounding remains either way).
* ``quantize_mx``: per 32-column group TROWMAX/TROWSUM of ``|x|``; the shared exponent
  from TCVT to E8M0 with RTZ (the biased exponent of the group maximum) and back to FP32,
  selects for the tiny (scale 0), infinite (scale 247) and NaN groups, TRECIP for the
  scaling, TROWEXPANDMUL and a saturating TCVT to E4M3 for the elements. No view: the
  groups are TEXTRACT column windows.
* ``dequantize_mx``: TCVT E4M3 and E8M0 to FP32 (exact; E8M0 0xFF is NaN) and one
  TROWEXPANDMUL per group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import quant
from ptoc.dialects.compound_ops.quant import (
    AffineRowsOp,
    DequantizeMxOp,
    DequantizeRowsOp,
    QuantizeMxOp,
    QuantizeRowsOp,
)
from ptoc.dialects.modes import CMode, RMode
from ptoc.dialects.tile_base import scalar_bits

from .lower_compound_build import Emit, dt, shape, width

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


def _apply(e: Emit, x: SSAValue, p: SSAValue | float, tile_op: str, scalar_op: str) -> SSAValue:
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
    y = _apply(e, x, scale, "TROWEXPANDMUL", "TMULS")
    if offset is not None:
        y = _apply(e, y, offset, "TROWEXPANDADD", "TADDS")
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
        y = _apply(e, y, offset, "TROWEXPANDSUB", "TSUBS")
    return [_apply(e, y, scale, "TROWEXPANDMUL", "TMULS")]


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


def _mx_block(e: Emit, x: SSAValue) -> list[SSAValue]:
    x = e.cvt(x, "FP32")  # FP16/BF16 widen exactly
    a = e.unary("TABS", x)
    ga = _groups(e, a)
    amax0 = e.concat_all([e.reduce("TROWMAX", g) for g in ga])  # (R, G); NaN dropped
    total = e.concat_all([e.reduce("TROWSUM", g) for g in ga])  # NaN iff a NaN in the group
    ok = e.cmp(CMode.EQ, total, total)  # the group holds no NaN
    # 2**(E - 127) for the biased exponent E of amax: E8M0 with RTZ keeps the exponent
    p = e.cvt(e.cvt(amax0, "E8M0", RMode.RTZ), "FP32")
    v = e.scalar("TMULS", p, 2.0**-8)  # 2**(scale - 127), scale = E - 8
    v = e.sels(e.cmps(CMode.GE, amax0, 2.0**-119), v, 2.0**-127)  # E < 8: scale 0
    v = e.sels(e.cmps(CMode.LT, amax0, float("inf")), v, 2.0**120)  # E = 255: scale 247
    v = e.sels(ok, v, float("nan"))  # NaN group: E8M0 NaN, NaN scaling
    scaling = e.unary("TRECIP", v)  # 2**(127 - scale), exact
    scales = e.cvt(v, "E8M0")
    amax = e.sels(ok, amax0, float("nan"))
    cols = _columns(e, scaling)
    parts = [e.expand("TROWEXPANDMUL", g, s) for g, s in zip(_groups(e, x), cols, strict=True)]
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
        e.expand("TROWEXPANDMUL", g, c)
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
