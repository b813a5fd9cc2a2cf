"""Types of the ``tile`` dialect: tiles (values in Local storage) and tensors (GM buffers).

``!tile.tile<FP32, 8x64>`` is an 8x64 FP32 tile whose every element is valid;
``!tile.tile<FP32, 8x64, valid 7x60>`` has a 7x60 valid rectangle anchored at [0, 0]
inside its 8x64 extent. The valid rectangle is what the kernel means: operations read
and write only valid elements. The extent is the kernel's box; the physical Rows, Col
and SizeCode are chosen by ``legalize`` (Col is the extent's column count rounded up to
a power of two). ``!tile.tensor<FP32, 32x64, stride 80>`` is a row-major GM tensor
argument whose rows are 80 elements apart (default: dense).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .dtypes import DType, DTypeAttr, dtype_attr, element_bits


class Layout(StrEnum):
    """Element placement of a tile; the TEPL operations require ``row_major``."""

    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    """A tile layout: ``#tile.layout row_major``."""

    name = "tile.layout"


Shape = tuple[int, int]


def _dims(attr: ArrayAttr[IntAttr]) -> Shape:
    r, c = (d.data for d in attr.data)
    return (r, c)


def _shape_attr(shape: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr(IntAttr(int(d)) for d in shape)


def _parse_shape(parser: AttrParser) -> list[int]:
    dims = parser.parse_dimension_list()
    if len(dims) != 2:
        parser.raise_error(f"expected a rank-2 shape ROWSxCOLS, got {len(dims)} dimensions")
    return dims


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """A tile value: element DataType, extent, valid rectangle and layout."""

    name = "tile.tile"

    dtype: DTypeAttr
    shape: ArrayAttr[IntAttr]
    valid_shape: ArrayAttr[IntAttr]
    layout: LayoutAttr

    def __init__(
        self,
        dtype: DTypeAttr | DType | str,
        shape: Sequence[int],
        valid_shape: Sequence[int] | None = None,
        layout: Layout = Layout.ROW_MAJOR,
    ) -> None:
        valid = shape if valid_shape is None else valid_shape
        d = dtype if isinstance(dtype, DTypeAttr) else dtype_attr(dtype)
        super().__init__(d, _shape_attr(shape), _shape_attr(valid), LayoutAttr(layout))

    @property
    def extent(self) -> Shape:
        return _dims(self.shape)

    @property
    def valid(self) -> Shape:
        return _dims(self.valid_shape)

    @property
    def dt(self) -> DType:
        return self.dtype.data

    def with_dtype(self, dtype: DTypeAttr | DType | str) -> TileType:
        return TileType(dtype, self.extent, self.valid, self.layout.data)

    @property
    def valid_bytes(self) -> int:
        r, c = self.valid
        return (r * c * element_bits(self.dtype) + 7) // 8

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dtype = DTypeAttr(parser.parse_str_enum(DType))
            parser.parse_punctuation(",")
            shape = _parse_shape(parser)
            valid = shape
            layout = Layout.ROW_MAJOR
            while parser.parse_optional_punctuation(","):
                if parser.parse_optional_keyword("valid"):
                    valid = _parse_shape(parser)
                else:
                    layout = parser.parse_str_enum(Layout)
        return (dtype, _shape_attr(shape), _shape_attr(valid), LayoutAttr(layout))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.dt.value}, {self.extent[0]}x{self.extent[1]}")
            if self.valid != self.extent:
                printer.print_string(f", valid {self.valid[0]}x{self.valid[1]}")
            if self.layout.data != Layout.ROW_MAJOR:
                printer.print_string(f", {self.layout.data.value}")

    def verify(self) -> None:
        if len(self.shape) != 2 or len(self.valid_shape) != 2:
            raise VerifyException("a tile has rank 2")
        (sr, sc), (vr, vc) = self.extent, self.valid
        if min(sr, sc, vr, vc) < 1 or vr > sr or vc > sc:
            raise VerifyException(
                f"tile valid shape {vr}x{vc} must be nonempty and inside the extent {sr}x{sc}"
            )


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """A row-major global-memory tensor argument; ``row_stride`` is in elements."""

    name = "tile.tensor"

    dtype: DTypeAttr
    shape: ArrayAttr[IntAttr]
    row_stride: IntAttr

    def __init__(
        self,
        dtype: DTypeAttr | DType | str,
        shape: Sequence[int],
        row_stride: int | None = None,
    ) -> None:
        d = dtype if isinstance(dtype, DTypeAttr) else dtype_attr(dtype)
        stride = shape[1] if row_stride is None else row_stride
        super().__init__(d, _shape_attr(shape), IntAttr(stride))

    @property
    def dims(self) -> Shape:
        return _dims(self.shape)

    @property
    def dt(self) -> DType:
        return self.dtype.data

    @property
    def stride(self) -> int:
        return self.row_stride.data

    @property
    def row_stride_bytes(self) -> int:
        return self.stride * element_bits(self.dtype) // 8

    @property
    def nbytes(self) -> int:
        """Bytes the tensor spans in GM (the last row is not padded to the stride)."""
        rows, cols = self.dims
        return ((rows - 1) * self.stride + cols) * element_bits(self.dtype) // 8

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dtype = DTypeAttr(parser.parse_str_enum(DType))
            parser.parse_punctuation(",")
            shape = _parse_shape(parser)
            stride = shape[1]
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("stride")
                stride = parser.parse_integer(allow_negative=False)
        return (dtype, _shape_attr(shape), IntAttr(stride))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.dt.value}, {self.dims[0]}x{self.dims[1]}")
            if self.stride != self.dims[1]:
                printer.print_string(f", stride {self.stride}")

    def verify(self) -> None:
        if len(self.shape) != 2:
            raise VerifyException("a tensor has rank 2")
        rows, cols = self.dims
        if rows < 1 or cols < 1 or self.stride < cols:
            raise VerifyException(
                f"tensor {rows}x{cols} needs a row stride of at least {cols} elements, "
                f"not {self.stride}"
            )
        if element_bits(self.dtype) < 8:
            raise VerifyException("tensors of sub-byte or predicate elements are unsupported")
