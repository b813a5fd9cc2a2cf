"""Proxy values a kernel body computes with: :class:`Tile` (a tile value) and
:class:`TensorParam` (a global-memory tensor parameter).

A ``Tile`` wraps the SSA value of one traced op result. Python operators map onto the
``tile`` ops with numpy-style broadcasting (see :mod:`ptoc.lang.arith`). Anything that
would need the tile's *data* at trace time (``if t:``, ``for x in t``, ``float(t)``,
numpy functions) is refused with a diagnostic saying what to write instead.
"""

from __future__ import annotations

from typing import Any, NoReturn

from xdsl.ir import SSAValue

from ptoc.dialects.tile_types import TileType

from .dtypes import DType, dtype_of
from .errors import KernelError
from .source import user_location
from .tensor import TensorSpec


def _refuse(what: str, hint: str) -> NoReturn:
    raise KernelError(what, user_location(3), hint=hint)


_DATA_HINT = (
    "tile contents exist only when the kernel runs; Python control flow must use "
    "compile-time values. Select elementwise with pt.where(pred, a, b)"
)


class Tile:
    """A tile value inside a kernel being traced: ``shape`` is its (rows, cols)."""

    __slots__ = ("value",)

    #: numpy must hand mixed expressions (``np.float32(2) * t``) back to Tile
    __array_priority__ = 1000

    def __init__(self, value: SSAValue) -> None:
        self.value = value

    @property
    def type(self) -> TileType:
        t = self.value.type
        assert isinstance(t, TileType)
        return t

    @property
    def shape(self) -> tuple[int, int]:
        """The (rows, cols) of the elements the tile holds."""
        return self.type.valid

    @property
    def dtype(self) -> DType:
        return dtype_of(self.type.dt.value)

    def __repr__(self) -> str:
        return f"Tile({self.dtype.name}, {self.shape[0]}x{self.shape[1]})"

    # ---- operators: numpy-style broadcasting onto the tile ops (ptoc.lang.arith)

    def _bin(self, kind: str, other: Any, reflected: bool = False) -> Tile:
        from .lang import arith

        return arith.binary(kind, other, self) if reflected else arith.binary(kind, self, other)

    def __add__(self, o: Any) -> Tile:
        return self._bin("ADD", o)

    def __radd__(self, o: Any) -> Tile:
        return self._bin("ADD", o, True)

    def __sub__(self, o: Any) -> Tile:
        return self._bin("SUB", o)

    def __rsub__(self, o: Any) -> Tile:
        return self._bin("SUB", o, True)

    def __mul__(self, o: Any) -> Tile:
        return self._bin("MUL", o)

    def __rmul__(self, o: Any) -> Tile:
        return self._bin("MUL", o, True)

    def __truediv__(self, o: Any) -> Tile:
        return self._bin("DIV", o)

    def __rtruediv__(self, o: Any) -> Tile:
        return self._bin("DIV", o, True)

    def __mod__(self, o: Any) -> Tile:
        return self._bin("REM", o)

    def __rmod__(self, o: Any) -> Tile:
        return self._bin("REM", o, True)

    def __and__(self, o: Any) -> Tile:
        return self._bin("AND", o)

    def __rand__(self, o: Any) -> Tile:
        return self._bin("AND", o, True)

    def __or__(self, o: Any) -> Tile:
        return self._bin("OR", o)

    def __ror__(self, o: Any) -> Tile:
        return self._bin("OR", o, True)

    def __xor__(self, o: Any) -> Tile:
        return self._bin("XOR", o)

    def __rxor__(self, o: Any) -> Tile:
        return self._bin("XOR", o, True)

    def __lshift__(self, o: Any) -> Tile:
        return self._bin("SHL", o)

    def __rlshift__(self, o: Any) -> Tile:
        return self._bin("SHL", o, True)

    def __rshift__(self, o: Any) -> Tile:
        return self._bin("SHR", o)

    def __rrshift__(self, o: Any) -> Tile:
        return self._bin("SHR", o, True)

    def __neg__(self) -> Tile:
        from .lang.derived import DERIVED

        return DERIVED["neg"](self)

    def __pos__(self) -> Tile:
        return self

    def __abs__(self) -> Tile:
        from .lang.derived import DERIVED

        return DERIVED["abs"](self)

    def __invert__(self) -> Tile:
        from .lang.derived import DERIVED

        return DERIVED["bitwise_not"](self)

    def _cmp(self, mode: str, other: Any) -> Tile:
        from .lang import arith

        return arith.compare(mode, self, other)

    def __lt__(self, o: Any) -> Tile:
        return self._cmp("lt", o)

    def __le__(self, o: Any) -> Tile:
        return self._cmp("le", o)

    def __gt__(self, o: Any) -> Tile:
        return self._cmp("gt", o)

    def __ge__(self, o: Any) -> Tile:
        return self._cmp("ge", o)

    def __eq__(self, o: Any) -> Tile:  # type: ignore[override]
        return self._cmp("eq", o)

    def __ne__(self, o: Any) -> Tile:  # type: ignore[override]
        return self._cmp("ne", o)

    __hash__ = object.__hash__

    def __getitem__(self, key: Any) -> Tile:
        from .lang import layout

        return layout.subtile(self, key)

    @property
    def T(self) -> Tile:
        """The transposed tile (TTRANS)."""
        from .lang import layout

        return layout.transpose(self)

    def astype(self, dtype: Any) -> Tile:
        """Convert to another element type (TCVT, round to nearest even)."""
        from .lang import elementwise

        return elementwise.cast(self, dtype)

    # ---- refused: these need the data, or are not PTO operations

    def __bool__(self) -> bool:
        _refuse("the truth value of a tile is not known at trace time", _DATA_HINT)

    def __iter__(self) -> NoReturn:
        _refuse("iterating over a tile is not supported", "index a part with t[r0:r1, c0:c1]")

    def __len__(self) -> int:
        _refuse(
            "len() of a tile is not supported", "use t.shape[0] (rows) or t.shape[1] (cols)"
        )

    def __float__(self) -> float:
        _refuse("a tile cannot be converted to a Python number at trace time", _DATA_HINT)

    __int__ = __float__
    __index__ = __float__

    def __floordiv__(self, o: Any) -> NoReturn:
        _refuse(
            "'//' (floor division) is not a PTO operation",
            "use '/' (TDIV; on integer tiles it is TDIV's integer division: `ptoc isa TDIV`)",
        )

    __rfloordiv__ = __floordiv__

    def __pow__(self, o: Any) -> NoReturn:
        _refuse("'**' is not a PTO operation", "multiply (t * t), or use pt.exp(pt.log(t) * k)")

    __rpow__ = __pow__

    def __matmul__(self, o: Any) -> Tile:
        """``a @ b``: the CUBE matrix product (``pt.matmul(a, b)``)."""
        from .lang.matrix import matmul

        return matmul(self, o)

    def __rmatmul__(self, o: Any) -> Tile:
        from .lang.matrix import matmul

        return matmul(o, self)

    def __array_ufunc__(self, ufunc: Any, method: str, *args: Any, **kwargs: Any) -> NoReturn:
        name = getattr(ufunc, "__name__", str(ufunc))
        _refuse(
            f"numpy function np.{name} cannot run on a tile",
            f"use the ptoc.lang function instead (e.g. pt.{_NUMPY_TO_LANG.get(name, name)})",
        )

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> NoReturn:
        name = func.__name__
        _refuse(
            f"numpy function np.{name} cannot run on a tile",
            f"use the ptoc.lang function instead (e.g. pt.{_NUMPY_TO_LANG.get(name, name)})",
        )


