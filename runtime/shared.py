"""Shared tiles: the core's register file S0..S255 (``ptoc.backend.isa.shared``).

A :class:`SharedTile` is one register's value: descriptor, allocation mask (fixed by
the first write), initialized mask, published bit, and one core-wide payload split into
four fixed-offset quarters, quarter ``q`` written by PE ``q``
(``SharedTileElementRegion``). Records are immutable: a write builds the next record
(:func:`updated`, ``AtomicUpdateSharedTileWithPublication``) and the executor installs it
at commit, so a rejected bundle leaves the register as it was.

Capacity (DECISIONS D2 applied to ``TileCoreAllocationBytes``): an allocated Shared
register of capacity ``C`` occupies ``C`` bytes on every PE of its allocation mask, in
the same per-PE budget as the Local queues; a first write that would exceed a PE's
capacity is rejected (``SharedTileUpdateCompatible``: ``Fault_TileLegality``). The
register keeps its allocation (and its capacity) until the machine is reset.

ptoc keeps Shared tiles in the RowMajor layout, the one the matrix operands read
(``BundleMatrixSharedSourceSchemaLegal``); another layout is an unsupported operation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.fields import mask_text

from .tiles import Layout, derived_rows, from_raw

_MASK_BIT = (0b1000, 0b0100, 0b0010, 0b0001)  # quarter/PE q -> its PE_MASK bit


@dataclass(frozen=True, eq=False)
class SharedTile:
    """One Shared register's value. ``payload``/``written`` are (Rows, Col): the carrier
    values and which elements a write has stored (the valid elements of initialized
    quarters)."""

    dtype: DataType
    rows: int
    cols: int
    valid_rows: int
    valid_cols: int
    layout: Layout
    capacity: int
    alloc_mask: int
    init_mask: int
    published: bool
    payload: np.ndarray
    written: np.ndarray

    @property
    def quarter(self) -> np.ndarray:
        """The owning quarter of every element, (Rows, Col)."""
        return isa_shared.quarters(self.rows, self.cols, info(self.dtype).bits, self.capacity)

    @property
    def fully_initialized(self) -> bool:
        """``SharedTileFullyInitialized``: every allocated quarter is written."""
        return self.init_mask == self.alloc_mask

    @property
    def contents_defined(self) -> bool:
        """Every valid element holds a written value (true once fully initialized)."""
        return bool(self.written[: self.valid_rows, : self.valid_cols].all())

    @property
    def matrix_ready(self) -> bool:
        """``SharedTileCooperativeMatrixReady``: allocated and initialized on all four
        PEs, published, contents defined."""
        full = isa_shared.COOPERATIVE_MASK
        return (
            self.alloc_mask == full
            and self.init_mask == full
            and self.published
            and self.contents_defined
        )

    @property
    def shape_text(self) -> str:
        return (
            f"{self.dtype.name} {self.valid_rows}x{self.valid_cols} of {self.rows}x{self.cols} "
            f"{self.layout.value}, {self.capacity} B per PE, allocated "
            f"mask={mask_text(self.alloc_mask)}, initialized mask={mask_text(self.init_mask)}"
            f"{', published' if self.published else ', not published'}"
        )

    def record(self) -> tuple[object, ...]:
        """A value-comparable copy (for machine snapshots)."""
        return (
            self.dtype, self.rows, self.cols, self.valid_rows, self.valid_cols, self.layout,
            self.capacity, self.alloc_mask, self.init_mask, self.published,
            self.payload.view(np.uint8).tobytes(), self.written.tobytes(),
        )  # fmt: skip


def mask_bits(q: int) -> int:
    """The PE_MASK bit of PE (quarter) ``q``."""
    return _MASK_BIT[q]


def selected(quarter: np.ndarray, mask: int) -> np.ndarray:
    """Which elements lie in a quarter that ``mask`` selects, bool like ``quarter``."""
    sel = np.zeros(quarter.shape, bool)
    for q in range(4):
        if mask & _MASK_BIT[q]:
            sel |= quarter == q
    return sel


def compatible(old: SharedTile | None, new: SharedTile, mask: int) -> str | None:
    """``SharedTileUpdateCompatible`` against the allocated register (capacity is the
    caller's): a write to an allocated register stays inside its allocation mask and
    keeps its descriptor. None when compatible, else the rule."""
    if old is None:
        return None
    if mask & ~old.alloc_mask:
        return (
            f"mask={mask_text(mask)} writes PEs outside the register's allocation "
            f"mask={mask_text(old.alloc_mask)}, fixed by its first write"
        )
    if (old.dtype, old.rows, old.cols, old.valid_rows, old.valid_cols, old.layout,
            old.capacity) != (new.dtype, new.rows, new.cols, new.valid_rows, new.valid_cols,
                              new.layout, new.capacity):  # fmt: skip
        return (
            f"the write's descriptor {new.dtype.name} {new.valid_rows}x{new.valid_cols} of "
            f"{new.rows}x{new.cols}, {new.capacity} B differs from the allocated register's "
            f"({old.shape_text}); an allocated Shared register keeps its descriptor"
        )
    return None


def updated(old: SharedTile | None, new: SharedTile, mask: int, publish: bool) -> SharedTile:
    """The record after writing the ``mask`` quarters of ``new`` (already checked by
    :func:`compatible`): ``AtomicUpdateSharedTileWithPublication``. A first write
    allocates with ``mask``; a later one copies the selected quarters' written elements
    and publishes once every allocated quarter is initialized."""
    if old is None:
        return SharedTile(
            new.dtype, new.rows, new.cols, new.valid_rows, new.valid_cols, new.layout,
            new.capacity, mask, mask, publish, new.payload, new.written,
        )  # fmt: skip
    sel = selected(new.quarter, mask) & new.written
    payload = np.where(sel, new.payload, old.payload)
    written = old.written | sel
    payload.flags.writeable = False
    written.flags.writeable = False
    init = old.init_mask | mask
    complete = init == old.alloc_mask
    return SharedTile(
        old.dtype, old.rows, old.cols, old.valid_rows, old.valid_cols, old.layout,
        old.capacity, old.alloc_mask, init, old.published or (publish and complete),
        payload, written,
    )  # fmt: skip


def shape_legal(capacity: int, cols: int, valid_rows: int, valid_cols: int, bits: int) -> bool:
    """``TileDescriptorShapeLegal``: the capacity holds whole rows of Col elements, at
    least ValidRow of them, and ValidCol <= Col."""
    rows = derived_rows(capacity, cols, bits)
    return (
        rows != 0
        and valid_rows <= rows
        and valid_cols <= cols
        and valid_rows * valid_cols <= capacity * 8 // bits
    )


def min_capacity(cols: int, valid_rows: int, valid_cols: int, bits: int) -> int:
    """``MinimumTileCapacityBytesForShape``: the smallest Shared capacity (SizeCode 1..12)
    whose descriptor holds the shape, 0 when none does. The capacity an unallocated
    register is read at when the bundle names none."""
    for code in isa_shared.DESTINATION_SIZE_CODES:
        cap = 1 << (code + 6)
        if shape_legal(cap, cols, valid_rows, valid_cols, bits):
            return cap
    return 0


def read_schema_rule(
    reg: SharedTile | None,
    valid_rows: int,
    valid_cols: int,
    cols: int,
    dt: DataType,
    layout: Layout,
    capacity: int,
    limit: int,
) -> str | None:
    """``SharedTileReadSchemaLegalAtCapacity``: why a read of ``reg`` (None: the register
    is unallocated) as ``dt`` ValidRow x ValidCol of Col in ``layout`` at ``capacity``
    bytes is illegal, or None. An allocated register is read only at its own capacity,
    Col, DataType and layout and within its valid region; an unallocated one at any
    legal descriptor."""
    want = f"{dt.name} {valid_rows}x{valid_cols} of Col {cols} {layout.value}"
    if layout.cube is not None:
        return f"a Shared register is never read in the CUBE layout {layout.value}"
    if reg is not None:
        if (reg.capacity, reg.cols, reg.dtype, reg.layout) != (capacity, cols, dt, layout):
            return (
                f"the read schema {want} at {capacity} B per PE differs from the "
                f"register's descriptor ({reg.shape_text}): capacity, Col, DataType and "
                "layout must match"
            )
        if valid_rows > reg.valid_rows or valid_cols > reg.valid_cols:
            return (
                f"the read schema {want} exceeds the register's "
                f"{reg.valid_rows}x{reg.valid_cols} valid region"
            )
        return None
    if not isa_shared.capacity_legal(capacity, limit):
        return (
            f"{capacity} B is no legal Shared capacity (whole 128-byte cells, at most "
            f"{min(limit, isa_shared.MAX_ALLOCATION_BYTES)} B per PE)"
        )
    if not shape_legal(capacity, cols, valid_rows, valid_cols, info(dt).bits):
        return (
            f"a {capacity}-byte Shared descriptor holds no {want} (TileDescriptorShapeLegal: "
            "Rows = capacity_bits / (Col * bits) >= ValidRow, ValidCol <= Col)"
        )
    return None


def read_words(
    reg: SharedTile | None, tid: int, dt: DataType, rows: int, cols: int
) -> tuple[np.ndarray, np.ndarray]:
    """``ReadSharedTileWord`` of every element of a Rows x Col read of register ``tid``
    (``reg`` its record, None when unallocated, else of the same geometry): (carrier
    values, definedness), both (Rows, Col). An element of an initialized quarter reads
    the stored value (defined where a write stored it); an element of an uninitialized
    quarter or of an unallocated register reads the undefined-register word
    (:func:`~ptoc.backend.isa.shared.undefined_words`), a value and not a fault."""
    undef = from_raw(dt, isa_shared.undefined_words(tid, rows, cols, info(dt).bits))
    if reg is None:
        return undef, np.ones((rows, cols), bool)
    assert (reg.rows, reg.cols) == (rows, cols)
    init = selected(reg.quarter, reg.init_mask)
    return np.where(init, reg.payload, undef), np.where(init, reg.written, True)


__all__ = [
    "SharedTile",
    "compatible",
    "mask_bits",
    "min_capacity",
    "read_schema_rule",
    "read_words",
    "selected",
    "shape_legal",
    "updated",
]
