"""What the operation table states about each operation (everything not in the catalog).

One :func:`_add` per operation, grouped by family. A *group* is the triple (executor
preparer, ``tile`` family, legalize rule) its members share. Operand lists name the
catalog's sources and destinations in binding order; :mod:`.optable` checks their counts
against the catalog when it builds the rows.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import catalog
from .optable_types import (
    Access,
    Axis,
    OperandKind,
    TileOperand,
)
from .semantics import elementwise as _ew
from .semantics import expand as _sx
from .semantics import generate as _sg
from .semantics import indexed as _si
from .semantics import layout as _sl
from .semantics import matmul as _mm
from .semantics import partial as _sp
from .semantics import quant as _sq
from .semantics import reduce as _sr
from .semantics import scalar as _ss
from .semantics import sorting as _so

# ------------------------------------------------- implementation keys
# Each floor keys its registry by one of these (``runtime.ops.PREPARERS``,
# ``dialects.tile``'s family base classes, ``passes.legalize.rules.RULES``); they live
# beside the rows so that an operation of a new shape names its keys where it is added.


class Executor(enum.StrEnum):
    """Which executor preparer (``runtime/ops``) runs the operation."""

    BINARY = "binary"
    UNARY = "unary"
    FMA = "fma"
    CMP = "cmp"
    SEL = "sel"
    CVT = "cvt"
    TILE_SCALAR = "tile_scalar"
    CMPS = "cmps"
    SELS = "sels"
    EXPANDS = "expands"
    REDUCTION = "reduction"
    EXPANSION = "expansion"
    CONCAT = "concat"
    EXTRACT = "extract"
    INSERT = "insert"
    IMG2COL = "img2col"
    FILLPAD = "fillpad"
    GENERATION = "generation"
    HISTOGRAM = "histogram"
    QUANTIZE = "quantize"
    SORT = "sort"
    MRGSORT = "mrgsort"
    TRANS = "trans"
    GATHER = "gather"
    SCATTER = "scatter"
    PART = "part"
    LOAD = "load"
    STORE = "store"
    MOV = "mov"
    PREFETCH = "prefetch"
    MATMUL = "matmul"


class TileFamily(enum.StrEnum):
    """Which ``tile`` dialect op family models the operation.

    The value is the name of the family's base class in ``dialects/tile_*.py`` (the class
    that derives from ``TileOp`` directly), so the dialect can be checked against it.
    """

    BINARY = "BinaryOp"
    UNARY = "UnaryOp"
    SCALAR = "ScalarOp"
    FMA = "FmaOp"
    CVT = "CvtOp"
    CMP = "CmpOp"
    CMPS = "CmpsOp"
    SEL = "SelOp"
    SELS = "SelsOp"
    FULL = "FullOp"
    REDUCE = "ReduceOp"
    EXPAND_BINARY = "ExpandBinaryOp"
    EXPAND_COPY = "ExpandCopyOp"
    EXPDIF = "ExpdifOp"
    INSERT = "InsertOp"
    FILLPAD = "FillPadOp"
    HISTOGRAM = "HistogramOp"
    TRANS = "TransOp"
    CONCAT = "ConcatOp"
    EXTRACT = "ExtractOp"
    SORT = "SortOp"
    MRGSORT = "MrgSortOp"
    GATHER = "GatherOp"
    SCATTER = "ScatterOp"
    PART = "PartOp"
    CI = "CiOp"
    TRI = "TriOp"
    QUANT = "QuantBase"
    ACCESS = "AccessOp"
    MATMUL = "MatmulOp"


class LegalizeRule(enum.StrEnum):
    """Which legalize rule lowers the operation (the value names the rule function)."""

    ELEMENTWISE = "elementwise"
    TILE_SCALAR = "tile_scalar"
    COMPARE = "compare"
    CVT = "cvt"
    FULL = "full"
    REDUCE = "reduce"
    EXPAND = "expand"
    EXPAND_COPY = "expand_copy"
    EXPDIF = "expdif"
    LAYOUT = "layout"
    CONCAT = "concat"
    EXTRACT = "extract"
    INSERT = "insert"
    FILLPAD = "fillpad"
    HISTOGRAM = "histogram"
    SORT = "sort"
    MRGSORT = "mrgsort"
    CI = "ci"
    TRI = "tri"
    QUANT = "quant"
    LOAD = "load"
    STORE = "store"
    PREFETCH = "prefetch"
    MATMUL = "matmul"


E, F, L = Executor, TileFamily, LegalizeRule
_V, _P, _I, _M = OperandKind.VALUE, OperandKind.PREDICATE, OperandKind.INDEX, OperandKind.MASK

#: a B.IOT grouping: one B.IOT holding every operand (at most two sources, one dst)
SINGLE = "single"
#: any grouping that binds the catalog's counts
FREE = "free"
#: ``B.IOT a, b`` then ``B.IOT c, <last>, ->Dst``
SPLIT_THIRD = ((2, False), (1, True))

Group = tuple[Executor | None, TileFamily | None, LegalizeRule | None]


def _r(name: str, kind: OperandKind = _V) -> TileOperand:
    return TileOperand(name, Access.READ, kind)


def _rw(name: str, kind: OperandKind = _V) -> TileOperand:
    return TileOperand(name, Access.READ_WRITE, kind)


def _w(name: str = "dst", kind: OperandKind = _V) -> TileOperand:
    return TileOperand(name, Access.WRITE, kind)


@dataclass(frozen=True)
class Spec:
    """The table's own facts about one operation (see :class:`.optable_types.OpRow`)."""

    group: Group
    sources: tuple[TileOperand, ...]
    destinations: tuple[TileOperand, ...]
    semantics: Callable[..., Any] | None = None
    lang: str | None = None
    arith: str | None = None
    axis: Axis | None = None
    #: SINGLE, FREE or an explicit grouping
    iots: tuple[tuple[int, bool], ...] | str = SINGLE


