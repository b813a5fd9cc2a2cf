"""``ptoc.lang`` (``import ptoc.lang as pt``): the operations of a kernel body.

Every function records one or more ``tile`` ops at the caller's source line. Names
follow PTO: ``pt.row_max`` is TROWMAX, ``pt.exp`` TEXP, ``pt.quantize`` TQUANT; Python
operators on tiles broadcast like numpy (see :mod:`ptoc.lang.arith`). The compound
interfaces (``quantize_rows``, ``merge_sorted``, ``gather_pattern``, ...) follow the
reference semantics of ``docs/compound.md``.

This module is the public namespace: the functions are defined in the submodules under
names that shadow no Python builtin (``abs_``) and get their user-facing names here.
"""

from .arith import add, broadcast_to, div, maximum, minimum, mul, rem, shl, shr, sub
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
from .elementwise import (
    abs_,
    bitwise_not,
    cast,
    exp,
    fma,
    full,
    iota,
    log,
    neg,
    recip,
    relu,
    rsqrt,
    sqrt,
    tri,
    where,
)
from .layout import concat, extract, fillpad, insert, transpose
from .memory import PEIndex, load, pe, store
from .quant import dequantize, quantize
from .reduce import (
    col_argmax,
    col_argmin,
    col_max,
    col_min,
    col_prod,
    col_sum,
    exp_diff,
    row_argmax,
    row_argmin,
    row_max,
    row_min,
    row_prod,
    row_sum,
)
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

__all__ = [
    "MX",
    "PEIndex",
    "Records",
    "abs",
    "add",
    "bitwise_not",
    "broadcast_to",
    "cast",
    "col_argmax",
    "col_argmin",
    "col_max",
    "col_min",
    "col_prod",
    "col_sum",
    "concat",
    "dequantize",
    "dequantize_mx",
    "dequantize_rows",
    "div",
    "exp",
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
    "log",
    "maximum",
    "merge",
    "merge_blocks",
    "merge_sorted",
    "minimum",
    "mul",
    "neg",
    "pack_records",
    "partial_add",
    "partial_max",
    "partial_min",
    "partial_mul",
    "pe",
    "quantize",
    "quantize_mx",
    "quantize_rows",
    "recip",
    "relu",
    "rem",
    "row_argmax",
    "row_argmin",
    "row_max",
    "row_min",
    "row_prod",
    "row_sum",
    "rsqrt",
    "scatter",
    "scatter_flat",
    "shl",
    "shr",
    "sort",
    "sort32",
    "sqrt",
    "store",
    "sub",
    "transpose",
    "tri",
    "unpack_records",
    "where",
]

#: ``pt.abs``: the user-facing name of :func:`ptoc.lang.elementwise.abs_`
abs = abs_  # the public namespace (per-file A001 exemption in pyproject.toml)
del abs_
