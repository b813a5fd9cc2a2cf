"""Compound interfaces: pto-isa operations that no single selector implements.

Each function traces one compound ``tile`` op (``ptoc.dialects.compound_ops``) whose
meaning is the reference semantics of :mod:`ptoc.dialects.compound_ref`
(``docs/compound.md``); ``ptoc.reference`` evaluates them and the ``lower-compound``
stage rewrites them into direct ops for the machine. Static rules (shapes, types,
patterns, block sizes) are checked while tracing, at the caller's line.

A compound op whose constructor takes only tiles needs no function here: ``pt.<INTERFACE>``
is derived from its op class (:func:`derive`), with the op's docstring. The functions
written here add what a constructor does not say: records, numbers, names, defaults.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects import compound_ops as co
from ptoc.dialects.tile_base import RuleError

from ..dtypes import DTYPES
from ..tile import Tile
from ._core import as_dtype, as_number, as_shape, as_tile, emit, fail, is_scalar


class Records(NamedTuple):
    """Sorted records as two tiles: ``values`` and their u32 ``payload`` (e.g. indices)."""

    values: Tile
    payload: Tile


class MX(NamedTuple):
    """``quantize_mx`` results: e4m3 ``elements`` (R, C), e8m0 ``scales`` (R, C/32), and the
    fp32 group ``amax`` and ``scaling`` multipliers (R, C/32)."""

    elements: Tile
    scales: Tile
    amax: Tile
    scaling: Tile


def _tiles(fn: str, args: list[Any]) -> list[Tile]:
    tiles = [as_tile(a, fn, f"argument {i + 1}") for i, a in enumerate(args)]
    for t in tiles:
        if t.dtype == DTYPES["pred"]:
            fail(f"{fn} does not accept pred tiles (comparison results)")
    return tiles


def compound(fn: str, build: Callable[[], Operation]) -> list[Tile]:
    """Trace one compound op; its verifier (the reference run on zero tiles) reports a
    broken static rule, which becomes a diagnostic at the caller's line."""
    try:
        op = emit(fn, build())
    except RuleError as e:  # raised while building the op
        fail(f"{fn}: {e.rule}")
    except VerifyException as e:
        fail(f"{fn}: {str(e).splitlines()[0]}")
    return [Tile(r) for r in op.results]


def _dtype_name(x: Any, fn: str) -> str | None:
    return None if x is None else as_dtype(x, fn).catalog_name


def _param(x: Any, fn: str, what: str) -> Any:
    """A per-row parameter: a (R, 1) fp32 tile, or a number for every row."""
    if x is None or is_scalar(x):
        return None if x is None else float(as_number(x, fn, what))
    return as_tile(x, fn, what).value


def quantize_rows(
    t: Tile, scale: Tile | float, offset: Tile | float | None = None, dtype: Any = "s8"
) -> Tile:
    """Per-row affine quantization of an fp32 tile: ``sat(rne(fl32(fl32(t * scale) +
    offset)))`` with (R, 1) fp32 ``scale`` multipliers (or one number) and optional
    ``offset`` zero points, to s8 or u8 (pto-isa TQUANT INT8_SYM/ASYM)."""
    fn = "pt.quantize_rows"
    (x,) = _tiles(fn, [t])
    s, o, d = _param(scale, fn, "scale"), _param(offset, fn, "offset"), _dtype_name(dtype, fn)
    (q,) = compound(fn, lambda: co.QuantizeRowsOp(x.value, s, o, d or "S8"))
    return q


def dequantize_rows(q: Tile, scale: Tile | float, offset: Tile | float | None = None) -> Tile:
    """``fl32(fl32(q - offset) * scale)`` per row, s8/u8/s16 -> fp32 (pto-isa TDEQUANT)."""
    fn = "pt.dequantize_rows"
    (x,) = _tiles(fn, [q])
    s, o = _param(scale, fn, "scale"), _param(offset, fn, "offset")
    (y,) = compound(fn, lambda: co.DequantizeRowsOp(x.value, s, o))
    return y


def quantize_mx(t: Tile, fmt: str = "mxfp8") -> MX:
    """OCP MXFP8: 32-column groups share an e8m0 exponent, elements become e4m3
    (``C % 32 == 0``); returns :class:`MX` (elements, scales, amax, scaling)."""
    fn = "pt.quantize_mx"
    if not isinstance(fmt, str) or fmt.lower() not in ("mxfp8", "mxfp8_e4m3", "e4m3"):
        fail(f"{fn} supports fmt='mxfp8' (e4m3 elements), not {fmt!r}")
    (x,) = _tiles(fn, [t])
    e, s, amax, scaling = compound(fn, lambda: co.QuantizeMxOp(x.value))
    return MX(e, s, amax, scaling)


