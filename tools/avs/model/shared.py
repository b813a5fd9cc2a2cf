"""The ASL's Shared register records (S0..S255), bound to ptoc's Shared register file.

The harness keeps the register file as ptoc's executor does (``ptoc.runtime.shared``:
one immutable :class:`~ptoc.runtime.shared.SharedTile` per allocated register) in
``PtocModel.shared_tiles``; every bundle's fresh machine starts from it and a committed
bundle's writes come back (``PtocModel.run_bundle``). A test installs a register with
``InstallSharedTile`` / ``AtomicUpdateSharedTile``: the write of a ``TileInfo`` record's
valid, defined elements in the quarters its PE_MASK selects, checked and applied by
ptoc's ``compatible`` and ``updated`` (``SharedTileUpdateCompatible``,
``AtomicUpdateSharedTileWithPublication``) with the per-PE capacity rule of the
executor's Shared TLOAD. ptoc keeps Shared tiles RowMajor, the layout the matrix operands
read, so a CUBE-layout descriptor is never a Shared register's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import Family, info
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.fields import MASK_TO_PEMODE
from ptoc.backend.program import Ios
from ptoc.runtime.shared import (
    SharedTile,
    compatible,
    min_capacity,
    read_schema_rule,
    read_words,
    selected,
    updated,
)
from ptoc.runtime.tiles import Layout, Tile, poisoned, raw_bits

from ..outcome import NotApplicable
from ..values import Array, Bits, Enum, Record
from .bundle import current_start, issue
from .core import PtocModel, binding, model_variable
from .cube import cube_layout
from .harness import fail
from .tiles import TileInfo, carrier_values, data_type, from_ptoc

GROUP = "Shared tiles"


def _int(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)


def _cube(layout: Any) -> bool:
    return isinstance(layout, Enum) and cube_layout(layout) is not None


def _write(tile: TileInfo, mask: int) -> SharedTile | None:
    """The write ``tile`` stands for under ``mask``, or None when its descriptor is no
    Shared register's (unallocated, a predicate, not RowMajor)."""
    if not tile.allocated or tile.predicate or _cube(tile.layout):
        return None
    if tile.ptoc_layout is not Layout.ROW_MAJOR:
        return None
    dt, rows, cols = tile.dtype, tile.rows, tile.columns
    vr, vc, cap = tile.valid_rows, tile.valid_columns, tile.capacity_bytes
    values, defined = carrier_values(tile)
    quarter = isa_shared.quarters(rows, cols, info(dt).bits, cap)
    valid = np.zeros((rows, cols), bool)
    valid[:vr, :vc] = True
    written = selected(quarter, mask) & valid & defined
    payload = poisoned(dt, (rows, cols))
    payload[written] = values[written]
    payload.flags.writeable = False
    written.flags.writeable = False
    return SharedTile(dt, rows, cols, vr, vc, Layout.ROW_MAJOR, cap, mask, mask, True,
                      payload, written)  # fmt: skip


def _used(m: PtocModel) -> list[int]:
    """Per-PE bytes of the Local tiles and the allocated Shared registers (D2)."""
    used = [0] * 4
    for t, mask in zip(m.tiles, m.alloc_masks, strict=True):
        for pe in range(4):
            if t.allocated and _int(mask) >> (3 - pe) & 1:
                used[pe] += t.capacity_bytes
    for reg in m.shared_tiles.values():
        for pe in range(4):
            if reg.alloc_mask >> (3 - pe) & 1:
                used[pe] += reg.capacity
    return used


def _update(m: PtocModel, shared_id: Any, tile: TileInfo, mask: Any, publish: bool) -> bool:
    """Apply the write when ptoc accepts it (TRUE), else change nothing (FALSE)."""
    sid, pe_mask = _int(shared_id), _int(mask)
    if pe_mask == 0:
        return True
    new = _write(tile, pe_mask)
    if new is None or new.capacity > m.tile_capacity:
        return False
    old = m.shared_tiles.get(sid)
    if compatible(old, new, pe_mask) is not None:
        return False
    if old is None:
        used = _used(m)
        if any(used[pe] + new.capacity > m.tile_capacity
               for pe in range(4) if pe_mask >> (3 - pe) & 1):  # fmt: skip
            return False
    m.shared_tiles[sid] = updated(old, new, pe_mask, publish)
    return True


@binding("SharedTileUpdateCompatible")
def shared_update_compatible(m: PtocModel, shared_id: Any, tile: TileInfo, mask: Any) -> bool:
    """Whether ptoc would accept the write (the register file is left as it is)."""
    saved = dict(m.shared_tiles)
    try:
        return _update(m, shared_id, tile, mask, True)
    finally:
        m.shared_tiles = saved


