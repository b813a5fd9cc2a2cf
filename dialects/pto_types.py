"""Types and attributes of the ``pto`` dialect (one op per catalog row).

``!pto.tile<FP32, valid 8x64, phys 8x64, 2KB>`` is a Local tile descriptor exactly as a
bundle creates it: DataType, valid rectangle, physical Rows x Col and the per-PE
allocation size (SizeCode). Rows are derived from size, Col and element width
(REFERENCE 5.1), so the type is only legal when that derivation holds.
``!pto.tile<FP16, valid 16x64, CUBE_M16, 4KB>`` is a CUBE tile (layout CUBE_M16, CUBE_M32
or CUBE_N8): its storage is the 128-byte cells the layout and valid shape need
(``TileCubeRequiredBytes``, :func:`ptoc.backend.isa.cube.geometry`), which must fit the
SizeCode; it is created only by a CUBE load conversion or a matrix bundle.
``!pto.gpr`` is a 64-bit scalar that a bundle reads from a GPR.
``#pto.datr<...>`` is an explicit B.DATR: the named fields, all others zero.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.fields import (
    SIZE_BY_NAME,
    SIZE_NAMES,
    size_bytes,
)
from ptoc.backend.program import DATR_BY_ATTR
from ptoc.backend.program import DATR_FIELDS as BACKEND_DATR_FIELDS

from .dtypes import DType, DTypeAttr, dtype_attr, element_bits

#: largest Local SizeCode (64 KiB per PE)
MAX_SIZE_CODE = 10


#: the ``layout`` parameter of a CUBE tile type (0: a generic row-major tile)
CUBE_LAYOUT_CODES: dict[CubeLayout, int] = {
    CubeLayout.M16: 1,
    CubeLayout.M32: 2,
    CubeLayout.N8: 3,
}
_CUBE_BY_CODE = {v: k for k, v in CUBE_LAYOUT_CODES.items()}
_CUBE_BY_NAME = {k.value: k for k in CUBE_LAYOUT_CODES}


def derived_rows(size: int, cols: int, bits: int) -> int:
    """Physical Rows of a tile of SizeCode ``size``: capacity bits / (Col * bits)."""
    return size_bytes(size) * 8 // (cols * bits)


@irdl_attr_definition
class PtoTileType(ParametrizedAttribute, TypeAttribute):
    """A Local tile descriptor: DataType, valid shape, physical Col and SizeCode, and for
    a CUBE tile its layout (its Col is then the storage columns of the layout)."""

    name = "pto.tile"

    dtype: DTypeAttr
    valid_rows: IntAttr
    valid_cols: IntAttr
    cols: IntAttr
    size: IntAttr
    layout: IntAttr

    def __init__(
        self,
        dtype: DTypeAttr | DType | str,
        valid: Sequence[int],
        cols: int,
        size: int,
        cube: CubeLayout | None = None,
    ) -> None:
        d = dtype if isinstance(dtype, DTypeAttr) else dtype_attr(dtype)
        code = 0 if cube is None else CUBE_LAYOUT_CODES[cube]
        super().__init__(
            d, IntAttr(valid[0]), IntAttr(valid[1]), IntAttr(cols), IntAttr(size), IntAttr(code)
        )

    @classmethod
    def cube_tile(
        cls, dtype: DTypeAttr | DType | str, valid: Sequence[int], layout: CubeLayout, size: int
    ) -> PtoTileType:
        """The CUBE tile type of a valid shape in ``layout`` at SizeCode ``size``."""
        d = dtype if isinstance(dtype, DTypeAttr) else dtype_attr(dtype)
        g = isa_cube.geometry(layout, DataType[d.data.value], valid[0], valid[1])
        return cls(d, valid, g.cols, size, layout)

    @property
    def cube(self) -> CubeLayout | None:
        """The CUBE layout of a CUBE tile, None for a generic tile."""
        return _CUBE_BY_CODE.get(self.layout.data)

    @property
    def valid(self) -> tuple[int, int]:
        return (self.valid_rows.data, self.valid_cols.data)

    @property
    def rows(self) -> int:
        cube = self.cube
        if cube is not None:
            vr, vc = self.valid
            return isa_cube.geometry(cube, self.data_type, vr, vc).rows
        return derived_rows(self.size.data, self.cols.data, element_bits(self.dtype))

    @property
    def nbytes(self) -> int:
        """Bytes per PE the tile occupies (its SizeCode capacity)."""
        return size_bytes(self.size.data)

    @property
    def data_type(self) -> DataType:
        return DataType[self.dtype.data.value]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dtype = DTypeAttr(parser.parse_str_enum(DType))
            parser.parse_punctuation(",")
            parser.parse_keyword("valid")
            vr, vc = parser.parse_dimension_list()
            parser.parse_punctuation(",")
            cube = next(
                (c for n, c in _CUBE_BY_NAME.items() if parser.parse_optional_keyword(n)), None
            )
            if cube is not None:
                parser.parse_punctuation(",")
                size = _parse_size(parser)
                dt = DataType[dtype.data.value]
                cols = isa_cube.geometry(cube, dt, vr, vc).cols
                return (dtype, IntAttr(vr), IntAttr(vc), IntAttr(cols), IntAttr(size),
                        IntAttr(CUBE_LAYOUT_CODES[cube]))  # fmt: skip
            parser.parse_keyword("phys")
            rows, cols = parser.parse_dimension_list()
            parser.parse_punctuation(",")
            size = _parse_size(parser)
        t = (dtype, IntAttr(vr), IntAttr(vc), IntAttr(cols), IntAttr(size), IntAttr(0))
        bits = element_bits(dtype)
        if cols < 1 or cols & (cols - 1):
            parser.raise_error(f"physical Col {cols} is not a power of two")
        if derived_rows(size, cols, bits) != rows:
            parser.raise_error(
                f"physical rows of a {SIZE_NAMES[size]} tile with {cols} "
                f"columns are {derived_rows(size, max(cols, 1), bits)}"
            )
        return t

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            vr, vc = self.valid
            where = f"phys {self.rows}x{self.cols.data}"
            if self.cube is not None:
                where = self.cube.value
            printer.print_string(
                f"{self.dtype.data.value}, valid {vr}x{vc}, {where}, "
                f"{SIZE_NAMES.get(self.size.data, self.size.data)}"
            )

    def verify(self) -> None:
        size, cols = self.size.data, self.cols.data
        if not 1 <= size <= MAX_SIZE_CODE:
            raise VerifyException(f"tile SizeCode {size} is outside 1..{MAX_SIZE_CODE}")
        cube = self.cube
        if self.layout.data and cube is None:
            raise VerifyException(f"tile layout code {self.layout.data} is not a CUBE layout")
        if cube is not None:
            vr, vc = self.valid
            rule = isa_cube.shape_rule(size_bytes(size), cube, self.data_type, vr, vc)
            if rule is not None:
                raise VerifyException(rule)
            return
        if cols < 1 or cols & (cols - 1):
            raise VerifyException(f"physical Col {cols} is not a power of two")
        vr, vc = self.valid
        if min(vr, vc) < 1 or vr > self.rows or vc > cols:
            raise VerifyException(
                f"valid {vr}x{vc} does not fit the physical {self.rows}x{cols} tile"
            )


def _parse_size(parser: AttrParser) -> int:
    code = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if code is not None:
        # "2KB" lexes as the integer 2 followed by the identifier KB
        unit = parser.parse_optional_identifier()
        if unit is None:
            return code
        name = f"{code}{unit}"
        if name not in SIZE_BY_NAME:
            parser.raise_error(f"unknown tile size {name}")
        return SIZE_BY_NAME[name]
    parser.raise_error("expected a tile size such as 2KB")


@irdl_attr_definition
class GprType(ParametrizedAttribute, TypeAttribute):
    """A 64-bit scalar that lives in a GPR when a bundle reads it."""

    name = "pto.gpr"


GPR = GprType()

#: B.DATR fields in positional order (``#pto.datr<...>`` keys: the backend's one mapping)
DATR_FIELDS: tuple[str, ...] = tuple(m.attr for m in BACKEND_DATR_FIELDS)
#: B.DATR field -> catalog ``datr_fields`` name
DATR_CATALOG_NAMES: dict[str, str] = {m.attr: m.name for m in BACKEND_DATR_FIELDS}


def _field_text(name: str, value: int) -> str:
    return DATR_BY_ATTR[name].spell(value)


def _field_value(name: str, parser: AttrParser) -> int:
    spec = DATR_BY_ATTR[name]
    ident = parser.parse_optional_identifier() if spec.names else None
    if ident is None:
        return parser.parse_integer(allow_negative=False)
    code = spec.code(ident)
    if code is None:
        parser.raise_error(f"unknown B.DATR {name} {ident}")
    return code


@irdl_attr_definition
class DatrAttr(ParametrizedAttribute):
    """An explicit B.DATR: ``#pto.datr<dtype = S8, rmode = RNE, sat = 1>`` (unnamed
    fields are zero; an empty ``#pto.datr<>`` is a present all-zero B.DATR)."""

    name = "pto.datr"

    layout: IntAttr
    dtype: IntAttr
    pad: IntAttr
    cmode: IntAttr
    rmode: IntAttr
    sat: IntAttr
    canonicalize: IntAttr

    def __init__(self, **fields: int) -> None:
        unknown = set(fields) - set(DATR_FIELDS)
        assert not unknown, unknown
        super().__init__(*(IntAttr(fields.get(f, 0)) for f in DATR_FIELDS))

    def values(self) -> dict[str, int]:
        return {f: getattr(self, f).data for f in DATR_FIELDS}

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values = dict.fromkeys(DATR_FIELDS, 0)
        with parser.in_angle_brackets():
            first = True
            while True:
                name = parser.parse_optional_identifier() if first else None
                if not first:
                    if parser.parse_optional_punctuation(",") is None:
                        break
                    name = parser.parse_identifier()
                if name is None:
                    break
                first = False
                if name not in values:
                    parser.raise_error(f"unknown B.DATR field {name}")
                parser.parse_punctuation("=")
                values[name] = _field_value(name, parser)
        return tuple(IntAttr(values[f]) for f in DATR_FIELDS)

    def print_parameters(self, printer: Printer) -> None:
        parts = [f"{k} = {_field_text(k, v)}" for k, v in self.values().items() if v]
        printer.print_string("<" + ", ".join(parts) + ">")
