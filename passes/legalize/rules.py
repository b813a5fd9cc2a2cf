"""The ``legalize`` rule of every ``tile`` op: which bundle(s) it becomes.

Each rule fixes the catalog operation, its BSTART DataType, LB0..LB2 (REFERENCE 6: what
the dimensions describe differs per family), an explicit B.DATR where the operation
needs one, and the scalar operands (GPR values) in B.IOR slot order.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from types import MappingProxyType
from typing import NamedTuple

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Attribute, Operation, SSAValue

from ptoc.backend.isa import DataType, LegalizeRule
from ptoc.backend.isa import row as optable_row
from ptoc.backend.isa.fields import MODEL_TILE_ELEMENTS
from ptoc.dialects import tile_elementwise as ew
from ptoc.dialects import tile_fill as fill
from ptoc.dialects import tile_irregular as irr
from ptoc.dialects import tile_quant as tq
from ptoc.dialects import tile_reduce as red
from ptoc.dialects.dtypes import DTypeAttr, data_type, dtype_attr
from ptoc.dialects.modes import rmode_code
from ptoc.dialects.pto import IndexAddrOp
from ptoc.dialects.pto_types import DatrAttr, PtoTileType
from ptoc.dialects.tile_base import TileOp
from ptoc.dialects.tile_matmul import only_read_directly
from ptoc.dialects.tile_memory import AccessOp, LoadOp, PrefetchOp, StoreOp
from ptoc.dialects.tile_types import TensorType, TileType

from ..diagnostics import fail
from ..geometry import pow2_ceil, pto_type
from .ctx import LegalizeCtx, Piece, TypeFacts, explicit_dims, low_bits_const, std_dims
from .matmul import matmul as _matmul
from .pieces import Cut, piecewise, whole

Rule = Callable[[LegalizeCtx, Operation], None]


def must_stay_whole(op: Operation) -> bool:
    """Ops with no row-piece form: their tiles are kept in one allocation when they fit."""
    return class_stays_whole(type(op))


def class_stays_whole(cls: type) -> bool:
    """:func:`must_stay_whole` of the ops of class ``cls`` (a fact of the class: its ROW
    and MNEMONIC are class constants)."""
    whole = _WHOLE.get(cls)
    if whole is None:
        if issubclass(cls, red.ReduceOp):
            mnemonic = cls.MNEMONIC
            assert mnemonic is not None
            whole = not cls.ROW and optable_row(mnemonic).arith not in ("max", "min")
        else:
            whole = issubclass(cls, UNSPLITTABLE)
        _WHOLE[cls] = whole
    return whole


#: :func:`must_stay_whole` by op class (asked for every op, twice)
_WHOLE: dict[type, bool] = {}


def _tile(v: SSAValue) -> TileType:
    assert type(v.type) is TileType
    return v.type


def _dt(v: SSAValue) -> DataType:
    t = v._type  # (_tile(v), without the property and the call)
    assert type(t) is TileType
    return data_type(t.dtype)


def _bstart(f: TypeFacts, v: SSAValue) -> DTypeAttr:
    """``dtype_attr(_dt(v))``, the attribute :meth:`LegalizeCtx.emit` makes of ``v``'s
    DataType, from ``f``, the facts of its type (most rules ask once per op)."""
    return f.bstart if f.bstart is not None else dtype_attr(_dt(v))  # (a predicate: raises)


def _mnemonic(op: Operation) -> str:
    # (read from the op rather than after an isinstance test against TileOp: the rules
    # are those of tile ops, and xDSL's op classes make isinstance slow)
    mnemonic: str | None = getattr(op, "MNEMONIC", None)
    assert mnemonic is not None
    return mnemonic


def _result0(op: Operation) -> SSAValue:
    """``op.results[0]`` without xDSL's Python-level item access."""
    return _ITEM(op.results, 0)


