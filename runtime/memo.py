"""Results of bundles computed from the program alone, kept and repeated.

A kernel often builds tiles that depend on nothing but the program: index tiles of a
gather (TCI, TSHLS, TADDS, TTRANS, TROWEXPAND), fills, iota columns. Each run, and each
iteration of a loop that builds one, computes them again. A bundle of a pure family
(elementwise, tile-scalar, reductions and expansions, layout, irregular: its effects are
one new Local tile and the status it ORs in, computed from its source tiles, its B.IOR
words and its static shape) whose sources are all such *constant* tiles keeps its last
result in a :class:`ConstantMemo`: the next execution with the same sources, the same
B.IOR words and the same machine width publishes a new tile of the same payload instead
of computing it (a published payload never changes, so tiles may share it).

A constant tile carries its ``origin`` (:attr:`~.tiles.Tile.origin`): the memo's record
it repeats. The key holds the sources' origins, so a source is recognised by what it
is, not by where its storage lives; the first constant tiles come from bundles without
sources. Anything else -- another source, a fault, a full queue -- leaves the bundle to
its fused form or the generic path, which raise what applies. Traced runs never take
this path; the tests compare them with untraced runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .bundle import BundlePlan
from .engine import execute, fused_sources, or_status, participation
from .state import MachineState
from .tiles import Tile, tile_maker

#: the executor families whose bundles only read Local tiles, B.IOR words and their static
#: shape, and only publish Local tiles and status (``ops.FAMILIES`` by module name)
PURE_FAMILIES = ("elementwise", "irregular", "layout", "reduce", "tile_scalar")
#: keys in a row that find no kept result before a plan stops keeping results (its
#: B.IOR words change from execution to execution: a loop-varying scalar)
MAX_MISSES = 2


class _Record(NamedTuple):
    """One kept result: its key, the tile, the destination hand, the status it ORed in
    (None: none), the geometry the status applies to and a constructor of its tiles."""

    key: tuple[object, ...]
    tile: Tile
    hand: int
    status: np.ndarray | None
    pidx: slice | list[int]
    p: int
    make: Callable[[np.ndarray, int, bool | None, int], Tile] | None


class ConstantMemo:
    """The last constant result of one bundle plan (one record, replaced whole: plans
    are shared, and runs on other threads read it). A plan whose sources are not
    constant, or whose key keeps changing, drops its memo (``plan.memo = None``): it
    costs nothing afterwards."""

    __slots__ = ("_misses", "_record")

    def __init__(self) -> None:
        self._record: _Record | None = None
        self._misses = 0

    def run(self, state: MachineState, plan: BundlePlan) -> bool:
        """Execute ``plan`` when its sources are constant tiles (True): repeat the kept
        result for the same key, else run the generic path and keep what it published.
        False: not handled, nothing changed (a source that is not constant, a key that
        keeps changing, a queue that cannot take the repeated tile)."""
        npes = state.config.pes
        srcs = fused_sources(state, plan, participation(plan, npes))
        if srcs is None:
            return False
        origins = tuple([t.origin for t in srcs])
        if None in origins:
            plan.memo = None
            return False
        ior = plan.ior
        # (as integers: an integer block's GPRs need no array for it)
        words = () if ior is None else state.gpr_values(ior.sources)
        key = (npes, state.fp_rounding, origins, words)
        rec = self._record
        if rec is not None and key == rec.key:
            t = rec.tile
            if rec.make is None:
                tile = Tile(t.dtype, t.rows, t.cols, t.valid_rows, t.valid_cols,
                            t.layout, t.mask, t.capacity, t.payload, t.defined,
                            t.pad_defined)  # fmt: skip
                tile.finite = t.finite
            else:
                tile = rec.make(t.payload, 0, t.finite, t.address)
            tile.origin = t.origin
            if not state.push_one(rec.hand, tile):
                return False
            tile.serial = state.next_serial()
            if rec.status is not None:
                or_status(state, rec.status, rec.pidx, rec.p)
            self._misses = 0
            return True
        if self._misses >= MAX_MISSES:
            plan.memo = None
            return False
        self._misses += 1
        ctx = execute(state, plan)  # (a fault raises here, as on the generic path)
        if ctx is None or len(ctx.slots) != 1 or ctx.gm_writes or ctx.shared_write:
            plan.memo = None
            return True  # ran; nothing of it to keep
        kept = ctx.tiles[0]
        assert kept is not None
        kept.origin = object()
        st = ctx.status
        make = None
        if kept.defined is None:  # (the usual tile: its descriptor bound once)
            make = tile_maker(kept.dtype, kept.rows, kept.cols, kept.valid_rows,
                              kept.valid_cols, kept.layout, kept.mask, kept.capacity,
                              kept.pad_defined)  # fmt: skip
        status = st if st is not None and st.any() else None
        self._record = _Record(key, kept, ctx.slots[0].hand, status, ctx.pidx, ctx.P, make)
        return True


def memo_for(plan: BundlePlan, executor: object, transport: bool) -> ConstantMemo | None:
    """A memo for a ready plan of ``executor`` (None: its bundles are not pure: GM,
    Shared tiles, CUBE transport)."""
    if transport or plan.shared or executor not in _pure_executors():
        return None
    return ConstantMemo()


_PURE: frozenset[object] | None = None


def _pure_executors() -> frozenset[object]:
    global _PURE
    if _PURE is None:
        from . import ops  # (the families build on the engine: read when first needed)

        _PURE = frozenset(
            kind
            for family in ops.FAMILIES
            if family.__name__.rsplit(".", 1)[-1] in PURE_FAMILIES
            for kind in family.PREPARERS
        )
    return _PURE
