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


class ConstantMemo:
    """The last constant result of one bundle plan: its key (machine width, rounding
    mode, the sources' origins, the B.IOR words), the tile, the destination hand and the
    status it ORed in. A plan whose sources are not constant, or whose key keeps
    changing, drops its memo (``plan.memo = None``): it costs nothing afterwards."""

    __slots__ = ("_hand", "_key", "_make", "_misses", "_p", "_pidx", "_status", "_tile")

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._tile: Tile | None = None
        self._hand = 0
        self._status: np.ndarray | None = None
        self._pidx: slice | list[int] = slice(None)
        self._p = 0
        self._misses = 0
        self._make: Callable[[np.ndarray, int, bool | None, int], Tile] | None = None

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
        words = b"" if ior is None else state.gpr[:, ior.sources].tobytes()
        key = (npes, state.fp_rounding, origins, words)
        t = self._tile
        if t is not None and key == self._key:
            make = self._make
            if make is None:
                tile = Tile(t.dtype, t.rows, t.cols, t.valid_rows, t.valid_cols,
                            t.layout, t.mask, t.capacity, t.payload, t.defined,
                            t.pad_defined)  # fmt: skip
                tile.finite = t.finite
            else:
                tile = make(t.payload, 0, t.finite, t.address)
            tile.origin = t.origin
            if not state.push_one(self._hand, tile):
                return False
            tile.serial = state.next_serial()
            if self._status is not None:
                or_status(state, self._status, self._pidx, self._p)
            self._misses = 0
            return True
        if self._misses >= MAX_MISSES:
            plan.memo = None
            return False
        self._misses += 1
        self._key = self._tile = None
        ctx = execute(state, plan)  # (a fault raises here, as on the generic path)
        if ctx is None or len(ctx.slots) != 1 or ctx.gm_writes or ctx.shared_write:
            plan.memo = None
            return True  # ran; nothing of it to keep
        t = ctx.tiles[0]
        assert t is not None
        t.origin = object()
        self._key, self._tile, self._hand = key, t, ctx.slots[0].hand
        st = ctx.status
        self._status = st if st is not None and st.any() else None
        self._pidx, self._p = ctx.pidx, ctx.P
        self._make = None
        if t.defined is None:  # (the usual tile: its descriptor bound once)
            self._make = tile_maker(t.dtype, t.rows, t.cols, t.valid_rows, t.valid_cols,
                                    t.layout, t.mask, t.capacity, t.pad_defined)  # fmt: skip
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