def _operand0(op: Operation) -> SSAValue:
    """``op.operands[0]`` without xDSL's Python-level item access (or named accessor)."""
    return _ITEM(op._operands, 0)


#: item access of the tuples under xDSL's value lists
_ITEM = tuple.__getitem__


@cache
def _datr(**fields: int) -> DatrAttr:
    """``DatrAttr(**fields)``, one per set of fields (attributes are immutable, and
    building one takes microseconds: the rules of conversions and compares ask per op)."""
    return DatrAttr(**fields)


def _simple(
    ctx: LegalizeCtx,
    op: Operation,
    *,
    driver: SSAValue,
    dtype: DataType | DTypeAttr | None = None,
    scalars: Callable[[Cut], Sequence[SSAValue]] | None = None,
    datr: DatrAttr | None = None,
    dims_of: str = "result",
) -> None:
    """One bundle per row piece; dims describe the first result (or first source); the
    BSTART DataType is ``dtype``, by default the driver's; ``scalars(cut)`` are the
    bundle's GPR operands (default: none)."""
    df = ctx.facts(driver._type)  # type: ignore[arg-type]  # (a tile: the facts assert it)
    if dtype is None:
        dtype = df.bstart if df.bstart is not None else _bstart(df, driver)
    # (a partial rather than a closure: one object per op instead of a function and the
    # cells of six variables)
    build = partial(_simple_bundle, ctx, op, dtype, scalars, datr, dims_of)
    piecewise(ctx, op, driver, build, df)


def _simple_bundle(
    ctx: LegalizeCtx,
    op: Operation,
    dtype: DataType | DTypeAttr,
    scalars: Callable[[Cut], Sequence[SSAValue]] | None,
    datr: DatrAttr | None,
    dims_of: str,
    cut: Cut,
    srcs: list[SSAValue],
    rtypes: list[PtoTileType],
) -> Sequence[SSAValue]:
    """The bundle of :func:`_simple` for one cut (its ``build``)."""
    if dims_of == "result":
        dims = ctx.std_dims(rtypes[0])
    else:
        st = srcs[0].type
        assert isinstance(st, PtoTileType)
        dims = ctx.std_dims(st)
    gprs = () if scalars is None else scalars(cut)
    new = ctx.emit(_mnemonic(op), dtype, srcs, gprs, dims, datr, rtypes, op)
    return new.results


# --------------------------------------------------------------------------- elementwise


def _elementwise(ctx: LegalizeCtx, op: Operation) -> None:
    r = _result0(op)
    _simple(ctx, op, driver=r)


def _tile_scalar(ctx: LegalizeCtx, op: Operation) -> None:
    r = _result0(op)
    dt = _dt(r)
    runtime = op.runtime if isinstance(op, ew.ScalarOp) else None
    if runtime is not None:  # a scalar parameter: the bundle reads its ABI register
        c = ctx.param(runtime, op)
    else:
        c = ctx.const(low_bits_const(dt, op.bits))  # type: ignore[attr-defined]
    _simple(ctx, op, dtype=dt, driver=r, scalars=lambda cut: [c])


def _compare(ctx: LegalizeCtx, op: Operation) -> None:
    """TCMP/TCMPS. A predicate cannot be cut into other row pieces (TEXTRACT and TMOV
    take numeric tiles), so the rule also registers how to compute it again for the
    pieces of a later op (``pieces.aligned``)."""
    src = op.operands[0]
    code = op.cmode.data.code  # type: ignore[attr-defined]
    datr = _datr(cmode=code) if code else None
    scalars: list[SSAValue] = []
    if isinstance(op, ew.CmpsOp):
        scalars = [ctx.const(low_bits_const(_dt(src), op.bits))]

    def build(cut: Cut, srcs: list[SSAValue], rtypes: list[PtoTileType]) -> Sequence[SSAValue]:
        st = srcs[0].type
        assert isinstance(st, PtoTileType)
        return ctx.emit(_mnemonic(op), _dt(src), srcs, scalars, std_dims(st), datr, rtypes,
                        op).results  # fmt: skip

    piecewise(ctx, op, src, build)
    ctx.remake[op.results[0]] = (op, build)