def sort32(t: Tile, payload: Tile | None = None) -> Records:
    """pto-isa TSORT32: each 32-column group of each row sorted descending (stable, NaN
    last), carrying ``payload`` (u32, default: the column index)."""
    fn = "pt.sort32"
    tiles = _tiles(fn, [t] if payload is None else [t, payload])
    p = tiles[1].value if len(tiles) > 1 else None
    v, idx = compound(fn, lambda: co.Sort32Op(tiles[0].value, p))
    return Records(v, idx)


def merge_sorted(
    *lists: Tile | Records,
    descending: bool = True,
    top_k: int | None = None,
    exhausted: bool = False,
) -> tuple[Tile | Records, Tile]:
    """Stable merge of 2-4 sorted single-row lists (ties to the lower list, NaN last).

    ``top_k`` keeps the first k records; ``exhausted`` stops after the record that
    empties any list (the rest of the static-length result is zero bits). Returns
    ``(merged, counts)``: the merged tile (or Records, when the lists are Records) and a
    (1, n) u32 tile of how many records of each list the result holds.
    """
    fn = "pt.merge_sorted"
    if not 2 <= len(lists) <= 4:
        fail(f"{fn} merges 2 to 4 lists, not {len(lists)}")
    records = [isinstance(x, tuple) for x in lists]
    if any(records) and not all(records):
        fail(f"{fn}: the lists must all be tiles or all be Records")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool)):
        fail(f"{fn}: top_k is an integer, not {top_k!r}")
    values = _tiles(fn, [x[0] if isinstance(x, tuple) else x for x in lists])
    payloads = _tiles(fn, [x[1] for x in lists if isinstance(x, tuple)])
    out = compound(
        fn,
        lambda: co.MergeSortedOp(
            [v.value for v in values],
            [p.value for p in payloads],
            descending=bool(descending),
            top_k=top_k,
            exhausted=bool(exhausted),
        ),
    )
    merged: Tile | Records = Records(out[0], out[1]) if payloads else out[0]
    return merged, out[-1]


def merge_blocks(
    records: Tile | Records, block: int, descending: bool = True
) -> Tile | Records:
    """pto-isa single-tile TMRGSORT: merge each group of four sorted ``block``-record
    blocks of a single row (``block`` a multiple of 32 for fp32, 16 for fp16)."""
    fn = "pt.merge_blocks"
    if isinstance(block, bool) or not isinstance(block, int):
        fail(f"{fn}: block is an integer number of records, not {block!r}")
    tiles = _tiles(fn, list(records) if isinstance(records, tuple) else [records])
    p = tiles[1].value if len(tiles) > 1 else None
    out = compound(
        fn, lambda: co.MergeBlocksOp(tiles[0].value, block, p, descending=bool(descending))
    )
    return Records(out[0], out[1]) if len(out) == 2 else out[0]


def pack_records(records: Records | Tile, payload: Tile | None = None) -> Tile:
    """pto-isa's interleaved 8-byte record layout as raw bits (u32 (R, 2C) for fp32
    values, u16 (R, 4C) for fp16)."""
    fn = "pt.pack_records"
    pair = [records, payload] if payload is not None else list(records)
    v, p = _tiles(fn, pair)
    (t,) = compound(fn, lambda: co.PackRecordsOp(v.value, p.value))
    return t


def unpack_records(t: Tile, dtype: Any) -> Records:
    """Inverse of :func:`pack_records`: interleaved records -> Records(values, payload)."""
    fn = "pt.unpack_records"
    (x,) = _tiles(fn, [t])
    d = _dtype_name(dtype, fn) or "FP32"
    v, p = compound(fn, lambda: co.UnpackRecordsOp(x.value, d))
    return Records(v, p)


def gather_pattern(t: Tile, pattern: str | int, dtype: Any = None) -> Tile:
    """Keep the columns a mask pattern selects (P0101, P1010, P0001, P0010, P0100, P1000,
    P1111; pto-isa mask-pattern TGATHER); ``dtype`` reinterprets the bits."""
    fn = "pt.gather_pattern"
    if not isinstance(pattern, (str, int)) or isinstance(pattern, bool):
        fail(f"{fn}: pattern is a name like 'P0101' or its pto-isa code 1..7, not {pattern!r}")
    (x,) = _tiles(fn, [t])
    d = _dtype_name(dtype, fn)
    (out,) = compound(fn, lambda: co.GatherPatternOp(x.value, pattern, d))
    return out


