"""Tile element DataTypes: codes, widths, numpy carriers and classes.

The codes and formats are those of the PTO-ISA DataType field (REFERENCE.md 4.1,
``asl/arch/data-types/tile-data-types.asl``). Every other module reads DataTypes from
here; nothing else spells a code or a width.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property

import numpy as np


class DataType(enum.IntEnum):
    """The 5-bit DataType field. Reserved codes (15, 21..23, 29..31) are not members."""

    FP64 = 0
    FP32 = 1
    TF32 = 2
    HF32 = 3
    FP16 = 4
    BF16 = 5
    HiF8 = 6
    E4M3 = 7
    E5M2 = 8
    E3M2 = 9
    E2M3 = 10
    E2M1X2 = 11
    E1M2X2 = 12
    E8M0 = 13
    HiF4X2 = 14
    S64 = 16
    S32 = 17
    S16 = 18
    S8 = 19
    S4X2 = 20
    U64 = 24
    U32 = 25
    U16 = 26
    U8 = 27
    U4X2 = 28


#: B.DATR.DataType (and BSTART.TMOV) sentinel meaning "inherit the BSTART type".
DTYPE_NONE = 31
#: DataType codes that reject before any effect.
RESERVED_DTYPE_CODES = frozenset({15, 21, 22, 23, 29, 30, 31})


class TypeClass(enum.Enum):
    """How a DataType's bits are interpreted."""

    FLOAT = "float"
    SIGNED = "signed"
    UNSIGNED = "unsigned"
    PACKED4 = "packed 4-bit"


@dataclass(frozen=True)
class DTypeInfo:
    """Facts about one DataType.

    ``carrier`` is the numpy dtype the executor stores one logical element in. Formats
    that numpy and ml_dtypes do not model (HiF8, E1M2X2, HiF4X2, and the reduced
    TF32/HF32 mantissas) are carried as raw bits of the container width; their
    arithmetic lives in ``ptoc.backend.isa.semantics``. ``carrier_name`` names it (a
    numpy type, or ``ml_dtypes.<name>``); ml_dtypes is imported on the first use of an
    ml_dtypes carrier, so importing the ISA does not load its extension.
    """

    dtype: DataType
    bits: int
    carrier_name: str
    type_class: TypeClass
    #: the element's interpretation inside a packed pair (4-bit types only)
    lane: TypeClass | None = None
    #: True when ``carrier`` is an exact numeric model of the format
    exact_carrier: bool = True

    @cached_property
    def carrier(self) -> np.dtype:
        module, _, attr = self.carrier_name.rpartition(".")
        if module == "ml_dtypes":
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, attr))
        return np.dtype(attr)

    @property
    def name(self) -> str:
        return self.dtype.name

    @property
    def code(self) -> int:
        return int(self.dtype)

    @property
    def is_float(self) -> bool:
        return self.type_class is TypeClass.FLOAT or self.lane is TypeClass.FLOAT

    @property
    def is_int(self) -> bool:
        return self.type_class in (TypeClass.SIGNED, TypeClass.UNSIGNED) or (
            self.lane in (TypeClass.SIGNED, TypeClass.UNSIGNED)
        )

    @property
    def is_signed(self) -> bool:
        return TypeClass.SIGNED in (self.type_class, self.lane)

    def storage_bytes(self, elements: int) -> int:
        """Bit-packed storage of ``elements`` logical elements (ADR 0013)."""
        return (elements * self.bits + 7) // 8


def _info(
    dt: DataType,
    bits: int,
    carrier: type | str,
    cls: TypeClass,
    lane: TypeClass | None = None,
    exact: bool = True,
) -> DTypeInfo:
    name = carrier if isinstance(carrier, str) else np.dtype(carrier).name
    return DTypeInfo(dt, bits, name, cls, lane, exact)


_F, _S, _U, _P = TypeClass.FLOAT, TypeClass.SIGNED, TypeClass.UNSIGNED, TypeClass.PACKED4

DTYPES: dict[DataType, DTypeInfo] = {
    i.dtype: i
    for i in (
        _info(DataType.FP64, 64, np.float64, _F),
        _info(DataType.FP32, 32, np.float32, _F),
        _info(DataType.TF32, 32, np.float32, _F, exact=False),
        _info(DataType.HF32, 32, np.float32, _F, exact=False),
        _info(DataType.FP16, 16, np.float16, _F),
        _info(DataType.BF16, 16, "ml_dtypes.bfloat16", _F),
        _info(DataType.HiF8, 8, np.uint8, _F, exact=False),
        _info(DataType.E4M3, 8, "ml_dtypes.float8_e4m3fn", _F),
        _info(DataType.E5M2, 8, "ml_dtypes.float8_e5m2", _F),
        _info(DataType.E3M2, 8, "ml_dtypes.float6_e3m2fn", _F),
        _info(DataType.E2M3, 8, "ml_dtypes.float6_e2m3fn", _F),
        _info(DataType.E2M1X2, 4, "ml_dtypes.float4_e2m1fn", _P, _F),
        _info(DataType.E1M2X2, 4, np.uint8, _P, _F, exact=False),
        _info(DataType.E8M0, 8, "ml_dtypes.float8_e8m0fnu", _F),
        _info(DataType.HiF4X2, 4, np.uint8, _P, _F, exact=False),
        _info(DataType.S64, 64, np.int64, _S),
        _info(DataType.S32, 32, np.int32, _S),
        _info(DataType.S16, 16, np.int16, _S),
        _info(DataType.S8, 8, np.int8, _S),
        _info(DataType.S4X2, 4, "ml_dtypes.int4", _P, _S),
        _info(DataType.U64, 64, np.uint64, _U),
        _info(DataType.U32, 32, np.uint32, _U),
        _info(DataType.U16, 16, np.uint16, _U),
        _info(DataType.U8, 8, np.uint8, _U),
        _info(DataType.U4X2, 4, "ml_dtypes.uint4", _P, _U),
    )
}

_BY_NAME = {dt.name.upper(): dt for dt in DataType}


def dtype_by_name(name: str) -> DataType:
    """Look a DataType up by its assembly name (case-insensitive); KeyError if unknown."""
    return _BY_NAME[name.upper()]


def info(dt: DataType | int) -> DTypeInfo:
    """The DTypeInfo of a DataType or an assigned code; KeyError for reserved codes."""
    got = DTYPES.get(dt)  # type: ignore[arg-type]  # (a code hashes as its member)
    return got if got is not None else DTYPES[DataType(dt)]


def bits_dtype(bits: int) -> np.dtype:
    """The unsigned integer dtype of a container width (used for bit-exact views)."""
    return np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])
