"""The ASL's Shared register records (S0..S255), as far as the harness mirrors them.

The executor keeps the Shared register file of a machine (``ptoc.runtime.shared``), but
each bundle of a test runs on a fresh machine, so the harness sees a Shared register
only while no bundle has committed: then every record is the ASL's reset record
(``descriptor_valid`` FALSE, masks zero) and no Shared capacity is in use. After a
commit, or for a test that installs a register (``InstallSharedTile``), these calls are
untranslated. The descriptor rules that reject a write or a read schema before any
record is consulted (a CUBE layout: ptoc keeps Shared tiles RowMajor, the layout the
matrix operands read) come from ptoc and hold at any time.
"""

from __future__ import annotations

from typing import Any

from ..outcome import Untranslated
from ..values import Bits, Enum, Record
from .core import PtocModel, binding
from .cube import cube_layout
from .tiles import TileInfo

GROUP = "Shared tiles"


def _int(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)


def _reset_file(m: PtocModel, name: str) -> None:
    """Untranslated unless the register file is still in its reset state."""
    if m.commits:
        raise Untranslated(
            f"{name} after a committed bundle (each bundle runs on a fresh machine)",
            group=GROUP,
        )


@binding("SharedTileRecord")
def shared_tile_record(m: PtocModel, shared_id: Any) -> Record:
    _reset_file(m, "SharedTileRecord")
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


@binding("SharedTileCapacityInUse")
def shared_capacity_in_use(m: PtocModel) -> int:
    _reset_file(m, "SharedTileCapacityInUse")
    return 0


def _cube(layout: Any) -> bool:
    return isinstance(layout, Enum) and cube_layout(layout) is not None


@binding("SharedTileUpdateCompatible")
def shared_update_compatible(m: PtocModel, shared_id: Any, tile: TileInfo, mask: Any) -> bool:
    """An empty PE_MASK updates nothing (TRUE); a CUBE-layout descriptor is never a
    Shared register's (FALSE); the rest compares with the register's record."""
    if _int(mask) == 0:
        return True
    if _cube(tile.layout):
        return False
    raise Untranslated("SharedTileUpdateCompatible of a RowMajor descriptor", group=GROUP)


@binding("SharedTileReadSchemaLegalAtCapacity")
def shared_read_schema_legal(
    m: PtocModel, shared_id: Any, vr: Any, vc: Any, cols: Any, dt: Any, layout: Any, cap: Any
) -> bool:
    if _cube(layout):
        return False
    raise Untranslated("SharedTileReadSchemaLegalAtCapacity of a RowMajor schema", group=GROUP)


__all__ = ["GROUP"]