SPECS: dict[str, Spec] = {}
_DST = (_w(),)


def _add(mnemonic: str, group: Group, *sources: TileOperand,
         dst: tuple[TileOperand, ...] = _DST, **kw: Any) -> None:  # fmt: skip
    if mnemonic in SPECS:
        raise ValueError(f"{mnemonic} specified twice")
    SPECS[mnemonic] = Spec(group, tuple(sources), dst, **kw)


# ------------------------------------------------ elementwise tile-tile (TEPL Mode 0)
#: mnemonic -> (:func:`.semantics.core.binary` op, ``lang`` name)
_BINARY = {
    "TADD": ("add", "add"), "TSUB": ("sub", "sub"), "TMUL": ("mul", "mul"),
    "TDIV": ("div", "div"), "TREM": ("rem", "rem"), "TAND": ("and", "bitwise_and"),
    "TOR": ("or", "bitwise_or"), "TXOR": ("xor", "bitwise_xor"), "TSHL": ("shl", "shl"),
    "TSHR": ("shr", "shr"), "TMAX": ("max", "maximum"), "TMIN": ("min", "minimum"),
}  # fmt: skip
#: mnemonic -> (:func:`.semantics.core.unary` op, ``lang`` name)
_UNARY = {
    "TABS": ("abs", "abs"), "TNOT": ("not", "bitwise_not"), "TNEG": ("neg", "neg"),
    "TEXP": ("exp", "exp"), "TLOG": ("log", "log"), "TRECIP": ("recip", "recip"),
    "TSQRT": ("sqrt", "sqrt"), "TRSQRT": ("rsqrt", "rsqrt"), "TRELU": ("relu", "relu"),
}  # fmt: skip
for _m, (_k, _lang) in _BINARY.items():
    _add(_m, (E.BINARY, F.BINARY, L.ELEMENTWISE), _r("lhs"), _r("rhs"),
         semantics=_ew.binary_semantics(_k), lang=_lang, arith=_k)  # fmt: skip
for _m, (_k, _lang) in _UNARY.items():
    _add(_m, (E.UNARY, F.UNARY, L.ELEMENTWISE), _r("src"), semantics=_ew.unary_semantics(_k),
         lang=_lang, arith=_k)  # fmt: skip
_add("TCMP", (E.CMP, F.CMP, L.COMPARE), _r("lhs"), _r("rhs"), dst=(_w("dst", _P),),
     semantics=_ew.tcmp)  # fmt: skip
_add("TSEL", (E.SEL, F.SEL, L.ELEMENTWISE), _r("pred", _P), _r("on_true"), _r("on_false"),
     semantics=_ew.tsel, lang="where", iots=SPLIT_THIRD)  # fmt: skip
_add("TCVT", (E.CVT, F.CVT, L.CVT), _r("src"), semantics=_ew.tcvt, lang="cast")
_add("TFMA", (E.FMA, F.FMA, L.ELEMENTWISE), _r("lhs"), _r("rhs"), _r("addend"),
     semantics=_ew.tfma, lang="fma", iots=SPLIT_THIRD)  # fmt: skip