def _cvt(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, ew.CvtOp)
    datr = _datr(
        dtype=int(_dt(op.result)), rmode=rmode_code(op.rmode), sat=int(op.sat is not None)
    )
    big = max((op.src, op.result), key=lambda v: _tile(v).valid_bytes)
    _simple(ctx, op, dtype=_dt(op.src), driver=big, datr=datr)


def _full(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, ew.FullOp)
    dt = _dt(op.result)
    c = ctx.const(low_bits_const(dt, op.bits))
    _simple(ctx, op, dtype=dt, driver=op.result, scalars=lambda cut: [c])


# --------------------------------------------------------------------------- reduce / expand


def _reduce(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, red.ReduceOp)
    src = _operand0(op)  # (op.src)
    if op.ROW:
        _simple(ctx, op, driver=src, dims_of="source")
        return
    split = len(ctx.pieces[src]) > 1
    if split and _mnemonic(op)[4:] in ("MAX", "MIN"):
        _split_col_reduce(ctx, op)
        return
    if split and pto_type(_tile(op.src)) is None:
        raise fail(
            op,
            f"{_tile(op.src)} exceeds one allocation and {op.name} cannot be split "
            "without changing its fold order",
        )
    # the other column reductions fold every row in order: on one (assembled) tile
    whole(ctx, op, lambda cut, s, r: _reduce_bundle(ctx, op, s, r))


def _reduce_bundle(
    ctx: LegalizeCtx, op: Operation, srcs: list[SSAValue], rtypes: list[PtoTileType]
) -> Sequence[SSAValue]:
    st = srcs[0].type
    assert isinstance(st, PtoTileType)
    return ctx.emit(
        _mnemonic(op), _dt(op.operands[0]), srcs, (), std_dims(st), None, rtypes, op
    ).results


def _split_col_reduce(ctx: LegalizeCtx, op: Operation) -> None:
    """TCOLMAX/TCOLMIN of a split tile: reduce each piece, then fold the partial rows with
    TMAX/TMIN in increasing row order (exact: max/min are associative here, unlike the
    floating sums and products, which a split would reorder)."""
    assert isinstance(op, red.ReduceOp)
    kind = _mnemonic(op)[4:]
    rt = ctx.descriptor(_tile(op.result))
    dt = _dt(op.src)
    acc: SSAValue | None = None
    for p in ctx.pieces[op.src]:
        st = p.value.type
        assert isinstance(st, PtoTileType)
        part = ctx.emit(_mnemonic(op), dt, [p.value], (), std_dims(st), None, [rt], op).results[
            0
        ]
        if acc is None:
            acc = part
        else:
            acc = ctx.emit(
                f"T{kind}", dt, [acc, part], (), std_dims(rt), None, [rt], op
            ).results[0]
    assert acc is not None
    ctx.pieces[op.result] = [Piece(acc, 0, 1)]


def _expand(ctx: LegalizeCtx, op: Operation) -> None:
    r = _result0(op)
    _simple(ctx, op, driver=r)


def _expand_copy(ctx: LegalizeCtx, op: Operation) -> None:
    r = _result0(op)
    _simple(ctx, op, driver=r)


def _expdif(ctx: LegalizeCtx, op: Operation) -> None:
    src, res = op.operands[0], op.results[0]
    datr = _datr(dtype=int(_dt(res))) if _dt(res) != _dt(src) else None
    _simple(ctx, op, dtype=_dt(src), driver=src, datr=datr)


# --------------------------------------------------------------------------- irregular


