"""Bindings of the ASL model's state helpers: configure, write and read tiles, GPRs,
model memory, faults and numeric status.

These functions are the test harness of the AVS tests (they set a machine up and look
at it); they act on the ASL-shaped state of :class:`~tools.avs.model.core.PtocModel`
exactly as their ASL definitions say, and never run an operation. Written from
``ConfigureTileForMask``, ``ConfigurePredicateTileForMask`` (``tile/model/state/
allocation.asl``), ``WriteTileElement``, ``ReadTileElement``, ``TileWithPadding`` and the
predicate-bit helpers (``tile/model/definedness/elements.asl``), ``Store``/``LoadUnsigned``
(``scalar/model/agu/memory.asl``) and ``ResetProfileState`` (``arch/profile/reset.asl``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.runtime.tiles import derived_rows, pad_bits

from ..outcome import AssertionFailed
from ..values import AslRuntimeError, Bits, ElementBits, Enum, Record
from .core import MEMORY_BYTES, PtocModel, binding
from .tiles import MODEL_ELEMENTS, TileInfo, data_type, element_bits

PAD_CODES = {"TilePad_Zero": 0, "TilePad_Max": 1, "TilePad_Min": 2, "TilePad_Null": 3}


def _int(v: Any) -> int:
    if isinstance(v, Bits):
        return v.value
    if isinstance(v, bool) or not isinstance(v, int):
        raise AslRuntimeError(f"expected an integer, not {v}")
    return v


def _mask(v: Any) -> int:
    return v.value if isinstance(v, Bits) else int(v)


def fail(m: PtocModel, what: str, detail: str) -> AssertionFailed:
    """An ASL ``assert`` inside a harness function that does not hold."""
    return AssertionFailed(m.line, what, detail)


@binding("ResetProfileState", harness=True)
def reset_profile_state(m: PtocModel) -> None:
    m.reset()


def configure(
    m: PtocModel,
    index: Any,
    capacity: int,
    columns: int,
    valid_rows: int,
    valid_columns: int,
    dtype: Enum,
    layout: Enum,
    location: Enum,
    mask: int,
    rows: int,
) -> None:
    t = m.tile(index)
    dt = data_type(dtype)
    drows = derived_rows(capacity, columns, info(dt).bits)
    legal = (
        capacity >= 128
        and capacity % 128 == 0
        and capacity <= 65536
        and drows != 0
        and valid_rows <= drows
        and valid_columns <= columns
        and rows <= drows
        and rows > 0
        and valid_rows <= rows
        and valid_rows * valid_columns <= capacity * 8 // info(dt).bits
        and drows * columns <= capacity * 8 // info(dt).bits
    )
    if not legal:
        raise fail(
            m,
            "ConfigureTile descriptor is legal",
            f"capacity {capacity}, {rows}x{columns}, valid {valid_rows}x"
            f"{valid_columns} {dt.name} is not a legal descriptor",
        )
    i = index.value if isinstance(index, Bits) else index
    if m.capacity_in_use(i) + bin(mask).count("1") * capacity > m.tile_capacity:
        raise fail(m, "ConfigureTile capacity", "the tile does not fit the core capacity")
    allocate_numeric(m, i, mask, capacity, (drows, columns), (valid_rows, valid_columns), dtype)
    t.layout = layout
    t.location = location
    t.cube_k_repeat = t.cube_n_repeat = t.cube_cell_count = t.cube_storage_bytes = 0
    t.ptoc_layout  # noqa: B018  (a CUBE layout is untranslated)


def allocate_numeric(
    m: PtocModel,
    index: int,
    mask: int,
    capacity: int,
    shape: tuple[int, int],
    valid: tuple[int, int],
    dtype: Enum,
) -> Any:
    """Allocate model tile ``index`` on ``mask`` as a numeric tile of ``shape`` (Rows, Col)
    with ``valid`` rows and columns, nothing defined yet; returns the tile."""
    t = m.tile(index)
    m.alloc_masks[index] = Bits(4, mask)
    t.allocated = True
    t.storage_kind = Enum("TileStorage_Numeric")
    t.contents_defined = False
    t._defined = np.zeros(MODEL_ELEMENTS, bool)
    t._packed_defined = None
    t.defined_valid_elements = 0
    t.capacity_bytes = capacity
    t.rows, t.columns = shape
    t.valid_rows, t.valid_columns = valid
    t.data_type = dtype
    return t


@binding("ConfigureTile", harness=True)
def configure_tile(
    m: PtocModel,
    index: Any,
    capacity: int,
    rows: int,
    columns: int,
    valid_rows: int,
    valid_columns: int,
    dtype: Enum,
    layout: Enum,
    location: Enum,
) -> None:
    configure(
        m,
        index,
        capacity,
        columns,
        valid_rows,
        valid_columns,
        dtype,
        layout,
        location,
        0b0001,
        rows,
    )


@binding("ConfigureTileForMask", harness=True)
def configure_tile_for_mask(
    m: PtocModel,
    index: Any,
    capacity: int,
    rows: int,
    columns: int,
    valid_rows: int,
    valid_columns: int,
    dtype: Enum,
    layout: Enum,
    location: Enum,
    mask: Any,
) -> None:
    if _mask(mask) == 0:
        raise fail(m, "allocation_mask != Zeros{4}", "the allocation mask is zero")
    configure(
        m,
        index,
        capacity,
        columns,
        valid_rows,
        valid_columns,
        dtype,
        layout,
        location,
        _mask(mask),
        rows,
    )


def configure_predicate(
    m: PtocModel,
    index: Any,
    capacity: int,
    rows: int,
    columns: int,
    valid_rows: int,
    valid_columns: int,
    mask: int,
) -> None:
    legal = (
        capacity >= 128
        and capacity % 128 == 0
        and capacity <= 65536
        and rows > 0
        and columns > 0
        and valid_rows <= rows
        and valid_columns <= columns
        and rows * columns <= MODEL_ELEMENTS
        and (rows * columns + 7) // 8 <= capacity
    )
    if not legal:
        raise fail(
            m,
            "ConfigurePredicateTile descriptor is legal",
            f"{rows}x{columns} in {capacity} bytes",
        )
    t = m.tile(index)
    i = index.value if isinstance(index, Bits) else index
    m.alloc_masks[i] = Bits(4, mask)
    t.allocated = True
    t.storage_kind = Enum("TileStorage_Predicate")
    t.contents_defined = False
    t._defined = np.zeros(MODEL_ELEMENTS, bool)
    t._packed_defined = None
    t.defined_valid_elements = 0
    t.capacity_bytes = capacity
    t.rows, t.columns = rows, columns
    t.valid_rows, t.valid_columns = valid_rows, valid_columns
    t.data_type = Enum("TileDataType_U8")
    t.layout = Enum("TileLayout_RowMajor")
    t.location = Enum("TileLocation_Any")


@binding("ConfigurePredicateTile", harness=True)
def configure_predicate_tile(
    m: PtocModel,
    index: Any,
    capacity: int,
    rows: int,
    columns: int,
    valid_rows: int,
    valid_columns: int,
) -> None:
    configure_predicate(m, index, capacity, rows, columns, valid_rows, valid_columns, 0b0001)


@binding("ConfigurePredicateTileForMask", harness=True)
def configure_predicate_tile_for_mask(
    m: PtocModel,
    index: Any,
    capacity: int,
    rows: int,
    columns: int,
    valid_rows: int,
    valid_columns: int,
    mask: Any,
) -> None:
    configure_predicate(
        m, index, capacity, rows, columns, valid_rows, valid_columns, _mask(mask)
    )


def _element(m: PtocModel, t: TileInfo, row: int, col: int) -> int:
    if not t.allocated:
        raise fail(m, "the tile is allocated", "element access to an unallocated tile")
    # a predicate tile is addressed like a row-major U8 tile here (its payload words
    # are the packed predicate bytes), as the ASL's TileLogicalLinearIndex does
    t.check_coordinates(row, col)
    return int(t.linear(row, col))


@binding("WriteTileElement", harness=True)
def write_tile_element(m: PtocModel, index: Any, row: int, col: int, value: Bits) -> None:
    t = m.tile(index)
    e = _element(m, t, row, col)
    was = t.element_defined(e)
    v = value.value
    if t.packed():
        v &= (1 << element_bits(t.dtype)) - 1
    t.write_element(e, v)
    if not was and row < t.valid_rows and col < t.valid_columns:
        t.defined_valid_elements += 1
    t.contents_defined = t.defined_valid_elements == t.valid_rows * t.valid_columns


@binding("ReadTileElement", harness=True)
def read_tile_element(m: PtocModel, index: Any, row: int, col: int) -> Bits:
    t = m.tile(index)
    e = _element(m, t, row, col)
    if not t.element_defined(e):
        raise fail(
            m,
            f"ReadTileElement({index}, {row}, {col}) reads a defined element",
            f"ptoc left element [{row}, {col}] of tile {index} undefined",
        )
    return ElementBits(64, t.read_element(e), 64 if t.predicate else element_bits(t.dtype))


@binding("TileElementDefined", harness=True)
def tile_element_defined(m: PtocModel, index: Any, row: int, col: int) -> bool:
    t = m.tile(index)
    return t.element_defined(_element(m, t, row, col))


@binding("MarkTileValidRegionDefined", harness=True)
def mark_valid_defined(m: PtocModel, index: Any) -> None:
    t = m.tile(index)
    for r in range(t.valid_rows):
        for c in range(t.valid_columns):
            e = int(t.linear(r, c))
            t.write_element(e, t.read_element(e))
    t.defined_valid_elements = t.valid_rows * t.valid_columns
    t.contents_defined = True


def pad_word(pad: str, dt: DataType) -> int:
    """``TilePadValueForDataType``: Zero and Null are zero words."""
    code = PAD_CODES[pad]
    if code in (0, 3):
        return 0
    return pad_bits(dt, code)


@binding("ApplyTilePadding", harness=True)
def apply_tile_padding(m: PtocModel, index: Any, pad: Enum) -> None:
    t = m.tile(index)
    if t.predicate:
        apply_predicate_padding(m, index, pad)
        return
    word = pad_word(pad.name, t.dtype)
    defined = pad.name != "TilePad_Null"
    for r in range(t.rows):
        for c in range(t.columns):
            if r >= t.valid_rows or c >= t.valid_columns:
                t.write_element(int(t.linear(r, c)), word, defined)


@binding("ApplyPredicateTilePadding", harness=True)
def apply_predicate_padding(m: PtocModel, index: Any, pad: Enum) -> None:
    t = m.tile(index)
    defined = pad.name != "TilePad_Null"
    one = pad.name == "TilePad_Max"
    for r in range(t.rows):
        for c in range(t.columns):
            if r >= t.valid_rows or c >= t.valid_columns:
                t.set_predicate_bit(r, c, one, defined)


def _predicate(m: PtocModel, index: Any, row: int, col: int) -> TileInfo:
    t = m.tile(index)
    if not t.predicate:
        raise fail(m, "storage_kind == TileStorage_Predicate", f"tile {index} is numeric")
    t.check_coordinates(row, col)
    return t


@binding("WriteTilePredicateBit", harness=True)
def write_predicate_bit(m: PtocModel, index: Any, row: int, col: int, value: bool) -> None:
    t = _predicate(m, index, row, col)
    if not (row < t.valid_rows and col < t.valid_columns):
        raise fail(m, "the predicate bit is in the valid region", f"[{row}, {col}]")
    was = bool(t._defined[row * t.columns + col])
    t.set_predicate_bit(row, col, bool(value))
    if not was:
        t.defined_valid_elements += 1
    t.contents_defined = t.defined_valid_elements == t.valid_rows * t.valid_columns


@binding("TilePredicateBitDefined", harness=True)
def predicate_bit_defined(m: PtocModel, index: Any, row: int, col: int) -> bool:
    t = _predicate(m, index, row, col)
    return bool(t._defined[row * t.columns + col])


@binding("ReadTilePredicateBit", harness=True)
def read_predicate_bit(m: PtocModel, index: Any, row: int, col: int) -> bool:
    t = _predicate(m, index, row, col)
    if not t._defined[row * t.columns + col]:
        raise fail(
            m,
            f"ReadTilePredicateBit({index}, {row}, {col}) reads a defined bit",
            "ptoc left the predicate bit undefined",
        )
    return t.predicate_bit(row, col)


@binding("ReadTilePredicateByte", harness=True)
def read_predicate_byte(m: PtocModel, index: Any, byte: int) -> Bits:
    t = m.tile(index)
    if not t.predicate:
        raise fail(m, "storage_kind == TileStorage_Predicate", f"tile {index} is numeric")
    return Bits(8, int(t._payload[byte]) & 0xFF)


@binding("TileSourceContentsDefined", harness=True)
def source_contents_defined(m: PtocModel, index: Any) -> bool:
    t = m.tile(index)
    return bool(t.allocated and t.contents_defined)


@binding("ReleaseTile", harness=True)
def release_tile(m: PtocModel, index: Any) -> None:
    """``ReleaseTile``: the slot's descriptor returns to the unallocated zero geometry
    (U8, RowMajor, no CUBE cells); its payload words stay."""
    t = m.tile(index)
    i = index.value if isinstance(index, Bits) else index
    payload = t._payload
    t.__init__()  # type: ignore[misc]
    t._payload = payload
    t.data_type = Enum("TileDataType_U8")
    m.alloc_masks[i] = Bits(4, 0)


# ----------------------------------------------------------------------------- records


@binding("TileLogicalElementDefined", harness=True)
def logical_element_defined(m: PtocModel, tile: TileInfo, element: int) -> bool:
    return tile.element_defined(element)


@binding("TileReadLogicalElement", harness=True)
def read_logical_element(m: PtocModel, tile: TileInfo, element: int) -> Bits:
    return Bits(64, tile.read_element(element))


@binding(
    "TileLinearIndex",
    "TileStorageIndex",
    "TilePackedLinearIndex",
    "TileLogicalLinearIndex",
    harness=True,
)
def linear_index(m: PtocModel, tile: TileInfo, row: int, col: int) -> int:
    tile.check_coordinates(row, col)
    return int(tile.linear(row, col))


@binding("TileInfoWithLogicalElement", harness=True)
def with_logical_element(m: PtocModel, tile: TileInfo, element: int, value: Bits) -> TileInfo:
    t = tile.asl_copy()
    t.write_element(element, value.value)
    return t


# ----------------------------------------------------------------------------- faults, status


@binding("ClearFault", harness=True)
def clear_fault(m: PtocModel) -> None:
    m.clear_fault()


@binding("SetFault", harness=True)
def set_fault(m: PtocModel, code: Enum, address: Bits) -> None:
    m.last_fault = code
    m.fault_address = address


@binding("NumericStatusFlags", "ScalarFPFlags", harness=True)
def numeric_status(m: PtocModel) -> Bits:
    return Bits(5, m.status)


@binding("RecordNumericStatusFlags", "ScalarFPRecordFlags", harness=True)
def record_status(m: PtocModel, flags: Bits) -> None:
    m.status |= flags.value


@binding("DefaultNumericExecutionControl", harness=True)
def default_control(m: PtocModel) -> Record:
    return Record(
        "NumericExecutionControl",
        {"rounding_mode": Enum("NumericRound_RNE"), "saturating": False},
    )


@binding("NaturalToWord", harness=True)
def natural_to_word(m: PtocModel, n: int) -> Bits:
    return Bits(64, n)


# ----------------------------------------------------------------------------- GPRs, memory


@binding("WriteGPR", harness=True)
def write_gpr(m: PtocModel, index: int, value: Bits) -> None:
    write_pe_gpr(m, m.agent, index, value)


@binding("WritePEGPR", harness=True)
def write_pe_gpr(m: PtocModel, pe: int, index: int, value: Bits) -> None:
    if _int(index) != 0:
        m.gprs.items[_int(pe)].items[_int(index)] = value


@binding("ReadGPR", harness=True)
def read_gpr(m: PtocModel, index: int) -> Bits:
    return read_pe_gpr(m, m.agent, index)


@binding("ReadPEGPR", harness=True)
def read_pe_gpr(m: PtocModel, pe: int, index: int) -> Bits:
    if _int(index) == 0:
        return Bits(64, 0)
    v = m.gprs.items[_int(pe)].items[_int(index)]
    assert isinstance(v, Bits)
    return v


def _range(m: PtocModel, address: Bits, size: int) -> int:
    a = address.value
    if a + size > MEMORY_BYTES:
        m.set_fault("Fault_DataPage")
        return -1
    return a


@binding("Store", harness=True)
def store(m: PtocModel, address: Bits, size: int, value: Bits) -> None:
    a = _range(m, address, size)
    if a >= 0:
        m.memory[a : a + size] = np.frombuffer(
            (value.value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"), np.uint8
        )


@binding("LoadUnsigned", harness=True)
def load_unsigned(m: PtocModel, address: Bits, size: int) -> Bits:
    a = _range(m, address, size)
    if a < 0:
        return Bits(64, 0)
    return Bits(64, int.from_bytes(m.memory[a : a + size].tobytes(), "little"))


# ----------------------------------------------------------------------------- descriptors


@binding("CoreTileCapacityInUse", "TileCapacityInUse", harness=True)
def capacity_in_use(m: PtocModel) -> int:
    """Bytes of the allocated Local tiles the test's state holds (configured tiles and the
    destinations ptoc published), counted per allocation mask as the ASL does."""
    return m.capacity_in_use()


def _shape(t: TileInfo) -> tuple[Any, ...]:
    return (t.rows, t.columns, t.valid_rows, t.valid_columns, t.storage_kind.name)


@binding("TileShapeAndTypeMatch", harness=True)
def shape_and_type_match(m: PtocModel, a: Any, b: Any) -> bool:
    ta, tb = m.tile(a), m.tile(b)
    return _shape(ta) == _shape(tb) and ta.data_type == tb.data_type


@binding("TileLogicalShapeMatch", harness=True)
def logical_shape_match(m: PtocModel, a: Any, b: Any) -> bool:
    return _shape(m.tile(a))[:4] == _shape(m.tile(b))[:4]


@binding("TilePredicateValuesLegal", harness=True)
def predicate_values_legal(m: PtocModel, index: Any) -> bool:
    t = m.tile(index)
    return bool(t.allocated and t.contents_defined and t.predicate)


@binding("DerivedTileRows")
def derived_tile_rows(m: PtocModel, capacity: int, columns: int, dtype: Enum) -> int:
    return derived_rows(capacity, columns, info(data_type(dtype)).bits)


@binding("PackedTileLogicalCapacity", "TileLogicalElementCapacity")
def logical_capacity(m: PtocModel, capacity: int, dtype: Enum) -> int:
    return capacity * 8 // info(data_type(dtype)).bits


@binding("TileSizeCodeBytes")
def size_code_bytes_binding(m: PtocModel, code: int) -> int:
    from ptoc.runtime.tiles import size_code_bytes

    return size_code_bytes(code)


@binding("TileNumericEncodingValid")
def numeric_encoding_valid(m: PtocModel, dtype: Enum, value: Bits) -> bool:
    """ptoc's encoding rule (``runtime.ops.common.invalid_encoding``)."""
    from ptoc.backend.isa.semantics.core import from_bits
    from ptoc.runtime.ops.common import invalid_encoding

    dt = data_type(dtype)
    raw = np.array([value.value & ((1 << info(dt).bits) - 1)], np.uint64)
    return not invalid_encoding(dt, from_bits(raw, dt))


