"""``ptoc.lang`` (``import ptoc.lang as pt``): the operations of a kernel body.

Every function records one or more ``tile`` ops at the caller's source line. Names
follow PTO: ``pt.row_max`` is TROWMAX, ``pt.exp`` TEXP, ``pt.quantize`` TQUANT; Python
operators on tiles broadcast like numpy (see :mod:`ptoc.lang.arith`). The compound
interfaces (``quantize_rows``, ``merge_sorted``, ``gather_pattern``, ...) follow the
reference semantics of ``docs/compound.md``.

This module is the public namespace: the functions are defined in the submodules; those
that record exactly one operation (``pt.exp``, ``pt.row_max``, ..., and ``pt.abs``, which
no submodule defines under a builtin's name) are derived from the operation table by
:mod:`ptoc.lang.derived` and bound here.
"""

from .arith import broadcast_to
from .compound import (
    MX,
    Records,
    dequantize_mx,
    dequantize_rows,
    gather_blocks,
    gather_flat,
    gather_pattern,
    merge_blocks,
    merge_sorted,
    pack_records,
    quantize_mx,
    quantize_rows,
    scatter_flat,
    sort32,
    unpack_records,
)
from .derived import DERIVED
from .elementwise import (
    cast,
    fma,
    full,
    iota,
    tri,
    where,
)
from .layout import concat, extract, fillpad, insert, transpose
from .memory import PEIndex, load, pe, store
from .quant import dequantize, quantize
from .reduce import exp_diff
from .select import (
    gather,
    histogram,
    merge,
    partial_add,
    partial_max,
    partial_min,
    partial_mul,
    scatter,
    sort,
)

#: the hand-written functions and classes, then the derived ones (:data:`.derived.DERIVED`)
__all__ = [
    "MX",
    "PEIndex",
    "Records",
    "broadcast_to",
    "cast",
    "concat",
    "dequantize",
    "dequantize_mx",
    "dequantize_rows",
    "exp_diff",
    "extract",
    "fillpad",
    "fma",
    "full",
    "gather",
    "gather_blocks",
    "gather_flat",
    "gather_pattern",
    "histogram",
    "insert",
    "iota",
    "load",
    "merge",
    "merge_blocks",
    "merge_sorted",
    "pack_records",
    "partial_add",
    "partial_max",
    "partial_min",
    "partial_mul",
    "pe",
    "quantize",
    "quantize_mx",
    "quantize_rows",
    "scatter",
    "scatter_flat",
    "sort",
    "sort32",
    "store",
    "transpose",
    "tri",
    "unpack_records",
    "where",
]

#: the one-operation functions, derived from the operation table
globals().update(DERIVED)
__all__ += sorted(DERIVED)