_NUMPY_TO_LANG = {
    "add": "add or +",
    "subtract": "-",
    "multiply": "*",
    "true_divide": "/",
    "divide": "/",
    "absolute": "abs",
    "negative": "neg",
    "reciprocal": "recip",
    "amax": "row_max / pt.col_max",
    "max": "row_max / pt.col_max",
    "sum": "row_sum / pt.col_sum",
    "where": "where",
    "transpose": "transpose",
    "concatenate": "concat",
}


class TensorParam:
    """A tensor parameter inside a kernel being traced (a global-memory buffer)."""

    __slots__ = ("name", "spec", "value")

    def __init__(self, name: str, spec: TensorSpec, value: SSAValue) -> None:
        self.name = name
        self.spec = spec
        self.value = value

    @property
    def shape(self) -> tuple[int, int]:
        return self.spec.shape

    @property
    def dtype(self) -> DType:
        return self.spec.dtype

    def __repr__(self) -> str:
        return f"TensorParam({self.name}: {self.spec!r})"

    def _not_a_tile(self, *args: Any) -> NoReturn:
        _refuse(
            f"'{self.name}' is a global-memory tensor, not a tile",
            f"load it first: t = pt.load({self.name}), or a window with "
            f"pt.load({self.name}, rows=(start, n))",
        )

    def __getitem__(self, key: Any) -> NoReturn:
        _refuse(
            f"indexing the tensor '{self.name}' is not supported",
            f"load a window: pt.load({self.name}, rows=(start, n), cols=(start, n))",
        )

    def __bool__(self) -> bool:
        self._not_a_tile()

    def __array_ufunc__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._not_a_tile()


_ARITHMETIC = (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow and rand or "
    "ror xor rxor lshift rlshift rshift rrshift neg pos abs invert lt le gt ge matmul iter"
)
for _name in _ARITHMETIC.split():
    setattr(TensorParam, f"__{_name}__", TensorParam._not_a_tile)