@binding("InstructionContractDenseStride_TSTORE", "TileDenseRowStrideBytes")
def dense_stride_tstore(m: PtocModel, columns: int, dtype: Enum) -> Bits:
    """ptoc's omitted-B.IOR row stride (``runtime.memory.dense_stride``)."""
    from ptoc.runtime.memory import dense_stride

    return Bits(64, dense_stride(columns, data_type(dtype)))


@binding("TileShapeMatchesCapacity")
def shape_matches_capacity(
    m: PtocModel, capacity: int, rows: int, cols: int, dtype: Enum
) -> bool:
    d = derived_rows(capacity, cols, info(data_type(dtype)).bits)
    return d != 0 and rows == d


@binding("TileSourceEncodingsValid")
def source_encodings_valid(m: PtocModel, index: Any) -> bool:
    """Every valid element of the tile is a valid encoding by ptoc's rule."""
    from ptoc.runtime.ops.common import invalid_encoding

    t = m.tile(index)
    if not (t.allocated and t.contents_defined) or t.predicate:
        return False
    words = [
        t.read_element(int(t.linear(r, c)))
        for r in range(t.valid_rows)
        for c in range(t.valid_columns)
    ]
    from ptoc.backend.isa.semantics.core import from_bits

    mask = (1 << info(t.dtype).bits) - 1
    raw = np.array([w & mask for w in words], np.uint64)
    return not invalid_encoding(t.dtype, from_bits(raw, t.dtype))
