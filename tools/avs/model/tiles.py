"""The ASL-shaped view of a Local tile, and its conversion to and from a ptoc tile.

The tests read and write tiles through the ASL model's record (``_Tiles[[i]]``, a
``TileInfo``): a descriptor plus a payload of 64-bit words indexed by the ASL's storage
index, and definedness bits. :class:`TileInfo` keeps exactly that representation (the
harness state of the test), written from the ASL definitions of ``TileLinearIndex``,
``TilePackedLinearIndex`` and ``TileInfoWithLogicalElementAndDefined``
(``asl/tile/model/definedness/``). Operations never run here: :func:`to_ptoc` turns a
record into the ptoc :class:`~ptoc.runtime.tiles.Tile` the executor reads, and
:func:`from_ptoc` turns a tile the executor published back into a record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.semantics.core import from_bits, to_bits
from ptoc.runtime.tiles import Layout, Tile

from ..outcome import NotApplicable, Untranslated
from ..values import AslRuntimeError, Bits, Enum

#: ``PTO_MODEL_TILE_ELEMENTS``: payload words of one model tile record
MODEL_ELEMENTS = 32768
#: logical elements a packed record can describe (``PackedTileElementIndex``)
PACKED_ELEMENTS = 524288

LAYOUTS: dict[str, Layout] = {
    "RowMajor": Layout.ROW_MAJOR,
    "ColumnMajor": Layout.COL_MAJOR,
    "ZN": Layout.ZN,
    "NZ": Layout.NZ,
    "CUBE_M16": Layout.CUBE_M16,
    "CUBE_M32": Layout.CUBE_M32,
    "CUBE_N8": Layout.CUBE_N8,
}
LAYOUT_NAMES = {v: k for k, v in LAYOUTS.items()}


def data_type(e: Any) -> DataType:
    """The ptoc DataType of a ``TileDataType_*`` member."""
    if not isinstance(e, Enum) or e.type != "TileDataType":
        raise AslRuntimeError(f"{e} is not a TileDataType")
    try:
        return DataType[e.member]
    except KeyError:
        raise AslRuntimeError(f"{e} is not a TileDataType") from None


def dtype_enum(dt: DataType) -> Enum:
    return Enum(f"TileDataType_{dt.name}")


def element_bits(dt: DataType) -> int:
    return info(dt).bits


def is_four_bit(dt: DataType) -> bool:
    return info(dt).bits == 4


class BitsView:
    """A ``bits(N)`` field backed by a numpy bool array (definedness maps): supports
    ``[i]`` and ``[hi:lo]`` reads and writes and whole-value comparison."""

    __slots__ = ("_arr",)

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr

    def asl_slice(self, hi: int, lo: int) -> Bits:
        if not 0 <= lo <= hi < len(self._arr):
            raise AslRuntimeError(f"slice [{hi}:{lo}] of a bits({len(self._arr)}) map")
        part = self._arr[lo : hi + 1]
        return Bits(
            hi - lo + 1,
            int.from_bytes(np.packbits(part[::-1]).tobytes(), "big") >> ((-len(part)) % 8),
        )

    def asl_setslice(self, hi: int, lo: int, v: Any) -> None:
        width = hi - lo + 1
        value = v.value if isinstance(v, Bits) else int(v)
        bits = [(value >> i) & 1 for i in range(width)]
        self._arr[lo : hi + 1] = np.array(bits, bool)

    def asl_value(self) -> Bits:
        return self.asl_slice(len(self._arr) - 1, 0)

    def __str__(self) -> str:
        return f"bits({len(self._arr)}) with {int(self._arr.sum())} ones"


class WordsView:
    """The ``payload`` array of a record: ``[[k]]`` reads and writes 64-bit words."""

    __slots__ = ("_arr",)

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr

    def asl_index(self, k: int) -> Bits:
        if not 0 <= k < len(self._arr):
            raise AslRuntimeError(f"payload index {k} outside the model payload")
        return Bits(64, int(self._arr[k]))

    def asl_setindex(self, k: int, v: Any) -> None:
        if not 0 <= k < len(self._arr):
            raise AslRuntimeError(f"payload index {k} outside the model payload")
        self._arr[k] = np.uint64((v.value if isinstance(v, Bits) else int(v)) & ((1 << 64) - 1))


_SCALARS = (
    "allocated",
    "contents_defined",
    "defined_valid_elements",
    "capacity_bytes",
    "rows",
    "columns",
    "valid_rows",
    "valid_columns",
    "cube_k_repeat",
    "cube_n_repeat",
    "cube_cell_count",
    "cube_storage_bytes",
    "storage_kind",
    "data_type",
    "layout",
    "location",
)


class TileInfo:
    """One ``TileInfo`` record (see the module docstring)."""

    __slots__ = ("_defined", "_packed_defined", "_payload", *_SCALARS)

    def __init__(self) -> None:
        self.allocated = False
        self.storage_kind = Enum("TileStorage_Numeric")
        self.contents_defined = False
        self.defined_valid_elements = 0
        self.capacity_bytes = 0
        self.rows = 0
        self.columns = 0
        self.valid_rows = 0
        self.valid_columns = 0
        self.data_type = Enum("TileDataType_U64")
        self.layout = Enum("TileLayout_RowMajor")
        self.location = Enum("TileLocation_Any")
        self.cube_k_repeat = 0
        self.cube_n_repeat = 0
        self.cube_cell_count = 0
        self.cube_storage_bytes = 0
        self._payload = np.zeros(MODEL_ELEMENTS, np.uint64)
        self._defined = np.zeros(MODEL_ELEMENTS, bool)
        self._packed_defined: np.ndarray | None = None

    # ------------------------------------------------------------ record protocol

    def asl_get(self, name: str) -> Any:
        if name == "payload":
            return WordsView(self._payload)
        if name == "defined_elements":
            return BitsView(self._defined)
        if name == "packed_defined_elements":
            return BitsView(self.packed_defined)
        if name in _SCALARS:
            return getattr(self, name)
        raise AslRuntimeError(f"TileInfo has no field {name}")

    def asl_set(self, name: str, value: Any) -> None:
        if name == "defined_elements":
            self._defined = _bool_map(value, MODEL_ELEMENTS)
        elif name == "packed_defined_elements":
            self._packed_defined = _bool_map(value, PACKED_ELEMENTS)
        elif name == "payload":
            if not isinstance(value, WordsView):
                raise AslRuntimeError("payload assigned from a value that is not a payload")
            self._payload = value._arr.copy()
        elif name in _SCALARS:
            setattr(self, name, value)
        else:
            raise AslRuntimeError(f"TileInfo has no field {name}")

    def asl_copy(self) -> TileInfo:
        t = TileInfo.__new__(TileInfo)
        for k in _SCALARS:
            setattr(t, k, getattr(self, k))
        t._payload = self._payload.copy()
        t._defined = self._defined.copy()
        t._packed_defined = (
            None if self._packed_defined is None else self._packed_defined.copy()
        )
        return t

    def __str__(self) -> str:
        if not self.allocated:
            return "TileInfo (unallocated)"
        return (
            f"TileInfo {self.data_type.member} {self.valid_rows}x{self.valid_columns} of "
            f"{self.rows}x{self.columns} {self.layout.member} {self.capacity_bytes}B"
        )

    # ------------------------------------------------------------ ASL indexing

    @property
    def packed_defined(self) -> np.ndarray:
        if self._packed_defined is None:
            self._packed_defined = np.zeros(PACKED_ELEMENTS, bool)
        return self._packed_defined

    @property
    def dtype(self) -> DataType:
        return data_type(self.data_type)

    @property
    def predicate(self) -> bool:
        return self.storage_kind.name == "TileStorage_Predicate"

    @property
    def ptoc_layout(self) -> Layout:
        lay = LAYOUTS.get(self.layout.member)
        if self.layout.name == "TileLayout_ImplementationDefined":
            raise NotApplicable(
                "asl-internal",
                "TileLayout_ImplementationDefined is a non-architectural model fixture "
                "(no B.DATR Layout code selects it)",
            )
        if lay is None:
            raise Untranslated(f"layout {self.layout.name}", group="CUBE engine")
        return lay

    def packed(self) -> bool:
        """``TileUsesPackedCarrierRepresentation`` (a CUBE tile keeps one word per
        storage element, 4-bit types included)."""
        if self.ptoc_layout.cube is not None:
            return False
        return is_four_bit(self.dtype) or self.rows * self.columns > MODEL_ELEMENTS

    def linear(self, row: Any, col: Any) -> Any:
        """``TileLinearIndex`` / ``TilePackedLinearIndex`` (numpy-vectorised)."""
        lay = self.ptoc_layout
        rows, cols = self.rows, self.columns
        cube = lay.cube
        if cube is not None:  # ``TileCubePayloadIndex``
            index = np.vectorize(
                lambda r, c: isa_cube.payload_index(
                    cube, self.dtype, self.valid_rows, self.valid_columns, int(r), int(c)
                )
            )
            out = index(row, col)
            return int(out) if np.ndim(out) == 0 else out
        if lay is Layout.ROW_MAJOR:
            return row * cols + col
        if lay is Layout.COL_MAJOR:
            return col * rows + row
        inner = 256 // element_bits(self.dtype)
        block_rows, block_cols = rows // 16, cols // inner
        br, bc = row // 16, col // inner
        ir, ic = row % 16, col % inner
        block = 16 * inner
        if lay is Layout.ZN:
            return (br * block_cols + bc) * block + ic * 16 + ir
        return (bc * block_rows + br) * block + ir * inner + ic

    def read_element(self, element: int) -> int:
        """``TileReadLogicalElement``: the raw word of logical element ``element``."""
        if self.packed():
            bits = element_bits(self.dtype)
            per = 64 // bits
            word = int(self._payload[element // per])
            return (word >> ((element % per) * bits)) & ((1 << bits) - 1)
        return int(self._payload[element])

    def element_defined(self, element: int) -> bool:
        """``TileLogicalElementDefined``."""
        if self.packed():
            return bool(self.packed_defined[element])
        return bool(self._defined[element])

    def write_element(self, element: int, value: int, defined: bool = True) -> None:
        """``TileInfoWithLogicalElementAndDefined`` (in place)."""
        if self.packed():
            bits = element_bits(self.dtype)
            per = 64 // bits
            k, shift = element // per, (element % per) * bits
            mask = ((1 << bits) - 1) << shift
            word = int(self._payload[k])
            self._payload[k] = np.uint64((word & ~mask) | ((value << shift) & mask))
            self.packed_defined[element] = defined
        else:
            self._payload[element] = np.uint64(value & ((1 << 64) - 1))
            self._defined[element] = defined

    def check_coordinates(self, row: int, col: int) -> None:
        if not (0 <= row < self.rows and 0 <= col < self.columns):
            raise AslRuntimeError(
                f"element [{row}, {col}] is outside the {self.rows}x{self.columns} tile"
            )

    def recount_defined(self) -> None:
        """``defined_valid_elements`` and ``contents_defined`` from the maps."""
        if self.predicate:
            n = sum(
                bool(self._defined[r * self.columns + c])
                for r in range(self.valid_rows)
                for c in range(self.valid_columns)
            )
        else:
            rr, cc = np.meshgrid(
                np.arange(self.valid_rows), np.arange(self.valid_columns), indexing="ij"
            )
            idx = self.linear(rr, cc).ravel()
            n = int((self.packed_defined if self.packed() else self._defined)[idx].sum())
        self.defined_valid_elements = n
        self.contents_defined = n == self.valid_rows * self.valid_columns

    # predicate tiles: one bit per logical element, row-major, in payload bytes
    def predicate_bit(self, row: int, col: int) -> bool:
        i = row * self.columns + col
        return bool((int(self._payload[i // 8]) >> (i % 8)) & 1)

    def set_predicate_bit(self, row: int, col: int, value: bool, defined: bool = True) -> None:
        i = row * self.columns + col
        word = int(self._payload[i // 8]) & ~(1 << (i % 8))
        self._payload[i // 8] = np.uint64(word | (int(value) << (i % 8)))
        self._defined[i] = defined


def _bool_map(value: Any, n: int) -> np.ndarray:
    if isinstance(value, BitsView):
        return value._arr.copy()
    if isinstance(value, Bits):
        out = np.zeros(n, bool)
        v = value.value
        k = 0
        while v:
            if v & 1:
                out[k] = True
            v >>= 1
            k += 1
        return out
    raise AslRuntimeError("a definedness map assigned from a value that is not bits")


# ----------------------------------------------------------------------------- conversion


def grid(t: TileInfo) -> tuple[np.ndarray, np.ndarray]:
    rr, cc = np.meshgrid(np.arange(t.rows), np.arange(t.columns), indexing="ij")
    return rr, cc


def carrier_values(t: TileInfo) -> tuple[np.ndarray, np.ndarray]:
    """(Rows x Col carrier values, definedness) of a numeric record's storage."""
    dt = t.dtype
    rr, cc = grid(t)
    lin = t.linear(rr, cc).ravel()
    bits = element_bits(dt)
    if t.packed():
        per = 64 // bits
        words = t._payload[lin // per]
        raw = (words >> ((lin % per) * bits).astype(np.uint64)) & np.uint64((1 << bits) - 1)
        d = t.packed_defined[lin]
    else:
        raw = t._payload[lin] & np.uint64((1 << bits) - 1 if bits < 64 else (1 << 64) - 1)
        d = t._defined[lin]
    shape = (t.rows, t.columns)
    return from_bits(raw.reshape(shape), dt), d.reshape(shape)


def to_ptoc(t: TileInfo, mask: int, pes: int, serial: int, capacity: int | None = None) -> Tile:
    """The ptoc tile the record describes, present on every PE of ``mask`` (PE0 = bit 3),
    with the record's payload and definedness; ``capacity`` overrides the byte size
    (0 for a placeholder that must not count against capacity)."""
    cap = t.capacity_bytes if capacity is None else capacity
    # a RowMajor tile in the Matrix location (a bias, an E8M0 scale, a Shared staging
    # tile) is an ordinary ptoc tile: ptoc's tiles carry no location, a CUBE layout
    # implies Matrix
    if t.ptoc_layout.cube is not None and t.location.name != "TileLocation_Matrix":
        raise Untranslated(
            f"{t.location.name} with layout {t.layout.name}",
            "ptoc keeps CUBE tiles in the Matrix location",
            group="CUBE engine",
        )
    pe_rows = [pe for pe in range(pes) if mask >> (3 - pe) & 1]
    if t.predicate:
        rows, cols = t.rows, t.columns
        idx = (np.arange(rows)[:, None] * cols + np.arange(cols)[None, :]).ravel()
        raw = t._payload[(idx // 8)].astype(np.uint64)
        vals = ((raw >> (idx % 8).astype(np.uint64)) & np.uint64(1)).astype(bool)
        d = t._defined[idx]
        payload = np.zeros((pes, rows, cols), bool)
        defined = np.zeros((pes, rows, cols), bool)
        for pe in pe_rows:
            payload[pe] = vals.reshape(rows, cols)
            defined[pe] = d.reshape(rows, cols)
        payload.flags.writeable = False
        return Tile(
            None,
            rows,
            cols,
            t.valid_rows,
            t.valid_columns,
            Layout.ROW_MAJOR,
            mask,
            cap,
            payload,
            defined,
            serial=serial,
        )
    dt = t.dtype
    carrier, d = carrier_values(t)
    payload = np.zeros((pes, t.rows, t.columns), carrier.dtype)
    defined = np.zeros((pes, t.rows, t.columns), bool)
    for pe in pe_rows:
        payload[pe] = carrier
        defined[pe] = d
    payload.flags.writeable = False
    return Tile(
        dt,
        t.rows,
        t.columns,
        t.valid_rows,
        t.valid_columns,
        t.ptoc_layout,
        mask,
        cap,
        payload,
        defined,
        serial=serial,
    )


def from_ptoc(tile: Tile, pe: int, into: TileInfo | None = None) -> TileInfo:
    """The record of a published ptoc tile as PE ``pe`` holds it (payload words of
    undefined elements are kept from ``into``, the record the tile replaces)."""
    t = into.asl_copy() if into is not None else TileInfo()
    t.allocated = True
    t.rows, t.columns = tile.rows, tile.cols
    t.valid_rows, t.valid_columns = tile.valid_rows, tile.valid_cols
    t.capacity_bytes = tile.capacity
    t.location = Enum("TileLocation_Any")
    t.layout = Enum(f"TileLayout_{LAYOUT_NAMES[tile.layout]}")
    t.cube_k_repeat = t.cube_n_repeat = t.cube_cell_count = t.cube_storage_bytes = 0
    cube = tile.layout.cube
    if cube is not None and tile.dtype is not None:
        t.location = Enum("TileLocation_Matrix")
        g = isa_cube.geometry(cube, tile.dtype, tile.valid_rows, tile.valid_cols)
        t.cube_k_repeat, t.cube_n_repeat = g.k_repeat, g.n_repeat
        t.cube_cell_count, t.cube_storage_bytes = g.cells, g.bytes
    defined = tile.definedness()[pe]
    if tile.dtype is None:
        t.storage_kind = Enum("TileStorage_Predicate")
        t.data_type = Enum("TileDataType_U8")
        t._defined = np.zeros(MODEL_ELEMENTS, bool)
        for r in range(tile.rows):
            for c in range(tile.cols):
                t.set_predicate_bit(r, c, bool(tile.payload[pe, r, c]), bool(defined[r, c]))
        t.recount_defined()
        return t
    t.storage_kind = Enum("TileStorage_Numeric")
    t.data_type = dtype_enum(tile.dtype)
    t._defined = np.zeros(MODEL_ELEMENTS, bool)
    t._packed_defined = None
    bits = element_bits(tile.dtype)
    raw = to_bits(tile.payload[pe]).astype(np.uint64)
    if bits < 64:
        raw &= np.uint64((1 << bits) - 1)
    rr, cc = grid(t)
    lin = t.linear(rr, cc)
    if t.packed():
        pd = t.packed_defined
        for r in range(t.rows):
            for c in range(t.columns):
                e = int(lin[r, c])
                if defined[r, c]:
                    t.write_element(e, int(raw[r, c]))
                else:
                    pd[e] = False
    else:
        flat = lin.ravel()
        ok = defined.ravel()
        t._payload[flat[ok]] = raw.ravel()[ok]
        if tile.layout.cube is not None:
            # a CUBE load pads Null storage with an undefined zero word (``TileWithPadding``
            # with ``TilePadValueForDataType(TilePad_Null)``)
            t._payload[flat[~ok]] = 0
        t._defined[flat] = ok
    t.recount_defined()
    return t