def _whole_simple(
    ctx: LegalizeCtx,
    op: Operation,
    dtype: DataType,
    scalars: Sequence[SSAValue] = (),
    dims: str = "result",
    datr: DatrAttr | None = None) -> None:  # fmt: skip
    def build(cut: Cut, srcs: list[SSAValue], rtypes: list[PtoTileType]) -> Sequence[SSAValue]:
        d: tuple[int | None, ...] = (None, None, None)
        if dims == "result":
            d = std_dims(rtypes[0])
        elif dims == "explicit":
            d = explicit_dims(rtypes[0])
        return ctx.emit(_mnemonic(op), dtype, srcs, scalars, d, datr, rtypes, op).results

    whole(ctx, op, build)


UNSPLITTABLE: tuple[type[Operation], ...] = (
    irr.TransOp,
    irr.ConcatOp,
    irr.GatherOp,
    irr.ScatterOp,
    *irr.PART_OPS,
    irr.ExtractOp,
    irr.MrgSortOp,
    irr.CiOp,
    fill.InsertOp,
    fill.FillPadOp,
    fill.HistogramOp,
)


def _layout(ctx: LegalizeCtx, op: Operation) -> None:
    _whole_simple(ctx, op, _dt(op.operands[0]))


# TCONCAT and TEXTRACT take omitted LB1/LB2 from their first source (the ASL's generic
# destination-shape path), not the standard 1 / ValidCol defaults: encode all three.
def _concat(ctx: LegalizeCtx, op: Operation) -> None:
    _whole_simple(ctx, op, _dt(op.operands[0]), dims="explicit")


def _extract(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, irr.ExtractOp)
    r, c = op.offset
    _whole_simple(ctx, op, _dt(op.src), [ctx.const(r), ctx.const(c)], dims="explicit")


def _flag(ctx: LegalizeCtx, on: bool) -> list[SSAValue]:
    """B.IOR RegSrc0 = 1 selects descending; omitted B.IOR selects ascending."""
    return [ctx.const(1)] if on else []


def _insert(ctx: LegalizeCtx, op: Operation) -> None:
    """TINSERT: ``B.IOT OldDst, Src, last, ->Dst``; RegSrc0/1 = row/column offset."""
    assert isinstance(op, fill.InsertOp)
    r, c = op.offset
    _whole_simple(ctx, op, _dt(op.old), [ctx.const(r), ctx.const(c)])


def _fillpad(ctx: LegalizeCtx, op: Operation) -> None:
    """TFILLPAD: RegSrc0 = the padding scalar's raw bits (omitted: 0).

    ``TileOperandsLegal_TFILLPAD`` needs the destination's physical Rows and Col to be at
    least the source's; an omitted LB1/LB2 inherits the source's ValidRow/Col (the generic
    destination-shape path), so all three dimensions are encoded. A wider destination can
    have fewer physical rows than its source (the 128-byte minimum allocation pads a
    narrow source with rows): the source is then first re-laid at the destination's Col by
    TEXTRACT (which has no physical-shape rule), whose rows never exceed the destination's.
    """
    assert isinstance(op, fill.FillPadOp)
    dt = _dt(op.result)
    bits = low_bits_const(dt, op.bits)
    scalars = [ctx.const(bits)] if bits else []

    def build(cut: Cut, srcs: list[SSAValue], rtypes: list[PtoTileType]) -> Sequence[SSAValue]:
        (src,), (rt,) = srcs, rtypes
        st = src.type
        assert isinstance(st, PtoTileType)
        if st.rows > rt.rows or st.cols.data > rt.cols.data:
            a, r = _tile(op.operands[0]), _tile(op.result)
            relaid = ctx.descriptor(TileType(a.dtype, (a.extent[0], r.extent[1]), a.valid))
            assert relaid.rows <= rt.rows and relaid.cols.data == rt.cols.data, (relaid, rt)
            src = ctx.emit(
                irr.ExtractOp.MNEMONIC, dt, [src], [], explicit_dims(relaid), None, [relaid], op
            ).results[0]
        return ctx.emit(_mnemonic(op), dt, [src], scalars, explicit_dims(rt), None, [rt],
                        op).results  # fmt: skip

    whole(ctx, op, build)


