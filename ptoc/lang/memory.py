"""Loads, stores and the PE index.

``pt.load(x, rows=(start, n), cols=(start, n))`` reads a window of a tensor as one tile
(TLOAD); ``pt.store(out, t, rows=(start, n), cols=(start, n))`` writes a tile back
(TSTORE; the counts are the tile's shape and may be left out: ``rows=start``). In a kernel
decorated ``@ptoc.kernel(pes=4)`` every PE runs the same bundles; ``pt.pe()`` is the PE
index and may appear in window offsets as ``a * pt.pe() + b``, which becomes a per-PE
base address in the kernel ABI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ptoc.dialects.scalars import LoadScalarOp, constant_value
from ptoc.dialects.tile_memory import LoadOp, PrefetchOp, StoreOp
from ptoc.dialects.tile_types import TileType

from ..tile import TensorParam, Tile
from ..trace import current
from ._core import as_tile, check_type, describe, emit, emit_tile, fail, is_scalar
from .control import Index


@dataclass(frozen=True)
class PEIndex:
    """``scale * pe + offset``: an offset that differs per PE (linear in the PE index)."""

    scale: int = 1
    offset: int = 0

    def __mul__(self, k: Any) -> PEIndex:
        return PEIndex(self.scale * _int(k, "'*'"), self.offset * _int(k, "'*'"))

    __rmul__ = __mul__

    def __add__(self, k: Any) -> Any:
        if isinstance(k, Index):
            return Moved(self, k)
        return PEIndex(self.scale, self.offset + _int(k, "'+'"))

    __radd__ = __add__

    def __sub__(self, k: Any) -> Any:
        if isinstance(k, Index):
            return Moved(self, -k)
        return PEIndex(self.scale, self.offset - _int(k, "'-'"))

    def __rsub__(self, k: Any) -> PEIndex:
        return PEIndex(-self.scale, _int(k, "'-'") - self.offset)

    def __neg__(self) -> PEIndex:
        return PEIndex(-self.scale, -self.offset)

    def __repr__(self) -> str:
        return f"({self.scale} * pt.pe() + {self.offset})"

    def __bool__(self) -> bool:
        fail(
            "pt.pe() differs per PE, so it has no truth value at trace time",
            "every PE runs the same bundles: use pt.pe() only in load/store offsets",
        )

    def __index__(self) -> int:
        fail(
            "pt.pe() differs per PE and is not a Python integer at trace time",
            "use it only in load/store offsets, as a * pt.pe() + b",
        )

    __int__ = __index__


@dataclass(frozen=True)
class Moved:
    """A window start ``a * pt.pe() + b + i``: per PE (in the ABI) plus a run-time
    integer ``i`` (computed by the program)."""

    pe: PEIndex
    index: Index

    def __add__(self, k: Any) -> Moved:
        if isinstance(k, Index):
            return Moved(self.pe, self.index + k)
        return Moved(self.pe + _int(k, "'+'"), self.index)

    __radd__ = __add__

    def __sub__(self, k: Any) -> Moved:
        if isinstance(k, Index):
            return Moved(self.pe, self.index - k)
        return Moved(self.pe - _int(k, "'-'"), self.index)


def _int(k: Any, fn: str) -> int:
    if isinstance(k, PEIndex):
        fail(f"{fn}: pt.pe() * pt.pe() is not linear in the PE index")
    if not isinstance(k, int) or isinstance(k, bool):
        fail(f"{fn}: pt.pe() combines with integers only, not {k!r}")
    return k


def pe() -> PEIndex:
    """The index of the PE running the kernel (0 .. pes-1), for load/store offsets."""
    current("pt.pe")
    return PEIndex()


Offset = int | PEIndex


def _offset(x: Any, fn: str, what: str) -> PEIndex:
    """A start offset; a run-time integer (:class:`~ptoc.lang.control.Index`) is recorded
    on the current access (:data:`_DYNAMIC`) and counts 0 here."""
    if isinstance(x, PEIndex):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return PEIndex(0, x)
    if isinstance(x, Moved):
        _DYNAMIC.append((what, x.index))
        return x.pe
    if isinstance(x, Index):
        c = constant_value(x.value)
        if c is not None:
            return PEIndex(0, c)
        _DYNAMIC.append((what, x))
        return PEIndex(0, 0)
    fail(f"{fn}: {what} is an integer, a * pt.pe() + b or a run-time integer, not {x!r}")


#: the run-time start offsets met while reading one access's window: (what, index)
_DYNAMIC: list[tuple[str, Index]] = []


def _indices() -> list[tuple[int, Any]]:
    """The (axis, SSA value) run-time indices of the access just read (and reset)."""
    out = [(1 if "col" in what else 0, ix.value) for what, ix in _DYNAMIC]
    _DYNAMIC.clear()
    return sorted(out, key=lambda p: p[0])


def _window(fn: str, arg: Any, extent: int, what: str) -> tuple[PEIndex, int]:
    """(start, count) of one axis of a load window; None is the whole axis."""
    if arg is None:
        return PEIndex(0, 0), extent
    if not isinstance(arg, (tuple, list)) or len(arg) != 2:
        fail(f"{fn}: {what} is (start, count), not {arg!r}", f"e.g. {what}=(0, {extent})")
    start = _offset(arg[0], fn, f"the {what} start")
    n = arg[1]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        fail(f"{fn}: the {what} count is a positive integer, not {n!r}")
    return start, n


def _tensor(x: Any, fn: str) -> TensorParam:
    if not isinstance(x, TensorParam):
        if isinstance(x, Tile):
            fail(f"{fn} takes a tensor parameter of the kernel, not a tile")
        fail(f"{fn} takes a tensor parameter of the kernel, not {describe(x)}")
    return x


def _check_bounds(
    fn: str, x: TensorParam, row: PEIndex, col: PEIndex, shape: tuple[int, int], step: int
) -> None:
    """Every PE's window lies inside the tensor; names the first PE that leaves it."""
    pes = current(fn).pes
    rows, cols = x.shape
    if row.scale < 0 or col.scale < 0:
        fail(f"{fn}: per-PE offsets grow with the PE index (a * pt.pe() + b with a >= 0)")
    for p in range(pes):
        r0, c0 = row.scale * p + row.offset, col.scale * p + col.offset
        r1, c1 = r0 + step * (shape[0] - 1), c0 + shape[1] - 1
        if min(r0, c0) < 0 or r1 >= rows or c1 >= cols:
            on = f" on PE {p}" if pes > 1 else ""
            fail(
                f"{fn}: the window rows {r0}..{r1}, cols {c0}..{c1}{on} is outside the "
                f"{rows}x{cols} tensor '{x.name}'",
                "check the (start, count) of rows= and cols="
                + (" and the pt.pe() scale" if pes > 1 else ""),
            )


