"""``ptoc.Tensor[dtype, rows, cols]``: the annotation of a kernel's tensor parameters.

A tensor parameter is a row-major global-memory buffer. ``Tensor[ptoc.fp32, 64, 128]``
evaluates to a :class:`TensorSpec`, which is all the tracer needs to know about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dtypes import DType, type_list
from .errors import KernelError
from .source import user_location


@dataclass(frozen=True)
class TensorSpec:
    """Element type and (rows, cols) of a tensor parameter."""

    dtype: DType
    shape: tuple[int, int]

    @property
    def nbytes(self) -> int:
        return self.shape[0] * self.shape[1] * self.dtype.bits // 8

    def __repr__(self) -> str:
        return f"ptoc.Tensor[{self.dtype!r}, {self.shape[0]}, {self.shape[1]}]"


_FORM = "ptoc.Tensor[DTYPE, ROWS, COLS], e.g. ptoc.Tensor[ptoc.fp32, 64, 128]"


class Tensor:
    """Annotation of a global-memory tensor parameter: ``ptoc.Tensor[ptoc.fp32, 64, 128]``.

    Tensors are two-dimensional (a vector is ``Tensor[dtype, 1, N]``) and row-major.
    """

    def __init__(self) -> None:
        raise TypeError(f"ptoc.Tensor is an annotation, write {_FORM}")

    def __class_getitem__(cls, params: Any) -> TensorSpec:
        if not isinstance(params, tuple):
            params = (params,)
        loc = user_location(2)
        if len(params) != 3:
            raise KernelError(
                f"a tensor annotation has a DataType and two dimensions, not {len(params)} "
                "parameter(s)",
                loc,
                hint=f"write {_FORM}; a vector is ptoc.Tensor[DTYPE, 1, N]",
            )
        dtype, *dims = params
        if not isinstance(dtype, DType) or dtype.datatype is None:
            raise KernelError(
                f"{dtype!r} is not a tensor element type",
                loc,
                hint=f"use one of the ptoc types: {type_list(d for d in _tensor_types())}",
            )
        if dtype.bits < 8:
            raise KernelError(
                f"tensors of {dtype.name} ({dtype.bits}-bit elements) are not supported",
                loc,
                hint="store packed 4-bit data as a u8 tensor",
            )
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, int) or d < 1:
                raise KernelError(
                    f"tensor dimensions are positive integers, not {d!r}",
                    loc,
                    hint=f"write {_FORM}",
                )
        return TensorSpec(dtype, (dims[0], dims[1]))


def _tensor_types() -> list[DType]:
    from .dtypes import DTYPES

    return [d for d in DTYPES.values() if d.datatype is not None and d.bits >= 8]


@dataclass(frozen=True)
class ScalarSpec:
    """Element type of a run-time scalar parameter (``ptoc.Scalar[ptoc.s32]``)."""

    dtype: DType

    def __repr__(self) -> str:
        return f"ptoc.Scalar[{self.dtype!r}]"


#: the element types a run-time scalar parameter may have
SCALAR_TYPES = ("s32", "s64", "fp32")


class Scalar:
    """Annotation of a run-time scalar parameter: ``n: ptoc.Scalar[ptoc.s32]``.

    Its value is given by name to ``ptoc.run`` / ``ptoc.verify`` / ``ptoc.reference``
    (``n=100``) and reaches the program in a GPR of the kernel ABI; in the body an integer
    scalar is a run-time integer usable as a ``pt.range`` bound and in load/store windows
    (computing in 64-bit two's complement, the GPR width), and an ``fp32`` scalar
    (``alpha: ptoc.Scalar[ptoc.fp32]``, its register holding the value's FP32 bits) is the
    scalar operand of tile arithmetic on FP32 tiles (``t * alpha``).
    """

    def __init__(self) -> None:
        raise TypeError("ptoc.Scalar is an annotation, write ptoc.Scalar[ptoc.s32]")

    def __class_getitem__(cls, params: Any) -> ScalarSpec:
        loc = user_location(2)
        if isinstance(params, tuple):
            if len(params) != 1:
                raise KernelError(
                    f"a scalar annotation has one element type, not {len(params)} parameters",
                    loc,
                    hint="write ptoc.Scalar[ptoc.s32]",
                )
            params = params[0]
        if not isinstance(params, DType) or params.name not in SCALAR_TYPES:
            raise KernelError(
                f"{params!r} is not a run-time scalar type",
                loc,
                hint="run-time scalars are ptoc.Scalar[ptoc.s32], ptoc.Scalar[ptoc.s64] "
                "or ptoc.Scalar[ptoc.fp32]",
            )
        return ScalarSpec(params)