def _histogram(ctx: LegalizeCtx, op: Operation) -> None:
    """THISTOGRAM: no B.DIM; mandatory B.DATR with DataType U32 and the ByteId."""
    assert isinstance(op, fill.HistogramOp)
    datr = _datr(dtype=int(DataType.U32), pad=op.byte.value.data)
    _whole_simple(ctx, op, _dt(op.src), dims="none", datr=datr)


def _sort(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, irr.SortOp)
    width = op.width.value.data
    scalars = _flag(ctx, op.descending is not None)

    def build(cut: Cut, srcs: list[SSAValue], rtypes: list[PtoTileType]) -> Sequence[SSAValue]:
        return ctx.emit(_mnemonic(op), _dt(op.src), srcs, scalars, (width, None, None),
                        None, rtypes, op).results  # fmt: skip

    piecewise(ctx, op, op.src, build)


def _mrgsort(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, irr.MrgSortOp)
    _whole_simple(ctx, op, _dt(op.lhs), _flag(ctx, op.descending is not None), dims="none")


def _ci(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, irr.CiOp)
    dt = _dt(op.result)
    scalars: list[SSAValue] = []
    start = op.start.value.data
    if start or op.descending is not None:
        scalars = [ctx.const(low_bits_const(dt, start & ((1 << 64) - 1)))]
        scalars += _flag(ctx, op.descending is not None)
    _whole_simple(ctx, op, dt, scalars)


def _tri(ctx: LegalizeCtx, op: Operation) -> None:
    """TTRI per row piece: a piece starting at row ``r0`` uses diagonal ``d + r0``."""
    assert isinstance(op, irr.TriOp)
    d, upper = op.diagonal.value.data, op.upper is not None

    def scalars(cut: Cut) -> list[SSAValue]:
        diag = d + cut.row0
        if not diag and not upper:
            return []
        return [ctx.const(diag), *_flag(ctx, upper)] if upper else [ctx.const(diag)]

    _simple(ctx, op, dtype=_dt(op.result), driver=op.result, scalars=scalars)


def _quant(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, tq.QuantBase)
    src, res = op.src, op.result
    datr = _datr(dtype=int(_dt(res)), rmode=rmode_code(op.rmode), sat=int(op.sat is not None))
    scalars: list[SSAValue] = []
    if op.has_scalars:
        scalars = [ctx.const(op.multiplier_bits), ctx.const(op.zero_point_raw)]
    big = max((src, res), key=lambda v: _tile(v).valid_bytes)
    _simple(ctx, op, dtype=_dt(src), driver=big, scalars=lambda cut: scalars, datr=datr)


# --------------------------------------------------------------------------- memory


def _gm_scalars(ctx: LegalizeCtx, op: AccessOp) -> Callable[[Cut], list[SSAValue]]:
    """The scalars of ``op``'s bundle for a cut: B.IOR RegSrc0 = the piece's GM address,
    RegSrc1 = the byte row stride (omitted for a single row: an explicit zero register
    there would alias every row). The op's window is read once, for all its cuts."""
    tensor = _ITEM(op._operands, op.TENSOR_INDEX)  # (op.tensor, without item access)
    tt = tensor.type
    assert isinstance(tt, TensorType)
    row_bytes = tt.row_stride_bytes
    eb = row_bytes // tt.stride
    (r0, c0), (pr, pc) = origin_and_pe(op)
    window = _Window(tensor, tt, row_bytes, eb, r0, c0, pr, pc, op.row_step, op.dynamic_axes)
    # (a partial rather than a closure: one object per op instead of a function and the
    # cells of a dozen variables)
    return partial(_window_scalars, ctx, op, window)


