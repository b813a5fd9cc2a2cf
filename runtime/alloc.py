"""Destination descriptors: derived Rows, shape legality, fresh storage.

``DerivedTileRows`` / ``TileDescriptorShapeLegal`` (``asl/tile/model/shape``): a
destination of SizeCode ``s`` has ``2**(s+6)`` bytes per PE, physical Rows =
capacity_bits / (Col * element_bits), which must be an exact integer in 1..65535 with
Col a power of two, and must hold ValidRow (``Fault_TileAllocation`` otherwise).
Descriptors are computed once per bundle plan when the shape is static.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_MAX, PAD_NULL

from .spec import Shape, Spec
from .tiles import Layout, derived_rows, filled, pad_bits, poison_bits, size_code_bytes


@dataclass(frozen=True, slots=True)
class Slot:
    """The descriptor of destination ``k`` (binding order) before publication."""

    k: int
    hand: int
    dtype: DataType | None
    rows: int
    cols: int
    valid_rows: int
    valid_cols: int
    layout: Layout
    mask: int
    capacity: int
    carrier: np.dtype
    #: ``tiles.tile_maker`` of this descriptor by pad definedness, made on first use by
    #: ``engine.build_tile`` (not part of the descriptor's value)
    makers: dict[bool, object] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    #: ``engine.pooled_builder`` of this descriptor by (pad, PEs, machine PEs), made on
    #: first use by ``engine.build_tile`` (None: it takes no pool's block)
    builders: dict[tuple[int, tuple[int, ...], int], object] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )


@dataclass(frozen=True)
class Dests:
    """Destination descriptors computed ahead of time, or the allocation fault to raise
    when the bundle runs (after its source checks)."""

    slots: tuple[Slot, ...]
    push: tuple[tuple[int, int, int], ...]
    fault: str | None = None


def make_dests(
    spec: Spec, mask: int, specs: tuple[tuple[DataType, Shape, Layout], ...]
) -> Dests:
    """Derived Rows and shape legality of every destination (``DerivedTileRows``,
    ``TileDescriptorShapeLegal``); failures become a deferred ``Fault_TileAllocation``."""
    dests = spec.plan.destinations
    assert len(specs) == len(dests)
    slots = []
    for k, ((dt, shape, layout), (hand, size)) in enumerate(zip(specs, dests, strict=True)):
        rows, cap, carrier = _geometry(dt, size, shape.cols)
        if rows == 0:
            return Dests((), (), (
                f"{cap}-byte TSize cannot hold whole {dt.name} rows of Col {shape.cols} "
                "(Rows = capacity_bits / (Col * bits) must be an integer in 1..65535 and "
                "Col a power of two)"
            ))  # fmt: skip
        if shape.valid_rows > rows or shape.valid_cols > shape.cols:
            return Dests((), (), (
                f"{dt.name} {shape.valid_rows}x{shape.valid_cols} of Col {shape.cols} does "
                f"not fit the {rows}x{shape.cols} tile of a {cap}-byte TSize"
            ))  # fmt: skip
        slots.append(Slot(k, int(hand), dt, rows, shape.cols, shape.valid_rows,
                          shape.valid_cols, layout, mask, cap, carrier))  # fmt: skip
    return Dests(tuple(slots), tuple((s.hand, s.mask, s.capacity) for s in slots))


_GEOMETRY: dict[tuple[int, int, int], tuple[int, int, np.dtype]] = {}


def _geometry(dt: DataType, size: int, cols: int) -> tuple[int, int, np.dtype]:
    """(derived Rows or 0, per-PE capacity, carrier) of a destination, memoised."""
    key = (int(dt), size, cols)
    g = _GEOMETRY.get(key)
    if g is None:
        cap = size_code_bytes(size)
        i = info(dt)
        g = _GEOMETRY[key] = (derived_rows(cap, cols, i.bits), cap, i.carrier)
    return g


_TEMPLATES: dict[tuple[DataType | None, tuple[int, ...], int], np.ndarray] = {}


def template(dt: DataType | None, shape: tuple[int, ...], pad: int) -> np.ndarray:
    """A storage array filled with ``pad`` (Null: poison), to copy from and never to
    write: kept (read-only) for small shapes, built afresh (writable) for large ones."""
    key = (dt, shape, pad)
    t = _TEMPLATES.get(key)
    if t is None:
        if dt is None:
            t = np.full(shape, pad == PAD_MAX, bool)
        else:
            t = filled(dt, shape, poison_bits(dt) if pad == PAD_NULL else pad_bits(dt, pad))
        if t.nbytes <= 1 << 16 and len(_TEMPLATES) < 512:
            t.flags.writeable = False
            _TEMPLATES[key] = t
    return t


def fresh(dt: DataType | None, shape: tuple[int, ...], pad: int) -> np.ndarray:
    """A new storage array filled with ``pad`` (Null: poison), copied from a template."""
    t = template(dt, shape, pad)
    return t if t.flags.writeable else t.copy()  # a large one is already new