def scatter_flat(t: Tile, offsets: Tile, shape: Any, into: Tile | None = None) -> Tile:
    """``out.flat[offsets[r, c]] = t[r, c]`` into a ``shape`` tile (last writer wins;
    unwritten elements are +0, or ``into``'s)."""
    fn = "pt.scatter_flat"
    dims = as_shape(shape, fn)
    tiles = _tiles(fn, [t, offsets] if into is None else [t, offsets, into])
    i = tiles[2].value if len(tiles) > 2 else None
    (out,) = compound(fn, lambda: co.ScatterFlatOp(tiles[0].value, tiles[1].value, dims, i))
    return out


def transpose(t: Tile, scratch: Tile | None, dtype: Any = None) -> Tile:
    """pto-isa ``TTRANS(dst, src, tmp)``: the scratch tile is accepted and ignored;
    ``dtype`` (same width) reinterprets the bits."""
    fn = "pt.transpose"
    tiles = _tiles(fn, [t] if scratch is None else [t, scratch])
    s = tiles[1].value if len(tiles) > 1 else None
    d = _dtype_name(dtype, fn)
    (out,) = compound(fn, lambda: co.TransposeOp(tiles[0].value, s, d))
    return out


def partial(kind: str, a: Tile | None, b: Tile | None, shape: Any, pad: Any) -> Tile:
    """The compound form of ``partial_<kind>``: a destination neither source covers,
    empty sources (None), or an explicit ``pad``."""
    from ptoc.dialects.tile_types import TileType

    fn = f"pt.partial_{kind}"
    present = [x for x in (a, b) if x is not None]
    if not present:
        fail(f"{fn} needs at least one source tile")
    tiles = _tiles(fn, present)
    if len(tiles) == 2 and tiles[0].dtype != tiles[1].dtype:
        fail(f"{fn}: a and b have different element types {tiles[0].dtype.name} and "
             f"{tiles[1].dtype.name}")  # fmt: skip
    if shape is None:
        dims = (max(t.shape[0] for t in tiles), max(t.shape[1] for t in tiles))
    else:
        dims = as_shape(shape, fn)
    if pad is not None and not is_scalar(pad):
        fail(f"{fn}: pad is a number, not {pad!r}")
    p = None if pad is None else as_number(pad, fn, "pad")
    ta = tiles[0].value if a is not None else None
    tb = tiles[-1].value if b is not None else None
    result = TileType(tiles[0].type.dtype, dims)
    (out,) = compound(fn, lambda: co.PartialOp(kind, ta, tb, result, p))
    return out


# ------------------------------------------------------------------ derived functions

_IR_SPELLING = re.compile(r"^``[^`]*``:\s*")


def derive(cls: type[co.CompoundOp]) -> Callable[..., Tile | tuple[Tile, ...]]:
    """``pt.<cls.INTERFACE>(tile, ...)``: one tile argument per constructor parameter (a
    parameter defaulting to None is an optional tile), the op's results as a tile or a
    tuple of tiles, the op's docstring without its IR spelling."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fn = f"pt.{cls.INTERFACE}"
    sig = inspect.Signature(
        [p.replace(annotation="Tile" if p.default is None or p.default is p.empty else
                   p.annotation) for p in params],
        return_annotation="Tile",
    )  # fmt: skip

    def function(*args: Any, **kwargs: Any) -> Tile | tuple[Tile, ...]:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        given = [bound.arguments[p.name] for p in params]
        tiles = iter(_tiles(fn, [a for a in given if a is not None]))
        values = [None if a is None else next(tiles).value for a in given]
        out = compound(fn, lambda: cls(*values))
        return out[0] if len(out) == 1 else tuple(out)

    function.__name__ = function.__qualname__ = cls.INTERFACE
    function.__module__ = __name__
    function.__doc__ = _IR_SPELLING.sub("", inspect.cleandoc(cls.__doc__ or ""), count=1)
    function.__signature__ = sig  # type: ignore[attr-defined]
    return function


def _derivable(cls: type[co.CompoundOp]) -> bool:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    tiles = all(p.annotation in ("SSAValue", "SSAValue | None") for p in params)
    return tiles and cls.INTERFACE not in globals()


#: ``pt.<INTERFACE>`` of every compound op that has no hand-written function
DERIVED: dict[str, Callable[..., Any]] = {
    c.INTERFACE: derive(c) for c in co.COMPOUND_OPS if _derivable(c)
}
globals().update(DERIVED)


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "MX",
    "Records",
    "dequantize_rows",
    "gather_pattern",
    "merge_blocks",
    "merge_sorted",
    "pack_records",
    "quantize_mx",
    "quantize_rows",
    "scatter_flat",
    "sort32",
    "unpack_records",
    *DERIVED,
]
