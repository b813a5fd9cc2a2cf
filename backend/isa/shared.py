"""Shared tiles: the core's register file S0..S255 and how a matrix bundle reads it.

A Shared register (``asl/tile/model/state/shared-registers.asl``) is one core-wide tile
that all four PEs see: a descriptor (DataType, Rows x Col, ValidRow x ValidCol, layout,
per-PE capacity), an *allocation mask* fixed by the first write, an *initialized mask*
(the quarters written so far) and a *published* bit. Its payload is split into four
fixed-offset quarters by byte offset (``SharedTileElementRegion``): quarter ``q`` holds
the elements whose byte offset lies in ``[q * capacity / 4, (q + 1) * capacity / 4)``
and is the part PE ``q`` writes. A write updates only the quarters of its PE_MASK, and
only a descriptor-compatible write may update an allocated register
(``SharedTileUpdateCompatible``); the register keeps its allocation until reset.

A matrix bundle reads a Shared operand only when it is *cooperatively ready*
(``SharedTileCooperativeMatrixReady``): allocated and initialized on all four PEs
(``1111``), published, its contents defined. Shared matrix operands come in complete
groups (``TileMatrixSharedSourceCountLegal``): the right group (B and, for an MX type
that needs one, its E8M0 scale) or both groups (the left group first); TGEMV is
Local-only.
"""

from __future__ import annotations

import enum
from functools import cache

import numpy as np

from .cube import MatrixFunction

#: ``PTO_SHARED_TILE_COUNT``: registers S0..S255 per core
SHARED_TILE_COUNT = 256
#: ``PTO_SHARED_TILE_MAX_ALLOCATION_BYTES`` (B.IOS SizeCode 1..12: 128 B .. 256 KiB)
MAX_ALLOCATION_BYTES = 262144
#: B.IOS SizeCodes of a destination; 0 names a source
DESTINATION_SIZE_CODES = range(1, 13)
#: the participation a matrix bundle's Shared operand needs (PE0..PE3, PE0 the high bit)
COOPERATIVE_MASK = 0b1111
#: B.IOS bindings a bundle may carry (``_BundleSharedBindings``)
MAX_BINDINGS = 4


#: ``PTO_TILE_CELL_BYTES``: a Shared capacity is a whole number of 128-byte cells
CELL_BYTES = 128
#: the TLSU Functions of the plain TLOAD and TSTORE words (``BSTART.TLOAD``/``TSTORE``),
#: which a B.IOS turns into their Shared forms
TLOAD_FUNCTION = 0
TSTORE_FUNCTION = 1


@cache
def variant_function(word: str) -> int:
    """The TLSU Function of a BSTART encoding variant (``BSTART.TSTORE.SPART`` -> 14),
    from the catalog's ``encoding_variants``."""
    from . import catalog

    return catalog.FORM_VARIANTS[word][1]


def tstore_partial_function() -> int:
    """Function 14, ``TSTORE.SPART``: a Shared TSTORE of any nonzero PE subset."""
    return variant_function("BSTART.TSTORE.SPART")


def tmov_insert_functions() -> tuple[int, int]:
    """Functions 9 and 10: TMOV Local -> Shared (insert; insert and publish)."""
    return (variant_function("BSTART.TMOV.L2S.INSERT"),
            variant_function("BSTART.TMOV.L2S.PUBLISH"))  # fmt: skip


def tmov_publish_function() -> int:
    """Function 10: the insert that publishes a register it completes."""
    return variant_function("BSTART.TMOV.L2S.PUBLISH")


def tmov_extract_functions() -> tuple[int, int]:
    """Functions 11 and 12: TMOV Shared -> Local (broadcast of a published all-PE
    register; extract of any register under any mask)."""
    return (variant_function("BSTART.TMOV.S2L.BROADCAST"),
            variant_function("BSTART.TMOV.S2L.EXTRACT"))  # fmt: skip


def tmov_broadcast_function() -> int:
    """Function 11: needs mask 1111, allocation 1111 and a published register."""
    return variant_function("BSTART.TMOV.S2L.BROADCAST")