def _read_window(
    fn: str, x: TensorParam, rows: Any, cols: Any, step: Any
) -> tuple[PEIndex, int, PEIndex, int]:
    """The checked window ``rows=``/``cols=``/``step=`` of a load or prefetch of ``x``:
    (row start, row count, column start, column count)."""
    r0, nr = _window(fn, rows, x.shape[0], "rows")
    c0, nc = _window(fn, cols, x.shape[1], "cols")
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        fail(f"{fn}: step is a positive integer, not {step!r}")
    _check_bounds(fn, x, r0, c0, (nr, nc), step)
    return r0, nr, c0, nc


def load(
    t: TensorParam,
    rows: Any = None,
    cols: Any = None,
    *,
    step: int = 1,
    valid_rows: Any = None,
    valid_cols: Any = None,
) -> Tile:
    """A window of tensor ``t`` as a tile (TLOAD): ``rows=(start, n)`` and ``cols=(start,
    n)`` (default: the whole axis); ``step`` takes every step-th row.

    ``valid_rows=k`` (a run-time integer) reads only the window's first ``min(k, n)`` rows:
    a ragged tail; ``valid_cols=k`` likewise its first columns. The tile keeps its
    storage, of which that many rows (columns) are valid; what is computed from it has the
    same valid region (elementwise ops, comparisons, selections, conversions, reductions
    and broadcasts -- each bundle runs with the count in a register, ``B.DIM``), a column
    reduction folds the valid rows into one, a row reduction the valid columns, and
    :func:`store` writes the valid region. ``k`` must be at least 1 at run time (a loop
    ``pt.range(0, rows, n)`` has ``rows - r >= 1`` in every iteration); the window itself
    must lie inside the tensor.

    Example::

        @ptoc.kernel
        def load_example(
            x: ptoc.Tensor[ptoc.fp32, 64, 32],
            out: ptoc.Tensor[ptoc.fp32, 64, 32],
            rows: ptoc.Scalar[ptoc.s32],
        ):
            for r in pt.range(0, rows, 16):  # the last block may be short
                t = pt.load(x, rows=(r, 16), valid_rows=rows - r)
                pt.store(out, pt.exp(t), rows=(r, 16))


        @load_example.inputs
        def _(rng):
            x = rng.standard_normal((64, 32)).astype(np.float32)
            return {"x": x, "rows": int(rng.integers(1, 65))}


        ptoc.verify(load_example)
    """
    fn = "pt.load"
    x = _tensor(t, fn)
    state = current(fn)
    _DYNAMIC.clear()
    r0, nr, c0, nc = _read_window(fn, x, rows, cols, step)
    indices = _indices()
    check_type(fn, LoadOp.MNEMONIC, x.dtype, "tensors")
    valid = [
        (axis, _count(fn, k, extent, what))
        for axis, k, extent, what in ((0, valid_rows, nr, "rows"), (1, valid_cols, nc, "cols"))
        if k is not None
    ]
    state.use(state.loaded, x.name)
    tt = TileType(x.dtype.catalog_name, (nr, nc))
    pe_offsets = (r0.scale, c0.scale)
    op = LoadOp(x.value, (r0.offset, c0.offset), tt, step, pe_offsets, indices, valid)
    return emit_tile(fn, op)