def origin_and_pe(op: AccessOp) -> tuple[tuple[int, int], tuple[int, int]]:
    """``(op.origin, op.pe_offsets)``, each unpacked from its property's bytes at once
    when it is a pair of ``i64`` (what the access ops' builders make: xDSL's
    ``get_values`` builds the struct format through several Python calls per array, for
    every load and store); otherwise (IR from elsewhere) read through the properties.
    ``tests/passes/test_legalize_pieces.py`` pins that both agree."""
    props = op.properties
    origin = _i64_pair(props["offsets"])
    pe = props.get("pe")
    pe_offsets = (0, 0) if pe is None else _i64_pair(pe)
    if origin is None or pe_offsets is None:
        return op.origin, op.pe_offsets
    return origin, pe_offsets


def _i64_pair(attr: Attribute) -> tuple[int, int] | None:
    """The two values of a dense array of ``i64`` (None for any other attribute)."""
    if type(attr) is not DenseArrayBase or attr.elt_type is not i64:
        return None
    raw = attr.data.data
    return _PAIR.unpack(raw) if len(raw) == _PAIR.size else None  # type: ignore[return-value]


#: two ``i64`` as xDSL packs them in a dense array (``IntegerType.format`` of 64 bits)
_PAIR = struct.Struct("<2q")


class _Window(NamedTuple):
    """What :func:`_gm_scalars` reads of an access op's window: the tensor and its type,
    its row stride and element size in bytes, the window's first row and column, the
    offsets of each further PE's window, the row step and the axes whose start adds a
    run-time index."""

    tensor: SSAValue
    tt: TensorType
    row_bytes: int
    eb: int
    r0: int
    c0: int
    pr: int
    pc: int
    step: int
    axes: tuple[int, ...]


def _window_scalars(
    ctx: LegalizeCtx, op: AccessOp, window: _Window, cut: Cut
) -> list[SSAValue]:
    """The scalars of :func:`_gm_scalars` for one cut."""
    tensor, tt, row_bytes, eb, r0, c0, pr, pc, step, axes = window
    pe_step = pr * row_bytes + pc * eb
    row = r0 + cut.row0 * step
    out = [ctx.addr(tensor, row * row_bytes + c0 * eb, pe_step)]
    if axes:  # run-time row / column starts move the address
        scale = {0: row_bytes, 1: eb}
        terms = [(ctx.scalar(v), scale[a]) for a, v in zip(axes, op.indices)]
        # the index range that keeps every PE's window (of this row piece) in the tensor
        rows, cols = tt.dims
        last = ctx.pes - 1
        vc = op.tile.valid[1]
        span = {
            0: (row, rows - 1 - row - (cut.rows - 1) * step - last * pr),
            1: (c0, cols - 1 - c0 - (vc - 1) - last * pc),
        }
        bounds = [(-span[a][0], span[a][1]) for a in axes]
        fn = "pt.store" if isinstance(op, StoreOp) else "pt.load"
        name = tensor.name_hint or "?"
        what = f"the {cut.rows}x{vc} window of {fn} in the {rows}x{cols} tensor '{name}'"
        moved = IndexAddrOp(out[0], terms, bounds, axes, what)
        moved.location = op.location
        ctx.block.add_op(moved)
        out[0] = moved.result
    if cut.rows > 1:
        out.append(ctx.const(row_bytes * step))
    return out


def _load(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, LoadOp)
    r = _result0(op)  # (op.result)
    if ctx.matmuls and only_read_directly(r):  # (no matmul reads it otherwise)
        return  # the CUBE loads of the matmuls read its window from the tensor
    _simple(ctx, op, driver=r, scalars=_gm_scalars(ctx, op))


