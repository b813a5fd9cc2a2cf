"""The matrix operand legality predicates of ``matrix-shape.asl``, bound to ptoc's rules.

The ASL states them over tile slots and ``TileInfo`` records of the open bundle; ptoc's
executor checks the same facts in its preflight (``runtime/ops/cube.py``): AType is the
BSTART DataType, BType the B.DATR DataType when a B.DATR is present (else AType), the pair
is legal by ``semantics.matmul.pair_legal``, the Local primaries are CUBE tiles (A in
CUBE_M16/M32 within the layout's M limit, B in CUBE_N8) of matching M x K and K x N, and
an MX side whose type needs a scale takes one RowMajor E8M0 tile of M x ceil(K/32) (A) or
ceil(K/32) x N (B) and no other side takes one. The ASL also admits generic-descriptor
and mixed primaries in ``TileMatrixInfoOptionalScalesLegal``; ptoc's Local primaries are
CUBE tiles only, so those forms are FALSE here.
"""

from __future__ import annotations

from typing import Any

from ptoc.backend.isa import DataType
from ptoc.backend.isa.semantics import matmul as sm

from .bundle import current_start
from .core import PtocModel, binding
from .cube import cube_infos_match
from .tiles import MODEL_ELEMENTS, TileInfo, data_type


def _bundle_types(m: PtocModel) -> tuple[DataType, DataType] | None:
    """(AType, BType) of the open bundle, or None when no tile operation is selected."""
    start = current_start(m)
    if start is None or start.op is None:
        return None
    try:
        a_type = DataType(start.dtype)
        b_type = a_type
        if m.data_attributes_present:
            code = m.data_attributes.fields["data_type"]
            b_type = DataType(code.value if hasattr(code, "value") else int(code))
    except ValueError:
        return None  # a reserved DataType code names no type
    return a_type, b_type


def _dt(tile: TileInfo) -> DataType | None:
    try:
        return data_type(tile.data_type)
    except Exception:
        return None


def _primaries_legal(m: PtocModel, left: TileInfo, right: TileInfo) -> bool:
    """CUBE primaries A (M x K) and B (K x N) whose D fits one model tile."""
    mm, nn, kk = left.valid_rows, right.valid_columns, left.valid_columns
    return cube_infos_match(m, left, right, mm, nn, kk) and mm * nn <= MODEL_ELEMENTS


def _typed_pair_legal(m: PtocModel, left: TileInfo, right: TileInfo, mx: bool) -> bool:
    types = _bundle_types(m)
    if types is None:
        return False
    a_type, b_type = types
    return (_dt(left), _dt(right)) == (a_type, b_type) and sm.pair_legal(a_type, b_type, mx)


@binding("TileMatrixShapeLegal")
def matrix_shape_legal(m: PtocModel, left: Any, right: Any) -> bool:
    return _bundle_types(m) is not None and _primaries_legal(m, m.tile(left), m.tile(right))


@binding("TileOrdinaryMatrixOperandsLegal")
def ordinary_operands_legal(m: PtocModel, left: Any, right: Any) -> bool:
    a, b = m.tile(left), m.tile(right)
    return matrix_shape_legal(m, left, right) and _typed_pair_legal(m, a, b, mx=False)


@binding("TileMXMatrixOperandsLegal")
def mx_operands_legal(m: PtocModel, left: Any, right: Any) -> bool:
    a, b = m.tile(left), m.tile(right)
    return matrix_shape_legal(m, left, right) and _typed_pair_legal(m, a, b, mx=True)


def _scale_legal(tile: TileInfo, rows: int, cols: int) -> bool:
    """A defined RowMajor E8M0 scale tile of exactly ``rows`` x ``cols`` valid elements."""
    return (
        tile.allocated
        and tile.contents_defined
        and not tile.predicate
        and _dt(tile) == DataType.E8M0
        and tile.layout.name == "TileLayout_RowMajor"
        and (tile.valid_rows, tile.valid_columns) == (rows, cols)
        and tile.valid_rows <= tile.rows
        and tile.valid_columns <= tile.columns
    )


@binding("TileMatrixInfoOptionalScalesLegal")
def optional_scales_legal(
    m: PtocModel, left: TileInfo, left_scale: TileInfo, left_present: Any,
    right: TileInfo, right_scale: TileInfo, right_present: Any,
) -> bool:  # fmt: skip
    """MX primaries of the bundle's types, and a scale on exactly the sides that need one."""
    if not (_primaries_legal(m, left, right) and _typed_pair_legal(m, left, right, mx=True)):
        return False
    a_type, b_type = _bundle_types(m) or (None, None)
    assert a_type is not None and b_type is not None
    if bool(left_present) != sm.needs_scale(a_type) or bool(right_present) != sm.needs_scale(
        b_type
    ):
        return False
    blocks = sm.scale_blocks(left.valid_columns)
    return (not left_present or _scale_legal(left_scale, left.valid_rows, blocks)) and (
        not right_present or _scale_legal(right_scale, blocks, right.valid_columns)
    )


@binding("TileMatrixInfoScalesLegal")
def scales_legal(
    m: PtocModel, left: TileInfo, left_scale: TileInfo, right: TileInfo, right_scale: TileInfo
) -> bool:
    return optional_scales_legal(m, left, left_scale, True, right, right_scale, True)


@binding(
    "TileMatrixInfoShapeLegal",
    "TileOrdinaryMatrixInfosLegal",
    "TileMatrixInfosMatchDimensions",
    "TileMatrixMixedInfosMatchDimensions",
)
def generic_primaries_legal(m: PtocModel, left: TileInfo, right: TileInfo, *dims: Any) -> bool:
    """The ASL's generic-descriptor and mixed primary forms (a non-CUBE A or B): FALSE.

    ptoc's executor takes Local primaries only as CUBE tiles (A CUBE_M16/M32, B CUBE_N8;
    ``TileMatrixLocalMOperandSchemaLegal``), and these forms need a generic descriptor,
    which a CUBE layout never is (``TileGenericIndexingPermitted``).
    """
    return False
