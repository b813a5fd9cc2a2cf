"""Lowering of ``tile.partial`` (``docs/compound.md`` §14) and ``tile.transpose``.

``tile.partial``: when one source covers the destination and the catalog gives TPART<op>
the DataType, it is that one seed TPART bundle. Otherwise the destination is built in
row bands between the sources' row counts: in a band both sources cover, TPART<op> of the
two band slices (the wider covers the narrower, so the seed rule holds), else a TEXTRACT
of the one covering source, else nothing; TEXPANDS pad columns complete the band (TCONCAT).
Bands are stacked by transposing, concatenating and transposing back. Copies are
TEXTRACT/TCONCAT/TTRANS, which move bits, so a NaN or -0 covered by one source survives
(pto-isa's ``TPARTMAX(TPARTMAX(pad, a), b)`` would turn a covered NaN into the pad).
TPARTMUL has no 8-bit types and neither has TMUL: there the overlap is TCVT to 16 bits,
TMUL, TCVT back without saturation (the low 8 bits: the wrapped 8-bit product).

``tile.transpose``: the seed TTRANS; the scratch tile is dropped; a result DataType of the
same width is a view of the transposed tile.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from xdsl.ir import SSAValue

from ptoc.backend.isa import DataType
from ptoc.backend.isa import op as catalog_op
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects.compound_ops.gather import TransposeOp
from ptoc.dialects.compound_ops.partial import PartialOp
from ptoc.dialects.tile_base import Number

from .build import Emit, by_arith, dt, shape

_WIDE = {"S8": "S16", "U8": "U16"}


def _part_legal(kind: str, dtype: str) -> bool:
    return DataType[dtype] in catalog_op(by_arith(irr.PART_OPS, kind).MNEMONIC).dtypes


def _combine(e: Emit, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
    """The typed op of two equal-shape tiles (TADD/TMUL/TMAX/TMIN; 8-bit TMUL widened)."""
    d = dt(a)
    op = by_arith(ew.BINARY_OPS, kind)
    if DataType[d] in catalog_op(op.MNEMONIC).dtypes:
        return e.binary(op, a, b)
    wide = _WIDE[d]  # only 8-bit TMUL lacks a selector
    prod = e.binary(op, e.cvt(a, wide), e.cvt(b, wide))
    return e.cvt(prod, d, sat=False)


def _band_both(e: Emit, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
    """Two band slices of equal rows: op where both cover, the wider one's bits after."""
    (h, ca), (_, cb) = shape(a), shape(b)
    if _part_legal(kind, dt(a)):
        return e.part(kind, a, b)
    c = min(ca, cb)
    both = _combine(e, kind, e.extract(a, (0, 0), (h, c)), e.extract(b, (0, 0), (h, c)))
    wider = a if ca > cb else b
    if max(ca, cb) == c:
        return both
    return e.concat(both, e.extract(wider, (0, c), (h, max(ca, cb) - c)))


def _pad_cols(e: Emit, band: SSAValue, cols: int, pad: Number) -> SSAValue:
    h, c = shape(band)
    if c == cols:
        return band
    return e.concat(band, e.full(pad, dt(band), (h, cols - c)))


def embed_bands(
    e: Emit,
    kind: str,
    a: SSAValue | None,
    b: SSAValue | None,
    dst: tuple[int, int],
    dtype: str,
    pad: Number,
) -> SSAValue:
    """The destination built band by band (see the module docstring)."""
    rows, cols = dst
    srcs = [s for s in (a, b) if s is not None]
    cuts = sorted({0, rows, *(shape(s)[0] for s in srcs)})
    bands: list[SSAValue] = []
    for r0, r1 in pairwise(cuts):
        h = r1 - r0
        cover = [s for s in srcs if shape(s)[0] >= r1]
        slices = [e.extract(s, (r0, 0), (h, shape(s)[1])) for s in cover]
        if len(slices) == 2:
            band = _band_both(e, kind, slices[0], slices[1])
        elif slices:
            band = slices[0]
        else:
            bands.append(e.full(pad, dtype, (h, cols)))
            continue
        bands.append(_pad_cols(e, band, cols, pad))
    if len(bands) == 1:
        return bands[0]
    return e.trans(e.concat_all([e.trans(x) for x in bands]))


def lower_partial(e: Emit, op: PartialOp) -> Sequence[SSAValue]:
    dst = shape(op.outs[0])
    dtype = dt(op.outs[0])
    a = None if op.lhs is None else e.norm(op.lhs)
    b = None if op.rhs is None else e.norm(op.rhs)
    kind = op.op_kind
    covered = a is not None and b is not None and dst in (shape(a), shape(b))
    if covered and _part_legal(kind, dtype):
        assert a is not None and b is not None
        return [e.part(kind, a, b)]
    return [embed_bands(e, kind, a, b, dst, dtype, op.pad_value)]


def lower_transpose(e: Emit, op: TransposeOp) -> Sequence[SSAValue]:
    t = e.trans(e.norm(op.inputs[0]))
    want = dt(op.outs[0])
    return [t if dt(t) == want else e.view(t, want, shape(t))]


LOWERINGS = {PartialOp: lower_partial, TransposeOp: lower_transpose}