def _store(ctx: LegalizeCtx, op: Operation) -> None:
    assert isinstance(op, StoreOp)
    if ctx.absorbed and op in ctx.absorbed:  # (an op hashes in Python: asked if any)
        return  # the matmul computing the value stored its blocks here already
    scalars = _gm_scalars(ctx, op)
    value = _operand0(op)  # (op.value)
    df = ctx.facts(value._type)  # type: ignore[arg-type]  # (a tile: the facts assert it)
    dt = _bstart(df, value)

    def build(cut: Cut, srcs: list[SSAValue], rtypes: list[PtoTileType]) -> Sequence[SSAValue]:
        ctx.emit(_mnemonic(op), dt, srcs, scalars(cut), source=op)
        return ()

    piecewise(ctx, op, value, build, df)


def _prefetch(ctx: LegalizeCtx, op: Operation) -> None:
    """TPREFETCH blocks of at most ``MODEL_TILE_ELEMENTS`` elements of the window per PE:
    B.DIM ValidCol, ValidRow and Col (the power of two above ValidCol), B.IOR RegSrc0 the
    block's GM address and RegSrc1 the row stride in elements (omitted for one row)."""
    assert isinstance(op, PrefetchOp)
    tt = op.tensor.type
    assert isinstance(tt, TensorType)
    eb = tt.row_stride_bytes // tt.stride
    rows, cols = op.tile.valid
    (r0, c0), (pr, pc) = op.origin, op.pe_offsets
    pe_step = pr * tt.row_stride_bytes + pc * eb
    for c in range(0, cols, MODEL_TILE_ELEMENTS):
        nc = min(MODEL_TILE_ELEMENTS, cols - c)
        per = MODEL_TILE_ELEMENTS // nc
        for r in range(0, rows, per):
            nr = min(per, rows - r)
            offset = (r0 + r * op.row_step) * tt.row_stride_bytes + (c0 + c) * eb
            scalars = [ctx.addr(op.tensor, offset, pe_step)]
            if nr > 1:
                scalars.append(ctx.const(tt.stride * op.row_step))
            dims = (nc, nr, pow2_ceil(nc))
            ctx.emit(_mnemonic(op), op.tile.dtype, [], scalars, dims, source=op)


#: the rule of every :class:`LegalizeRule`; a ``tile`` op's rule is the one its operation
#: table row names (:func:`rule_of`)
RULES: Mapping[LegalizeRule, Rule] = MappingProxyType(
    {
        LegalizeRule.ELEMENTWISE: _elementwise,
        LegalizeRule.TILE_SCALAR: _tile_scalar,
        LegalizeRule.COMPARE: _compare,
        LegalizeRule.CVT: _cvt,
        LegalizeRule.FULL: _full,
        LegalizeRule.REDUCE: _reduce,
        LegalizeRule.EXPAND: _expand,
        LegalizeRule.EXPAND_COPY: _expand_copy,
        LegalizeRule.EXPDIF: _expdif,
        LegalizeRule.LAYOUT: _layout,
        LegalizeRule.CONCAT: _concat,
        LegalizeRule.EXTRACT: _extract,
        LegalizeRule.INSERT: _insert,
        LegalizeRule.FILLPAD: _fillpad,
        LegalizeRule.HISTOGRAM: _histogram,
        LegalizeRule.SORT: _sort,
        LegalizeRule.MRGSORT: _mrgsort,
        LegalizeRule.CI: _ci,
        LegalizeRule.TRI: _tri,
        LegalizeRule.QUANT: _quant,
        LegalizeRule.LOAD: _load,
        LegalizeRule.STORE: _store,
        LegalizeRule.PREFETCH: _prefetch,
        LegalizeRule.MATMUL: _matmul,
    }
)


def rule_of(op: Operation) -> Rule | None:
    """The legalize rule of a direct ``tile`` op, read from its operation-table row (None
    for any other op)."""
    if not isinstance(op, TileOp) or op.MNEMONIC is None:
        return None
    kind = optable_row(op.MNEMONIC).legalize
    return None if kind is None else RULES[kind]
