"""Local tile descriptors, payload storage, padding, poison and definedness.

A :class:`Tile` is immutable once published: every destination is a new tile (sources
persist, D1). Its payload is ONE array ``(pes, Rows, Col)`` in the DataType's carrier
dtype (``bool`` for predicate tiles), indexed by logical ``[row, col]`` for every
layout: the ASL addresses every generic layout through ``TileLinearIndex``, so the
physical placement (row-major, column-major, ZN, NZ) is descriptor state that changes
legality but never which logical element an operation reads
(``asl/tile/model/definedness/elements.asl``).

Definedness (D6): ``defined`` is None for the common case -- the valid region is
defined on every PE of the allocation mask and the padding is defined iff the padding
was Zero/Max/Min -- and an explicit ``(pes, Rows, Col)`` bool array otherwise. PEs
outside the allocation mask are always undefined. Undefined storage holds a poison
pattern: the canonical quiet NaN for floating types that have one, 0xA5 bytes
(truncated to the element width) for everything else.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.cube import TRANSPORT_CODES, CubeLayout
from ptoc.backend.isa.datatypes import bits_dtype
from ptoc.backend.isa.elements import ElementType
from ptoc.backend.isa.fields import PAD_NULL, mask_pes
from ptoc.backend.isa.semantics.core import pad_value
from ptoc.backend.isa.semantics.floatfmt import CANONICAL_NAN


class Layout(enum.Enum):
    """Architectural tile layouts: the four with generic indexing and the three CUBE cell
    layouts (``backend/isa/cube.py``). A CUBE tile lives in the Matrix location, every
    other tile in Any, so the layout also says the location."""

    ROW_MAJOR = "RowMajor"
    COL_MAJOR = "ColumnMajor"
    ZN = "ZN"
    NZ = "NZ"
    CUBE_M16 = "CUBE_M16"
    CUBE_M32 = "CUBE_M32"
    CUBE_N8 = "CUBE_N8"

    @property
    def cube(self) -> CubeLayout | None:
        """The CUBE layout this is, or None for a generic layout."""
        return _CUBE_OF.get(self)

    @classmethod
    def of_cube(cls, layout: CubeLayout) -> Layout:
        return cls(layout.value)


_CUBE_OF: dict[Layout, CubeLayout] = {Layout(c.value): c for c in CubeLayout}
#: the CUBE layouts (not generically indexable: ``TileGenericIndexingPermitted``)
CUBE_LAYOUTS = frozenset(_CUBE_OF)
_RM, _CM, _ZN, _NZ = Layout.ROW_MAJOR, Layout.COL_MAJOR, Layout.ZN, Layout.NZ
#: B.DATR.Layout code -> (source layout, destination layout), from
#: ``TileDataLayoutSourceLayout`` / ``TileDataLayoutDestinationLayout``
#: (``asl/block/model/state/control-state.asl``).
LAYOUT_TRANSFORMS: dict[int, tuple[Layout, Layout]] = {
    0: (_RM, _RM), 1: (_RM, _CM), 3: (_RM, _ZN), 4: (_RM, _NZ),
    6: (_CM, _RM), 8: (_CM, _ZN), 9: (_CM, _NZ),
    17: (_ZN, _RM), 18: (_ZN, _CM), 20: (_ZN, _NZ),
    27: (_NZ, _RM), 28: (_NZ, _CM), 30: (_NZ, _ZN),
}  # fmt: skip
#: ND2M32, ND2M16, ND2N8, M322ND, M162ND, N82ND: the CUBE transport conversions
CUBE_LAYOUT_CODES = TRANSPORT_CODES

#: the fixed byte of the integer poison pattern
POISON_BYTE = 0xA5


def size_code_bytes(code: int) -> int:
    """Per-PE bytes of a Local SizeCode 1..10: 2**(code+6)."""
    return 1 << (code + 6)


def derived_rows(capacity: int, cols: int, bits: int) -> int:
    """``DerivedTileRows``: capacity_bits / (Col * bits) when exact and in 1..65535 with Col
    a nonzero power of two <= 32768; 0 when no legal row count exists."""
    if capacity <= 0 or cols <= 0 or cols > 32768 or cols & (cols - 1):
        return 0
    row_bits = cols * bits
    cap_bits = capacity * 8
    if cap_bits % row_bits:
        return 0
    rows = cap_bits // row_bits
    return rows if 1 <= rows <= 65535 else 0


def fractal_inner(bits: int) -> int:
    """``TileFractalInnerElements``: one 32-byte fractal row holds 256/bits elements."""
    return 256 // bits


def layout_shape_legal(layout: Layout, rows: int, cols: int, bits: int) -> bool:
    """``TileLayoutShapeLegal``: fractal layouts need Rows % 16 == 0 and whole fractal rows."""
    if layout in (_RM, _CM):
        return True
    return rows % 16 == 0 and cols % fractal_inner(bits) == 0


@cache
def poison_bits(dt: DataType) -> int:
    """Raw bits of the poison element of ``dt`` (see the module docstring)."""
    nan = CANONICAL_NAN.get(DataType(dt))
    if nan is not None:
        return nan
    bits = info(dt).bits
    return int.from_bytes(bytes([POISON_BYTE]) * 8, "little") & ((1 << bits) - 1)


def _container(dt: DataType) -> np.dtype:
    return bits_dtype(info(dt).carrier.itemsize * 8)


def filled(dt: DataType, shape: tuple[int, ...], raw: int) -> np.ndarray:
    """A carrier array of ``shape`` whose every element has raw bits ``raw``."""
    return np.full(shape, raw, _container(dt)).view(info(dt).carrier)


def from_raw(dt: DataType, raw: np.ndarray) -> np.ndarray:
    """The carrier array whose elements have the raw bits ``raw`` (unsigned integers,
    already truncated to the element width)."""
    return np.asarray(raw).astype(_container(dt)).view(info(dt).carrier)


def poisoned(dt: DataType | None, shape: tuple[int, ...]) -> np.ndarray:
    """Fresh (undefined) storage: poison for numeric tiles, False bits for predicates."""
    if dt is None:
        return np.zeros(shape, bool)
    return filled(dt, shape, poison_bits(dt))


@cache
def pad_bits(dt: DataType, pad: int) -> int:
    """Raw bits of PadValue ``pad`` (0 Zero, 1 Max, 2 Min) for ``dt``
    (``TilePadValueForDataType`` via ``semantics.core.pad_value``)."""
    v = np.asarray(pad_value(dt, pad)).reshape(1)
    return int(v.view(_container(dt))[0])


def raw_bits(a: np.ndarray) -> np.ndarray:
    """A same-width unsigned view of a carrier array (for bit-exact comparisons)."""
    a = np.ascontiguousarray(a)
    if a.dtype == bool:
        return a.view(np.uint8)
    return a.view(bits_dtype(a.dtype.itemsize * 8))


@dataclass(eq=False, slots=True)
class Tile:
    """One published Local tile: descriptor, payload and definedness. Never mutated
    after publication (not frozen only because frozen dataclasses construct slowly).

    ``dtype`` is None for a predicate tile (1 bit per logical element, storage
    ceil(Rows*Col/8) bytes per PE). ``capacity`` is the per-PE byte size of its SizeCode;
    ``mask`` the PE_MASK that allocated it (PE0 = bit 3). ``serial`` numbers tiles in
    creation order (for traces).
    """

    dtype: DataType | None
    rows: int
    cols: int
    valid_rows: int
    valid_cols: int
    layout: Layout
    mask: int
    capacity: int
    payload: np.ndarray
    defined: np.ndarray | None = None
    pad_defined: bool = False
    serial: int = 0
    #: (dtype, layout, ValidRow, ValidCol, Col, Rows, defined) for one-comparison checks
    key: tuple[object, ...] = field(init=False, repr=False)
    #: read-only valid-region arrays by participating PEs (``Ctx.values``), made on use
    views: dict[object, np.ndarray] | None = field(default=None, init=False, repr=False)
    #: whether the valid region on the PEs of ``mask`` holds no NaN and no infinity
    #: (None: not known yet; every reader's PEs lie within ``mask``); facts about the
    #: immutable payload, like ``views``, recorded once
    finite: bool | None = field(default=None, init=False, repr=False)
    #: the every-PE valid region's NX probe sample (``fastpath.probe_sample``)
    sample: list[list[float]] | None = field(default=None, init=False, repr=False)
    #: the payload's address for compiled kernels (0: not asked yet)
    address: int = field(default=0, init=False, repr=False)
    #: for a tile computed from the program alone (``memo.ConstantMemo``): the result it
    #: repeats; tiles of one origin are equal in every field (None: any other tile)
    origin: object = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.key = (self.dtype, self.layout, self.valid_rows, self.valid_cols, self.cols,
                    self.rows, self.defined is None)  # fmt: skip

    def __getstate__(self) -> list[object]:
        # the payload's address belongs to this process: an unpickled tile asks again
        return [0 if name == "address" else getattr(self, name) for name in _TILE_SLOTS]

    def __setstate__(self, state: list[object]) -> None:
        for name, value in zip(_TILE_SLOTS, state, strict=True):
            object.__setattr__(self, name, value)

    @property
    def is_predicate(self) -> bool:
        return self.dtype is None

    @property
    def type_name(self) -> str:
        return ElementType(self.dtype).name

    @property
    def shape_text(self) -> str:
        return (
            f"{self.type_name} {self.valid_rows}x{self.valid_cols} of "
            f"{self.rows}x{self.cols} {self.layout.value} mask={self.mask:04b}"
        )

    def definedness(self) -> np.ndarray:
        """The full per-element definedness ``(pes, Rows, Col)``."""
        if self.defined is not None:
            return self.defined
        pes = self.payload.shape[0]
        d = np.zeros((pes, self.rows, self.cols), bool)
        for pe in mask_pes(self.mask):
            if pe >= pes:
                continue
            if self.pad_defined:
                d[pe] = True
            else:
                d[pe, : self.valid_rows, : self.valid_cols] = True
        return d

    def valid_defined(self, pes: tuple[int, ...]) -> bool:
        """Whether every valid element is defined on each PE of ``pes``."""
        if self.defined is None:
            return True  # callers have checked that the allocation mask covers ``pes``
        return bool(self.defined[list(pes), : self.valid_rows, : self.valid_cols].all())


#: every field of a Tile, in order (its pickled state)
_TILE_SLOTS: tuple[str, ...] = tuple(Tile.__slots__)


def tile_maker(
    dtype: DataType | None,
    rows: int,
    cols: int,
    valid_rows: int,
    valid_cols: int,
    layout: Layout,
    mask: int,
    capacity: int,
    pad_defined: bool,
) -> Callable[[np.ndarray, int, bool | None, int], Tile]:
    """A constructor of tiles of one descriptor (every definedness implicit, ``defined``
    None) for runners that publish many: ``make(payload, serial, finite, address)``
    equals ``Tile(dtype, ..., payload, None, pad_defined)`` with those three facts set,
    in half the time (the descriptor and its key are bound once)."""
    key = (dtype, layout, valid_rows, valid_cols, cols, rows, True)
    new = object.__new__

    def make(payload: np.ndarray, serial: int, finite: bool | None, address: int) -> Tile:
        t = new(Tile)  # one store per slot (a tuple assignment builds a tuple first)
        t.dtype = dtype
        t.rows = rows
        t.cols = cols
        t.valid_rows = valid_rows
        t.valid_cols = valid_cols
        t.layout = layout
        t.mask = mask
        t.capacity = capacity
        t.payload = payload
        t.defined = None
        t.pad_defined = pad_defined
        t.serial = serial
        t.key = key
        t.views = None
        t.finite = finite
        t.sample = None
        t.address = address
        t.origin = None
        return t

    return make


def is_null_pad(pad: int) -> bool:
    return pad == PAD_NULL