# ------------------------------------------------ tile-scalar (TEPL Mode 1)
# (``pt.add`` and friends broadcast a scalar operand onto these)
for _m, (_k, _) in _BINARY.items():  # TADD -> TADDS, with the same op
    _add(_m + "S", (E.TILE_SCALAR, F.SCALAR, L.TILE_SCALAR), _r("src"),
         semantics=_ss.scalar_semantics(_m + "S", _k), arith=_k)  # fmt: skip
_add("TCMPS", (E.CMPS, F.CMPS, L.COMPARE), _r("src"), dst=(_w("dst", _P),),
     semantics=_ss.tcmps)  # fmt: skip
_add("TSELS", (E.SELS, F.SELS, L.TILE_SCALAR), _r("pred", _P), _r("on_true"),
     semantics=_ss.tsels)  # fmt: skip
_add("TEXPANDS", (E.EXPANDS, F.FULL, L.FULL), semantics=_ss.texpands, lang="full")

# ------------------------------------------------ reductions and expansions (TEPL Mode 2)
# value reductions: fn(dt, a); ARG reductions: fn(dt, a, index_dt)
_REDUCE: tuple[tuple[Axis, Callable[..., Any], Callable[..., Any]], ...] = (
    (Axis.ROW, _sr.row_reduce, _sr.row_arg),
    (Axis.COL, _sr.col_reduce, _sr.col_arg),
)
for _axis, _value, _arg in _REDUCE:
    for _k in (*_sr.REDUCE_OPS, *_sr.ARG_OPS):
        _is_arg = _k in _sr.ARG_OPS
        _add(f"T{_axis.name}{_k.upper()}", (E.REDUCTION, F.REDUCE, L.REDUCE), _r("src"),
             dst=(_w("dst", _I if _is_arg else _V),),
             semantics=partial(_arg if _is_arg else _value, _k),
             lang=f"{_axis.value}_{_k}", arith=_k, axis=_axis)  # fmt: skip
# (``lang``: ``broadcast_to`` and ``exp_diff`` pick the axis; operators the binary forms)
# copy and binary forms: fn(dt, src, bcast, shape=None) (src None for the copies);
# EXPDIF: fn(src_dt, dst_dt, src, bcast)
_Fn = Callable[..., Any]
_EXPAND: tuple[tuple[Axis, _Fn, _Fn, str | None, str | None], ...] = (
    (Axis.ROW, _sx.row_expand, _sx.row_expand_expdif, "broadcast_to", "exp_diff"),
    (Axis.COL, _sx.col_expand, _sx.col_expand_expdif, None, None),
)
for _axis, _expand, _expdif, _copy_lang, _expdif_lang in _EXPAND:
    _m = f"T{_axis.name}EXPAND"
    _add(_m, (E.EXPANSION, F.EXPAND_COPY, L.EXPAND_COPY), _r("bcast"),
         semantics=partial(_expand, None), lang=_copy_lang, axis=_axis)  # fmt: skip
    for _k in _sx.EXPAND_OPS:
        _add(_m + _k.upper(), (E.EXPANSION, F.EXPAND_BINARY, L.EXPAND), _r("src"),
             _r("bcast"), semantics=partial(_expand, _k), arith=_k, axis=_axis)  # fmt: skip
    _add(_m + "EXPDIF", (E.EXPANSION, F.EXPDIF, L.EXPDIF), _r("src"), _r("bcast"),
         semantics=_expdif, lang=_expdif_lang, arith="expdif", axis=_axis)  # fmt: skip

# ------------------------------------------------ layout and rearrangement (TEPL Mode 3)
_add("TCONCAT", (E.CONCAT, F.CONCAT, L.CONCAT), _r("lhs"), _r("rhs"), semantics=_sl.tconcat,
     lang="concat")  # fmt: skip
_add("TEXTRACT", (E.EXTRACT, F.EXTRACT, L.EXTRACT), _r("src"), semantics=_sl.textract,
     lang="extract")  # fmt: skip
_add("TINSERT", (E.INSERT, F.INSERT, L.INSERT), _rw("old"), _r("src"), semantics=_sl.tinsert,
     lang="insert")  # fmt: skip
# every TIMG2COL that passes the schema is illegal (no feature-map descriptor exists)
_add("TIMG2COL", (E.IMG2COL, None, None), _r("src"))
_add("TFILLPAD", (E.FILLPAD, F.FILLPAD, L.FILLPAD), _r("src"), semantics=_sl.tfillpad,
     lang="fillpad")  # fmt: skip
_add("TTRANS", (E.TRANS, F.TRANS, L.LAYOUT), _r("src"), semantics=_sl.ttrans,
     lang="transpose")  # fmt: skip

