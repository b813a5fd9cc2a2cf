"""Shared pieces of the lean fused forms (``integer_fused``, ``move_fused``): a form
that writes its result straight into a block of the destination's payload pool
(``engine.destination_pool``) finds that pool per machine configuration and thread
here."""

from __future__ import annotations

from collections.abc import Callable
from threading import get_ident

import numpy as np

from ptoc.backend.isa import DataType
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.target import MachineConfig

from ..alloc import Slot
from ..engine import destination_pool
from ..payloads import PayloadPool
from ..state import MASK_PES, MachineState
from ..tiles import Tile, tile_maker


def consecutive_pes(mask: int) -> tuple[int, ...]:
    """The PEs of ``mask`` when they are consecutive (every PE, or a run such as 1000 or
    0110: their payload rows are one basic slice), else ()."""
    pes = MASK_PES[mask] if 0 <= mask < len(MASK_PES) else ()
    return pes if pes and pes == tuple(range(pes[0], pes[-1] + 1)) else ()


def pool_finder(
    slot: Slot, pad: int, pes: tuple[int, ...], hand: int, index: int
) -> Callable[[MachineConfig], PayloadPool | None]:
    """``pool_of(config)``: the calling thread's payload pool of ``slot``'s tile on
    ``pes`` (:func:`~..engine.destination_pool`, its padding ``pad``) on a machine of
    ``config``; None when the PEs, the hand ``hand`` (the largest the bundle names) or
    the queue position ``index`` (the deepest it reads) are not on that machine."""
    #: (configuration, thread) -> the payload pool of that machine; pools are not
    #: shared across threads
    pools: dict[tuple[MachineConfig, int], PayloadPool | None] = {}
    #: the configuration, thread and pool found last (configurations hash slowly)
    last: list[object] = [None, 0, None]

    def pool_of(cfg: MachineConfig) -> PayloadPool | None:
        ident = get_ident()
        if last[0] is cfg and last[1] == ident:
            return last[2]  # type: ignore[return-value]
        k = (cfg, ident)
        if k not in pools:
            fits = pes[-1] < cfg.pes and hand < cfg.hands and index <= cfg.depth
            pools[k] = destination_pool(cfg.pes, slot, pad, pes) if fits else None
        last[:] = cfg, ident, pools[k]
        return pools[k]

    return pool_of


def lean_target(
    slot: Slot,
    pad: int,
    pes: tuple[int, ...],
    hand: int,
    index: int,
    dt: DataType | None = None,
) -> tuple[
    Callable[[np.ndarray, int, bool | None, int], Tile],
    slice,
    Callable[[MachineConfig], PayloadPool | None],
]:
    """What a lean form writing ``slot``'s tile on ``pes`` (consecutive) needs:
    the maker of its tiles (of ``dt``, default the slot's; padding ``pad``), the slice
    of its PEs' payload rows and its :func:`pool_finder` (``hand`` and ``index``: the
    largest hand and deepest queue position the bundle names)."""
    dtype = slot.dtype if dt is None else dt
    make = tile_maker(dtype, slot.rows, slot.cols, slot.valid_rows, slot.valid_cols,
                      slot.layout, slot.mask, slot.capacity, pad != PAD_NULL)  # fmt: skip
    return make, slice(pes[0], pes[-1] + 1), pool_finder(slot, pad, pes, hand, index)


def publish(state: MachineState, hand: int, tile: Tile) -> bool:
    """Push ``tile`` (built on a block of its pool) into ``hand`` with the next serial;
    False, with nothing changed, when the push would fault on capacity (the caller's
    general path then raises it)."""
    if not state.push_one(hand, tile):
        return False
    tile.serial = state.next_serial()
    return True