def _count(fn: str, k: Any, extent: int, what: str) -> Any:
    """The run-time valid count ``min(k, extent)`` of a load axis (an i64 SSA value)."""
    if isinstance(k, bool) or not isinstance(k, (int, Index)):
        fail(f"{fn}: valid_{what} is a run-time integer, not {describe(k)}")
    if isinstance(k, int):
        fail(
            f"{fn}: valid_{what}={k} is a Python integer",
            f"load the {k} {what} as the window: {what}=(start, {k})",
        )
    from .control import extreme

    return extreme("MIN", k, extent, fn).value


def prefetch(t: TensorParam, rows: Any = None, cols: Any = None, *, step: int = 1) -> None:
    """Prefetch the window of tensor ``t`` that :func:`load` with the same arguments
    would read (TPREFETCH). Nothing a kernel can observe changes (cache placement is not
    architectural); the window must lie inside the tensor like a load's.

    Example::

        @ptoc.kernel
        def prefetch_example(
            x: ptoc.Tensor[ptoc.fp32, 16, 64],
            out: ptoc.Tensor[ptoc.fp32, 8, 64],
        ):
            pt.prefetch(x, rows=(8, 8))  # the rows the second load reads
            a = pt.load(x, rows=(0, 8))
            b = pt.load(x, rows=(8, 8))
            pt.store(out, a + b)


        ptoc.verify(prefetch_example)
    """
    fn = "pt.prefetch"
    x = _tensor(t, fn)
    _DYNAMIC.clear()
    r0, nr, c0, nc = _read_window(fn, x, rows, cols, step)
    if _indices():
        fail(f"{fn}: the window starts at compile-time offsets (a prefetch is a hint)")
    check_type(fn, PrefetchOp.MNEMONIC, x.dtype, "tensors")
    op = PrefetchOp(x.value, (r0.offset, c0.offset), (nr, nc), step, (r0.scale, c0.scale))
    emit(fn, op)


def store(
    t: TensorParam,
    tile: Tile,
    rows: Any = None,
    cols: Any = None,
    *,
    step: int = 1,
    row: Offset | None = None,
    col: Offset | None = None,
) -> None:
    """Write ``tile`` into tensor ``t`` (TSTORE) at the window ``rows=(start, n)``,
    ``cols=(start, n)`` -- the spelling of :func:`load`; ``n`` must be the tile's extent
    and may be left out (``rows=start``). Default: the top-left corner. ``step`` spreads
    the tile's rows ``step`` tensor rows apart. ``row=`` / ``col=`` are the older
    spellings of the start offsets. A tensor the kernel stores to is one of its outputs."""
    fn = "pt.store"
    x = _tensor(t, fn)
    if is_scalar(tile):
        fail(f"{fn} writes a tile, not a number", f"make one: pt.full(shape, {tile!r}, dtype)")
    v = as_tile(tile, fn, "the value")
    state = current(fn)
    if v.dtype != x.dtype:
        fail(
            f"{fn}: the tile is {v.dtype.name} but the tensor '{x.name}' is {x.dtype.name}",
            f"convert it first: pt.cast(t, ptoc.{x.dtype.name})",
        )
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        fail(f"{fn}: step is a positive integer, not {step!r}")
    _DYNAMIC.clear()
    r0 = _store_start(fn, "rows", rows, "row", row, v.shape[0])
    c0 = _store_start(fn, "cols", cols, "col", col, v.shape[1])
    indices = _indices()
    _check_bounds(fn, x, r0, c0, v.shape, step)
    check_type(fn, StoreOp.MNEMONIC, x.dtype, "tensors")
    if x.name in state.scalar_reads:
        fail(
            f"{fn}: the kernel reads scalars of '{x.name}' with pt.load_scalar, so it may "
            "not store to it"
        )
    state.use(state.stored, x.name)
    pe_offsets = (r0.scale, c0.scale)
    op = StoreOp(v.value, x.value, (r0.offset, c0.offset), step, pe_offsets, indices)
    emit(fn, op)