# ------------------------------------------------ irregular and complex (TEPL Mode 3)
_add("TCI", (E.GENERATION, F.CI, L.CI), semantics=_sg.tci, lang="iota")
_add("TTRI", (E.GENERATION, F.TRI, L.TRI), semantics=_sg.ttri, lang="tri")
_add("THISTOGRAM", (E.HISTOGRAM, F.HISTOGRAM, L.HISTOGRAM), _r("src"), _r("filter"),
     semantics=_sg.thistogram, lang="histogram")  # fmt: skip
_add("TQUANT", (E.QUANTIZE, F.QUANT, L.QUANT), _r("src"), semantics=_sq.tquant,
     lang="quantize")  # fmt: skip
_add("TDEQUANT", (E.QUANTIZE, F.QUANT, L.QUANT), _r("src"), semantics=_sq.tdequant,
     lang="dequantize")  # fmt: skip
_add("TSORT", (E.SORT, F.SORT, L.SORT), _r("src"), dst=(_w("values"), _w("indices", _I)),
     semantics=_so.tsort, lang="sort", iots=FREE)  # fmt: skip
_add("TMRGSORT", (E.MRGSORT, F.MRGSORT, L.MRGSORT), _r("lhs"), _r("rhs"),
     semantics=_so.tmrgsort, lang="merge", iots=FREE)  # fmt: skip
_add("TGATHER", (E.GATHER, F.GATHER, L.LAYOUT), _r("values"), _r("index", _I),
     semantics=_si.tgather, lang="gather")  # fmt: skip
_add("TSCATTER", (E.SCATTER, F.SCATTER, L.LAYOUT), _r("values"), _r("index", _I),
     semantics=_si.tscatter, lang="scatter")  # fmt: skip
for _k in _sp.PART_OPS:
    _add(f"TPART{_k.upper()}", (E.PART, F.PART, L.LAYOUT), _r("lhs"), _r("rhs"),
         semantics=partial(_sp.tpart, _k), lang=f"partial_{_k}", arith=_k,
         iots=FREE)  # fmt: skip

# ------------------------------------------------ memory and movement (TLSU)
_add("TLOAD", (E.LOAD, F.ACCESS, L.LOAD), lang="load")
_add("TSTORE", (E.STORE, F.ACCESS, L.STORE), _r("src"), dst=(), lang="store")
_add("TMOV", (E.MOV, None, None), _r("src"))
_add("TPREFETCH", (E.PREFETCH, F.ACCESS, L.PREFETCH), dst=(), lang="prefetch")

# ------------------------------------------------ not modelled by the executor
_NONE: Group = (None, None, None)
_add("MGATHER", _NONE, _r("indices", _I))
_add("MSCATTER", _NONE, _r("values"), _r("indices", _I), dst=())
_add("MGATHER_MASK", _NONE, _r("indices", _I), _r("mask", _M))
_add("MSCATTER_MASK", _NONE, _r("values"), _r("indices", _I), _r("mask", _M), dst=())
_add("MGATHER_CAS", _NONE, _r("indices", _I), _r("expected"), _r("replacement"),
     dst=(_w("observed"),))  # fmt: skip
_add("GMOV", _NONE, _r("src"))


def _cube_operand(role: str) -> TileOperand:
    """CUBE operands are named by their catalog role (``row-scale`` -> ``row_scale``);
    the accumulator is the tile the destination replaces."""
    name = role.replace("-", "_")
    return _rw(name) if name == "accumulator" else _r(name)


# ------------------------------------------------ the CUBE matrix engine
# One preparer runs all twelve: the CUBE Function bits (bias, accumulator, MX, GEMV) and
# B.FPATR decide the source stream (scales per side, auxiliary sources), so the grouping
# into B.IOTs is free and the counts are checked against the bundle's own B.FPATR.
# ``tile.matmul`` (the TMATMUL row) models the whole ordinary family: legalize picks
# TMATMUL, TMATMUL_ACC, TMATMUL_BIAS or the TGEMV forms per block and K chunk.
for _o in catalog.OPS:
    if _o.family.value == "CUBE":
        _g: Group = (E.MATMUL, None, None)
        _kw: dict[str, Any] = {}
        if _o.mnemonic == "TMATMUL":
            _g, _kw = (E.MATMUL, F.MATMUL, L.MATMUL), {"lang": "matmul"}
        _add(_o.mnemonic, _g, *(_cube_operand(s) for s in _o.sources),
             semantics=_mm.matmul, iots=FREE, **_kw)  # fmt: skip