@binding("AtomicUpdateSharedTileWithPublication")
def atomic_update_with_publication(
    m: PtocModel, shared_id: Any, tile: TileInfo, mask: Any, publish: Any
) -> bool:
    return _update(m, shared_id, tile, mask, bool(publish))


@binding("AtomicUpdateSharedTile")
def atomic_update(m: PtocModel, shared_id: Any, tile: TileInfo, mask: Any) -> bool:
    return _update(m, shared_id, tile, mask, True)


@binding("InstallSharedTile")
def install_shared_tile(m: PtocModel, shared_id: Any, tile: TileInfo, mask: Any) -> None:
    if not _update(m, shared_id, tile, mask, True):
        raise fail(
            m,
            "InstallSharedTile",
            f"ptoc rejects writing S{_int(shared_id)} with mask {_int(mask):04b}",
        )


def _record_tile(reg: SharedTile) -> TileInfo:
    """The ``TileInfo`` of a register's descriptor and written elements."""
    tile = Tile(
        reg.dtype, reg.rows, reg.cols, reg.valid_rows, reg.valid_cols, reg.layout,
        reg.alloc_mask, reg.capacity, reg.payload[None], reg.written[None],
    )  # fmt: skip
    return from_ptoc(tile, 0)


@binding("SharedTileRecord")
def shared_tile_record(m: PtocModel, shared_id: Any) -> Record:
    reg = m.shared_tiles.get(_int(shared_id))
    if reg is None:
        return Record(
            "SharedTileInfo",
            {
                "descriptor_valid": False,
                "allocation_mask": Bits(4, 0),
                "initialized_mask": Bits(4, 0),
                "published": False,
                "tile": TileInfo(),
            },
        )
    return Record(
        "SharedTileInfo",
        {
            "descriptor_valid": True,
            "allocation_mask": Bits(4, reg.alloc_mask),
            "initialized_mask": Bits(4, reg.init_mask),
            "published": reg.published,
            "tile": _record_tile(reg),
        },
    )


@binding("SharedTileFullyInitialized")
def shared_fully_initialized(m: PtocModel, shared_id: Any) -> bool:
    reg = m.shared_tiles.get(_int(shared_id))
    return reg is not None and reg.fully_initialized


@binding("SharedTileCapacityInUse")
def shared_capacity_in_use(m: PtocModel) -> int:
    """``TileCoreAllocationBytes`` summed over the allocated registers."""
    return sum(reg.capacity * bin(reg.alloc_mask).count("1") for reg in m.shared_tiles.values())


@binding("SharedTilePublished")
def shared_published(m: PtocModel, shared_id: Any) -> bool:
    reg = m.shared_tiles.get(_int(shared_id))
    return reg is not None and reg.fully_initialized and reg.published


def _schema_layout(layout: Any) -> Layout | None:
    """The ptoc layout of a ``TileLayout_*`` member (None: a CUBE layout)."""
    if _cube(layout):
        return None
    probe = TileInfo()
    probe.layout = layout
    return probe.ptoc_layout


@binding("SharedTileReadSchemaLegalAtCapacity")
def shared_read_schema_legal(
    m: PtocModel, shared_id: Any, vr: Any, vc: Any, cols: Any, dt: Any, layout: Any, cap: Any
) -> bool:
    lay = _schema_layout(layout)
    if lay is None:
        return False
    reg = m.shared_tiles.get(_int(shared_id))
    rule = read_schema_rule(reg, _int(vr), _int(vc), _int(cols), data_type(dt), lay, _int(cap),
                            m.tile_capacity)  # fmt: skip
    m.last_rejection = rule or ""
    return rule is None


@binding("SharedTileReadSchemaLegal")
def shared_read_schema_legal_any(
    m: PtocModel, shared_id: Any, vr: Any, vc: Any, cols: Any, dt: Any, layout: Any
) -> bool:
    """At the register's capacity, or (unallocated) the smallest that holds the shape."""
    reg = m.shared_tiles.get(_int(shared_id))
    dtype = data_type(dt)
    cap = (
        reg.capacity
        if reg is not None
        else min_capacity(_int(cols), _int(vr), _int(vc), info(dtype).bits)
    )
    return cap != 0 and shared_read_schema_legal(m, shared_id, vr, vc, cols, dt, layout, cap)


@binding("MinimumTileCapacityBytesForShape")
def minimum_capacity(m: PtocModel, cols: Any, vr: Any, vc: Any, dt: Any) -> int:
    return min_capacity(_int(cols), _int(vr), _int(vc), info(data_type(dt)).bits)