def _store_start(fn: str, axis: str, window: Any, old: str, start: Any, extent: int) -> PEIndex:
    """The start offset of one store axis from ``rows=`` (start or (start, n)) or the
    older ``row=`` spelling."""
    if window is not None and start is not None:
        fail(f"{fn}: give {axis}= or {old}=, not both", f"write {axis}=(start, {extent})")
    if start is not None:
        return _offset(start, fn, old)
    if window is None:
        return PEIndex(0, 0)
    if isinstance(window, (tuple, list)):
        if len(window) != 2:
            fail(f"{fn}: {axis} is (start, count) or a start, not {window!r}")
        n = window[1]
        if n != extent or isinstance(n, bool):
            fail(
                f"{fn}: {axis}={_text(window)} counts {n!r} but the tile has {extent} {axis}",
                f"write {axis}=({_text(window[0])}, {extent}), or give only the start",
            )
        return _offset(window[0], fn, f"the {axis} start")
    return _offset(window, fn, f"the {axis} start")


def _text(x: Any) -> str:
    return repr(tuple(x)) if isinstance(x, list) else repr(x)


def load_scalar(t: TensorParam, row: Any = 0, col: Any = 0) -> Index:
    """Element ``[row, col]`` of integer tensor ``t`` as a run-time integer (an AGU load
    into a register): data-dependent addressing -- token ids, block tables, lengths.
    ``row`` and ``col`` may be run-time integers; an element they move out of the tensor
    stops the machine with a fault. The kernel may not store to ``t`` (its elements are
    read before any bundle of the same block runs).

    Example::

        @ptoc.kernel
        def load_scalar_example(
            x: ptoc.Tensor[ptoc.fp32, 16, 32],
            which: ptoc.Tensor[ptoc.s32, 1, 1],
            out: ptoc.Tensor[ptoc.fp32, 1, 32],
        ):
            r = pt.load_scalar(which)
            pt.store(out, pt.load(x, rows=(r, 1)))


        @load_scalar_example.inputs
        def _(rng):
            x = rng.standard_normal((16, 32)).astype(np.float32)
            return {"x": x, "which": rng.integers(0, 16, (1, 1), dtype=np.int32)}


        ptoc.verify(load_scalar_example)
    """
    fn = "pt.load_scalar"
    x = _tensor(t, fn)
    state = current(fn)
    if x.name in state.stored:
        fail(
            f"{fn}: the kernel stores to '{x.name}', so its elements are not fixed",
            "read scalars from tensors the kernel only reads",
        )
    if not x.dtype.is_int or x.dtype.bits not in (8, 16, 32, 64):
        fail(f"{fn} reads integer tensors (s8 .. s64, u8 .. u64), not {x.dtype.name}")
    _DYNAMIC.clear()
    r = _offset(row, fn, "the row")
    c = _offset(col, fn, "the col")
    indices = _indices()
    if r.scale or c.scale:
        fail(f"{fn}: the element is the same on every PE (no pt.pe() in its index)")
    if not indices:
        rows, cols = x.shape
        if not (0 <= r.offset < rows and 0 <= c.offset < cols):
            fail(f"{fn}: element [{r.offset}, {c.offset}] is outside the {rows}x{cols} tensor")
    state.use(state.loaded, x.name)
    state.scalar_reads.add(x.name)
    op = LoadScalarOp(x.value, (r.offset, c.offset), indices)
    emit(fn, op)
    return Index(op.results[0])


#: what ``ptoc.lang`` exports from this module
__all__ = [
    "PEIndex",
    "load",
    "load_scalar",
    "pe",
    "prefetch",
    "store",
]
