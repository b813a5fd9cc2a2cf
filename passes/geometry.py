"""Physical tile geometry: Rows x Col and the SizeCode of a tile type.

A tile's physical Col is its extent's column count rounded up to a power of two and its
Rows the extent's row count rounded up to a power of two -- but at least ``1024 / Col``,
so that even an 8-bit tile of that geometry fills the 128-byte minimum allocation. The
SizeCode is then exactly ``Rows * Col * bits / 8`` bytes (Rows are derived from it,
REFERENCE 5.1). The geometry depends on the extent only, never on the DataType: the
operations that change DataType (TCVT, TQUANT, TDEQUANT, TCMP, the TSORT index) require
source and destination physical shapes to match, and equal tile types must get equal
descriptors for the elementwise operations.
"""

from __future__ import annotations

from functools import cache

from ptoc.backend.isa.fields import size_bytes
from ptoc.backend.target import MachineConfig
from ptoc.dialects.dtypes import element_bits
from ptoc.dialects.pto_types import MAX_SIZE_CODE, PtoTileType
from ptoc.dialects.tile_types import TileType

#: one Local allocation holds at most 64 KiB per PE
MAX_TILE_BYTES = size_bytes(MAX_SIZE_CODE)


def default_tile_limit(target: MachineConfig) -> int:
    """The split threshold for a machine, a power of two between 128 bytes and one
    allocation: at most a quarter of the capacity (an operation's sources and result fit
    together) and at most ``capacity / depth``, so that a hand's worth of pieces fits --
    a dead tile holds its bytes until ``depth`` more pushes evict it (DECISIONS D2), and
    larger pieces would need filler bundles to release them."""
    share = max(128, target.capacity // max(4, target.depth))
    return min(MAX_TILE_BYTES, 1 << (share.bit_length() - 1))


def pow2_ceil(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


#: Rows * Col of every tile is at least this (128 bytes of 8-bit elements)
MIN_ELEMENTS = 128


@cache
def physical_shape(extent: tuple[int, int]) -> tuple[int, int]:
    """Physical (Rows, Col) of a tile extent, the same for every DataType."""
    cols = pow2_ceil(extent[1])
    rows = max(pow2_ceil(extent[0]), MIN_ELEMENTS // cols if cols < MIN_ELEMENTS else 1)
    return rows, cols


@cache
def tile_bytes(t: TileType) -> int:
    """Per-PE bytes a tile of this type occupies (may exceed one allocation, which
    ``legalize`` then splits)."""
    rows, cols = physical_shape(t.extent)
    return max(128, rows * cols * element_bits(t.dtype) // 8)


@cache
def pto_type(t: TileType) -> PtoTileType | None:
    """The descriptor of a tile type, or None when it exceeds one allocation."""
    rows, cols = physical_shape(t.extent)
    nbytes = tile_bytes(t)
    if nbytes > MAX_TILE_BYTES:
        return None
    code = nbytes.bit_length() - 7
    d = PtoTileType(t.dtype, t.valid, cols, code)
    assert d.rows >= rows or element_bits(t.dtype) == 1, (t, d)
    return d