@cache
def shared_functions() -> frozenset[int]:
    """The TLSU Functions that always take the Shared path (``BundleSharedTLSUSelected``:
    9..12 and 14; the others only when the bundle binds a B.IOS)."""
    from . import catalog

    return frozenset(fn for _, fn in catalog.FORM_VARIANTS.values())


def store_mask_legal(function: int, mask: int) -> bool:
    """``SharedStorePEMaskLegal``: Function 1 stores all four PEs, Function 14 any
    nonzero subset; mask 0000 is a no-op."""
    if mask == 0:
        return True
    if function == TSTORE_FUNCTION:
        return mask == COOPERATIVE_MASK
    return function == tstore_partial_function()


def capacity_legal(capacity: int, limit: int) -> bool:
    """``SharedTileCapacityIsLegal``: whole cells, at most 256 KiB and the machine's
    per-PE capacity."""
    return (
        capacity >= CELL_BYTES
        and capacity % CELL_BYTES == 0
        and capacity <= MAX_ALLOCATION_BYTES
        and capacity <= limit
    )


def undefined_words(tid: int, rows: int, cols: int, bits: int) -> np.ndarray:
    """``UndefinedSharedTileWord`` of every element, truncated to the element width: the
    register number XOR the element index (uint64 (Rows, Col)). The value an element
    of an unallocated register or an uninitialized quarter reads as."""
    index = np.arange(rows * cols, dtype=np.uint64).reshape(rows, cols)
    words = index ^ np.uint64(tid)
    return words & np.uint64((1 << bits) - 1) if bits < 64 else words


def quarters(rows: int, cols: int, bits: int, capacity: int) -> np.ndarray:
    """``SharedTileElementRegion`` of every element of a RowMajor Rows x Col tile: the
    quarter (and so the PE) that owns it, shape (Rows, Col), int8."""
    index = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    byte = index * bits // 8
    return (byte * 4 // capacity).astype(np.int8)


class SharedGroups(enum.Enum):
    """Which matrix operand groups of a bundle are Shared."""

    NONE = "none"
    RIGHT = "right"
    BOTH = "both"


def group_size(fn: MatrixFunction, scaled: bool) -> int:
    """``TileMatrix{Left,Right}GroupSourceCount``: the primary, plus its E8M0 scale when
    the side's MX type needs one."""
    return 2 if fn.mx and scaled else 1


def shared_groups(
    fn: MatrixFunction, a_scaled: bool, b_scaled: bool, count: int
) -> SharedGroups | None:
    """The groups ``count`` B.IOS sources carry, or None when no complete grouping
    matches (``TileMatrixSharedSourceCountLegal``)."""
    if count == 0:
        return SharedGroups.NONE
    if fn.gemv:
        return None
    right = group_size(fn, b_scaled)
    if count == right:
        return SharedGroups.RIGHT
    if count == group_size(fn, a_scaled) + right:
        return SharedGroups.BOTH
    return None


def is_power_of_two(v: int) -> bool:
    """``IsNonzeroPowerOfTwo``: a bundle with Shared operands needs M, N and K of this
    form (``BundleTMATMULDimensionsLegal``)."""
    return v > 0 and v & (v - 1) == 0


__all__ = [
    "CELL_BYTES",
    "COOPERATIVE_MASK",
    "DESTINATION_SIZE_CODES",
    "MAX_ALLOCATION_BYTES",
    "MAX_BINDINGS",
    "SHARED_TILE_COUNT",
    "TLOAD_FUNCTION",
    "TSTORE_FUNCTION",
    "SharedGroups",
    "capacity_legal",
    "group_size",
    "is_power_of_two",
    "quarters",
    "shared_functions",
    "shared_groups",
    "store_mask_legal",
    "tmov_broadcast_function",
    "tmov_extract_functions",
    "tmov_insert_functions",
    "tmov_publish_function",
    "tstore_partial_function",
    "undefined_words",
    "variant_function",
]
