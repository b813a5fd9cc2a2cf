"""The CUBE engine's ISA facts: cell layouts, transport codes, function bits, B.FPATR.

Every CUBE tile is made of 128-byte cells (``asl/tile/model/shape/cube-cell.asl``). The
layout fixes the cell geometry by element width; the valid shape fixes the storage shape,
the cell repeats and the bytes the tile needs (``TileCubeStorageRows``,
``TileCubeStorageColumns``, ``TileCubeKRepeat``, ``TileCubeNRepeat``,
``TileCubeCellCount``, ``TileCubeStorageElements``, ``TileCubeRequiredBytes``), and
``TileCubeDescriptorShapeLegal`` decides whether a descriptor exists at a capacity.
:func:`payload_index` is the physical order inside the storage
(``TileCubePayloadIndex``); every architectural access goes through logical
coordinates, so the executor keeps a CUBE tile as its logical array and only this
module knows the physical order.

The B.DATR Layout codes 21..26 select the CUBE transport conversions of TLOAD (21
ND2M32, 22 ND2M16, 23 ND2N8) and TSTORE (24 M322ND, 25 M162ND, 26 N82ND)
(``TileDataLayoutIsCubeConversion``, ``TileDataLayoutCubeLayout``). The CUBE Function
(the BSTART selector) carries four bits: +1 bias, +2 accumulator, +4 MX, +16 GEMV
(``TileMatrixFunctionUses*``, ``TileMatrixFunctionIsGEMV``).
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

from .datatypes import DataType, info
from .semantics.fpatr import Fpatr

#: ``PTO_TILE_CELL_BYTES``
CELL_BYTES = 128
#: ``PTO_MODEL_TILE_ELEMENTS``: storage elements a CUBE tile may hold
MAX_ELEMENTS = 32768
#: ``TileCubeCellCount`` limit
MAX_CELLS = 16384
#: the largest M a CUBE_M16 / CUBE_M32 primary holds (``TileMatrixMLayoutLegal``)
M_LIMIT = {"CUBE_M16": 16, "CUBE_M32": 32}


class CubeLayout(enum.Enum):
    """The three CUBE cell layouts (``TileLayout_CUBE_*``)."""

    M16 = "CUBE_M16"
    M32 = "CUBE_M32"
    N8 = "CUBE_N8"


#: B.DATR Layout code -> the CUBE layout a TLOAD converts into
LOAD_CODES: dict[int, CubeLayout] = {21: CubeLayout.M32, 22: CubeLayout.M16, 23: CubeLayout.N8}
#: B.DATR Layout code -> the CUBE layout a TSTORE converts out of
STORE_CODES: dict[int, CubeLayout] = {24: CubeLayout.M32, 25: CubeLayout.M16, 26: CubeLayout.N8}
#: every CUBE transport code
TRANSPORT_CODES = frozenset(LOAD_CODES) | frozenset(STORE_CODES)


def supported(dt: DataType) -> bool:
    """``TileCubeDataTypeSupported``: everything but HiF4X2 and the 64-bit types."""
    return dt != DataType.HiF4X2 and info(dt).bits != 64


def cell_shape(layout: CubeLayout, dt: DataType) -> tuple[int, int]:
    """(``TileCubeCellRows``, ``TileCubeCellColumns``); (0, 0) for an unsupported type."""
    if not supported(dt):
        return 0, 0
    bits = info(dt).bits
    per_cell = CELL_BYTES * 8 // bits  # elements per 128-byte cell
    if layout is CubeLayout.N8:
        return per_cell // 8, 8
    rows = 16 if layout is CubeLayout.M16 else 32
    return rows, per_cell // rows


def _aligned(value: int, quantum: int) -> int:
    """``TileCubeAlignedExtent``: ``value`` rounded up to ``quantum`` (0 beyond 65535)."""
    if value == 0:
        return 0
    aligned = -(-value // quantum) * quantum
    return aligned if aligned <= 65535 else 0


@dataclass(frozen=True)
class CubeGeometry:
    """The storage a CUBE tile of one valid shape needs (every field 0 when none)."""

    rows: int
    cols: int
    k_repeat: int
    n_repeat: int
    cells: int
    elements: int
    bytes: int

    @property
    def legal(self) -> bool:
        return self.bytes != 0 and self.elements != 0


@functools.cache  # pure, and asked for every operand of every CUBE bundle
def geometry(
    layout: CubeLayout, dt: DataType, valid_rows: int, valid_cols: int
) -> CubeGeometry:
    """Storage rows/columns, repeats, cells, elements and bytes of a CUBE valid shape."""
    cr, cc = cell_shape(layout, dt)
    none = CubeGeometry(0, 0, 0, 0, 0, 0, 0)
    if cr == 0 or valid_rows <= 0 or valid_cols <= 0:
        return none
    if layout is CubeLayout.N8:
        rows = _aligned(valid_rows, cr)
    else:
        rows = cr if valid_rows <= cr else 0
    cols = _aligned(valid_cols, cc)
    if rows == 0 or cols == 0:
        return none
    if layout is CubeLayout.N8:
        k_repeat, n_repeat = rows // cr, cols // 8
    else:
        k_repeat, n_repeat = cols // cc, 1
    cells = k_repeat * n_repeat
    if cells > MAX_CELLS:
        return none
    elements = cells * cr * cc
    if elements > MAX_ELEMENTS:
        elements = 0
    return CubeGeometry(rows, cols, k_repeat, n_repeat, cells, elements, cells * CELL_BYTES)


@functools.cache  # pure, and asked for every CUBE destination and source of every bundle
def shape_rule(
    capacity: int, layout: CubeLayout, dt: DataType, valid_rows: int, valid_cols: int
) -> str | None:
    """Why no CUBE descriptor of this shape exists at ``capacity`` bytes
    (``TileCubeDescriptorShapeLegal``), or None when one does."""
    name = layout.value
    if not supported(dt):
        return f"{dt.name} cannot live in a CUBE tile (TileCubeDataTypeSupported)"
    if valid_rows <= 0 or valid_cols <= 0:
        return f"a {name} tile needs a nonzero valid shape"
    limit = M_LIMIT.get(name)
    if limit is not None and valid_rows > limit:
        return (
            f"a {name} tile holds at most {limit} valid rows, not {valid_rows} "
            "(TileCubeStorageRows)"
        )
    g = geometry(layout, dt, valid_rows, valid_cols)
    what = f"a {dt.name} {valid_rows}x{valid_cols} {name} tile"
    if not g.legal:
        return (
            f"{what} exceeds the CUBE storage limits ({MAX_CELLS} cells, {MAX_ELEMENTS} "
            "elements; TileCubeStorageElements)"
        )
    if g.bytes > capacity:
        return (
            f"{what} needs {g.bytes} bytes ({g.cells} cells of {CELL_BYTES}), more than the "
            f"{capacity}-byte TSize (TileCubeRequiredBytes)"
        )
    return None


def cell_element_index(layout: CubeLayout, dt: DataType, inner_row: int, inner_col: int) -> int:
    """``TileCubeCellElementIndex``: the element of ``[inner_row, inner_col]`` inside one
    cell: column-major for CUBE_N8, row-major for the M layouts, where 4-bit CUBE_M16
    swaps inner columns 4..7 with 8..11."""
    cr, cc = cell_shape(layout, dt)
    if layout is CubeLayout.N8:
        return inner_col * cr + inner_row
    col = inner_col
    if layout is CubeLayout.M16 and info(dt).bits == 4 and 4 <= col < 12:
        col = col + 4 if col < 8 else col - 4
    return inner_row * cc + col


def payload_index(
    layout: CubeLayout, dt: DataType, valid_rows: int, valid_cols: int, row: int, col: int
) -> int:
    """``TileCubePayloadIndex``: the storage element of logical ``[row, col]``."""
    cr, cc = cell_shape(layout, dt)
    g = geometry(layout, dt, valid_rows, valid_cols)
    if layout is CubeLayout.N8:  # cells K-major within each 8-column strip
        cell = (col // cc) * g.k_repeat + row // cr
        local = cell_element_index(layout, dt, row % cr, col % cc)
    else:
        cell = col // cc
        local = cell_element_index(layout, dt, row, col % cc)
    return cell * cr * cc + local


# ---------------------------------------------------------------- matrix functions

BIAS, ACC, MX, GEMV = 1, 2, 4, 16


@dataclass(frozen=True)
class MatrixFunction:
    """The CUBE Function bits of one matrix operation (its BSTART selector)."""

    code: int

    @property
    def bias(self) -> bool:
        return bool(self.code & BIAS)

    @property
    def acc(self) -> bool:
        return bool(self.code & ACC)

    @property
    def mx(self) -> bool:
        return bool(self.code & MX)

    @property
    def gemv(self) -> bool:
        return bool(self.code & GEMV)


# ---------------------------------------------------------------- B.FPATR

#: catalog field name -> :class:`~.semantics.fpatr.Fpatr` attribute
FPATR_FIELDS: dict[str, str] = {
    "PreQuantMode": "pre_quant_mode",
    "ReluMode": "relu_mode",
    "GroupNCode": "group_n_code",
    "RowMaxEn": "row_max",
    "GroupMaxEn": "group_max",
    "RowMaxInit": "row_max_init",
    "MaxAbsEn": "max_abs",
    "TransA": "trans_a",
    "TransB": "trans_b",
}
_BOOLS = frozenset({"row_max", "group_max", "row_max_init", "max_abs", "trans_a", "trans_b"})


def fpatr_of(fields: dict[str, int]) -> Fpatr:
    """The latched B.FPATR descriptor of a command's catalog field values."""
    kw: dict[str, int | bool] = {}
    for name, attr in FPATR_FIELDS.items():
        v = int(fields.get(name, 0))
        kw[attr] = bool(v) if attr in _BOOLS else v
    return Fpatr(**kw)  # type: ignore[arg-type]


__all__ = [
    "CELL_BYTES",
    "FPATR_FIELDS",
    "LOAD_CODES",
    "STORE_CODES",
    "TRANSPORT_CODES",
    "CubeGeometry",
    "CubeLayout",
    "MatrixFunction",
    "cell_element_index",
    "cell_shape",
    "fpatr_of",
    "geometry",
    "payload_index",
    "shape_rule",
    "supported",
]