@binding("SharedTileCapacityIsLegal")
def shared_capacity_legal(m: PtocModel, cap: Any) -> bool:
    return isa_shared.capacity_legal(_int(cap), m.tile_capacity)


@binding("UndefinedSharedTileWord")
def undefined_shared_word(m: PtocModel, shared_id: Any, element: Any) -> Bits:
    """The undefined-register word ptoc reads for an element no write initialized (the
    full 64-bit word; a read as a DataType keeps its element width)."""
    e = _int(element)
    return Bits(64, int(isa_shared.undefined_words(_int(shared_id), 1, e + 1, 64)[0, e]))


@binding("ReadSharedTileWord")
def read_shared_word(m: PtocModel, shared_id: Any, element: Any) -> Bits:
    """Element ``element`` (RowMajor linear index) of the register as ptoc's Shared
    reads give it (``ptoc.runtime.shared.read_words``)."""
    sid, e = _int(shared_id), _int(element)
    reg = m.shared_tiles.get(sid)
    if reg is None:
        return undefined_shared_word(m, shared_id, element)
    r, c = divmod(e, reg.cols)
    values, _ = read_words(reg, sid, reg.dtype, reg.rows, reg.cols)
    if not selected(reg.quarter, reg.init_mask)[r, c]:
        return undefined_shared_word(m, shared_id, element)
    raw = int(raw_bits(values[r : r + 1, c : c + 1]).reshape(-1)[0])
    return Bits(64, raw & ((1 << info(reg.dtype).bits) - 1))


@binding("BundleSharedBindingCount")
def shared_binding_count(m: PtocModel) -> int:
    """The effective B.IOS bindings (a PE_MASK 0000 B.IOS binds nothing)."""
    return sum(1 for c in m.pending if isinstance(c, Ios) and c.mask)


@binding("BundleSharedTLSUSelected")
def shared_tlsu_selected(m: PtocModel) -> bool:
    start = current_start(m)
    if start is None or start.family is not Family.TLSU:
        return False
    return shared_binding_count(m) > 0 or start.selector in isa_shared.shared_functions()


def _accepted(m: PtocModel) -> bool:
    """Whether ptoc commits the open bundle (a dry run: nothing is kept)."""
    from .schema import dry_run

    f = dry_run(m).fault
    m.last_rejection = "" if f is None else f"{type(f).fault.value}: {f.rule}"
    return f is None


@binding("BundleSharedTMOVLocalSchemaLegal")
def shared_tmov_local_schema_legal(m: PtocModel) -> bool:
    """ptoc checks the schema of a TMOV Local -> Shared together with the rest of the
    bundle: the predicate is true when ptoc commits the open bundle."""
    return _accepted(m)


@binding("BundleSharedTMOVDestinationSchemaLegal")
def shared_tmov_destination_schema_legal(m: PtocModel, shared_id: Any, function: Any) -> bool:
    """As :func:`shared_tmov_local_schema_legal`, for TMOV Shared -> Local."""
    return _accepted(m)


def _shared_bindings(m: PtocModel) -> Array:
    """``_BundleSharedBindings``: the bundle's B.IOS commands in issue order, consumed
    once the bundle committed."""
    items = []
    for c in [c for c in m.pending if isinstance(c, Ios) and c.mask][:4]:
        items.append(
            Record(
                "BundleSharedBinding",
                {
                    "valid": True,
                    "shared_id": Bits(8, c.tid),
                    "size_code": c.size,
                    "pe_mask": Bits(4, c.mask),
                    "consumed": m.shared_consumed,
                },
            )
        )
    while len(items) < 4:
        items.append(
            Record(
                "BundleSharedBinding",
                {
                    "valid": False,
                    "shared_id": Bits(8, 0),
                    "size_code": 0,
                    "pe_mask": Bits(4, 0),
                    "consumed": False,
                },
            )
        )
    return Array(items)


model_variable("_BundleSharedBindings", _shared_bindings)


@binding("BindBundleSharedIO")
def bind_bundle_shared_io(m: PtocModel, shared_id: Any, size_code: Any, mask: Any) -> None:
    """Append the B.IOS the record stands for, after ptoc's header check (a rejected
    command records ptoc's fault and binds nothing)."""
    c = Ios(_int(shared_id), _int(mask), _int(size_code))
    if c.mask not in MASK_TO_PEMODE:
        raise NotApplicable(
            "asl-internal",
            f"a Shared binding with PE mask {c.mask:04b} has no B.IOS PEMode encoding "
            "(PTOv0PEMaskOfPEMode)",
        )
    if issue(m, c):
        m.pending.append(c)


__all__ = ["GROUP"]
