"""Run-time integer scalars of a ``tile`` kernel: which ops compute them and what they mean.

A kernel's run-time scalars are ``i64`` SSA values: its scalar parameters (function
arguments), the induction variables of its ``scf.for`` loops and the results of the
``arith`` integer ops below. They compute in 64-bit two's complement, as the GPRs that
hold them on the machine do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, IntegerType, StringAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.scalar_fp import FP32_DESTINATION, FP32_SOURCE, FSU_BY_OP, INT64_SOURCE

from .tile_types import TensorType

M64 = (1 << 64) - 1


def wrap64(v: int) -> int:
    """``v`` as the signed 64-bit value a GPR holding its low 64 bits denotes."""
    v &= M64
    return v - (1 << 64) if v >> 63 else v


#: the integer ``arith`` ops a kernel's scalars use, and their meaning on Python ints
BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}


#: the ``arith.cmpi`` predicates a kernel's conditions use (signed), and their meaning
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
}
#: ``arith.cmpi``'s predicate codes by name
CMPI_CODES = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}


def predicate(op: arith.CmpiOp) -> str:
    """The name of an ``arith.cmpi``'s predicate (``slt``, ...)."""
    code = op.predicate.value.data
    return next(k for k, c in CMPI_CODES.items() if c == code)


def is_scalar(v: SSAValue) -> bool:
    """A run-time integer scalar (an ``i64`` value)."""
    return isinstance(v.type, IntegerType) and v.type.width.data == 64


@irdl_op_definition
class LoadScalarOp(IRDLOperation):
    """``%v = tile.load_scalar %x[r, c] plus [axes](%i, ...) : Tensor -> i64``: one
    integer element of a tensor as a run-time integer (sign- or zero-extended from its
    type): block tables, token ids, sequence lengths. Run-time indices move the element
    like a load's window (``axes``: 0 rows, 1 columns)."""

    name = "tile.load_scalar"
    source = operand_def(TensorType)
    indices = var_operand_def(i64)
    offsets = prop_def(DenseArrayBase.constr(i64))
    dyn = prop_def(DenseArrayBase.constr(i64))
    result = result_def(i64)
    traits = traits_def(MemoryReadEffect())
    assembly_format = (
        "$source `` $offsets `plus` $dyn `(` $indices `)` attr-dict `:` type($source)"
    )

    def __init__(
        self,
        source: SSAValue,
        offsets: Sequence[int],
        indices: Sequence[tuple[int, SSAValue]] = (),
    ) -> None:
        super().__init__(
            operands=[source, [v for _, v in indices]],
            result_types=[i64],
            properties={
                "offsets": DenseArrayBase.from_list(i64, list(offsets)),
                "dyn": DenseArrayBase.from_list(i64, [a for a, _ in indices]),
            },
        )

    @property
    def dtype(self) -> DataType:
        t = self.source.type
        assert isinstance(t, TensorType)
        return DataType[t.dt.value]

    @property
    def dynamic_axes(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.dyn.get_values())

    def verify_(self) -> None:
        ti = info(self.dtype)
        if ti.is_float or ti.bits not in (8, 16, 32, 64):
            raise VerifyException(
                f"{self.name} reads an integer element of 8, 16, 32 or 64 bits, not "
                f"{self.dtype.name}"
            )
        if len(self.dynamic_axes) != len(self.indices):
            raise VerifyException(f"{self.name} names one axis per run-time index")
        r, c = (int(v) for v in self.offsets.get_values())
        rows, cols = self.source.type.dims  # type: ignore[attr-defined]
        if not (0 <= r < rows and 0 <= c < cols):
            raise VerifyException(f"{self.name} element [{r}, {c}] is outside the tensor")

    def element(self, scalars: dict[SSAValue, int]) -> tuple[int, int]:
        """The element's (row, column) at the run-time indices' values."""
        r, c = (int(v) for v in self.offsets.get_values())
        for axis, v in zip(self.dynamic_axes, self.indices, strict=True):
            if axis:
                c += scalars[v]
            else:
                r += scalars[v]
        return r, c


@irdl_op_definition
class CoreOp(IRDLOperation):
    """``%i = tile.core index`` / ``tile.core count``: the index of the core running the
    kernel in its grid launch, or the number of cores (D13)."""

    name = "tile.core"
    kind = prop_def(IntegerAttr[I64])
    result = result_def(i64)
    assembly_format = "$kind attr-dict"

    INDEX: ClassVar[int] = 0
    COUNT: ClassVar[int] = 1

    def __init__(self, kind: int) -> None:
        super().__init__(result_types=[i64], properties={"kind": IntegerAttr(kind, i64)})

    @property
    def is_count(self) -> bool:
        return self.kind.value.data == self.COUNT


#: the FP32 binary operations and comparisons of run-time float scalars (``FsuForm.op``)
FLOAT_BINARY = ("add", "sub", "mul", "div", "min", "max")
FLOAT_COMPARE = ("eq", "ne", "lt", "ge")
#: the FSU SrcType of an FP32 carrier (the GPR's low word)
FP32_TYPE = FP32_SOURCE


@irdl_op_definition
class FloatOp(IRDLOperation):
    """``%r = tile.float add %a, %b``: FP32 arithmetic of run-time float scalars, each an
    ``i64`` whose low word holds the FP32 bits (as its GPR does); the FSU form of the
    operation (FADD, FSUB, FMUL, FDIV, FMIN, FMAX), rounding to nearest even. A
    comparison (eq, ne, lt, ge) gives 1 or 0 -- false whenever an operand is a NaN."""

    name = "tile.float"
    kind = prop_def(StringAttr)
    lhs = operand_def(i64)
    rhs = operand_def(i64)
    result = result_def(i64)
    assembly_format = "$kind $lhs `,` $rhs attr-dict"

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(
            operands=[lhs, rhs], result_types=[i64], properties={"kind": StringAttr(kind)}
        )

    @property
    def op_kind(self) -> str:
        return self.kind.data

    @property
    def mnemonic(self) -> str:
        k = self.op_kind
        return FSU_BY_OP[k]

    def verify_(self) -> None:
        if self.op_kind not in FLOAT_BINARY and self.op_kind not in FLOAT_COMPARE:
            raise VerifyException(f"{self.name} {self.op_kind!r} is not an FP32 operation")


@irdl_op_definition
class IntToFloatOp(IRDLOperation):
    """``%f = tile.int_to_float %i``: a run-time integer rounded to an FP32 scalar
    (SCVTF of the 64-bit signed value, to nearest even)."""

    name = "tile.int_to_float"
    source = operand_def(i64)
    result = result_def(i64)
    assembly_format = "$source attr-dict"

    def __init__(self, source: SSAValue) -> None:
        super().__init__(operands=[source], result_types=[i64])


def float_value(op: Operation, values: dict[SSAValue, int]) -> int:
    """The FP32 (or 0/1) result of a run-time float op, as the register's 64-bit word."""
    import numpy as np

    from ptoc.backend.isa.semantics import fsu

    if isinstance(op, IntToFloatOp):
        w = np.array([values[op.source] & M64], np.uint64)
        r, _ = fsu.convert_from_int(True, INT64_SOURCE, FP32_DESTINATION, w, 0)
        return int(r[0])
    assert isinstance(op, FloatOp)
    a, b = (np.array([values[v] & M64], np.uint64) for v in (op.lhs, op.rhs))
    if op.op_kind in FLOAT_COMPARE:
        r, _ = fsu.compare(op.op_kind, FP32_TYPE, a, b, False)
    else:
        r, _ = fsu.binary(op.op_kind, FP32_TYPE, a, b, 0)
    return int(r[0])


def is_scalar_op(op: Operation) -> bool:
    """An op that computes a run-time scalar (``arith.constant``, a binary op above, a
    float op, or a ``tile.load_scalar``)."""
    cls = type(op)
    scalar = _SCALAR_OP.get(cls)
    if scalar is None:  # a fact of the class, asked for every op of every kernel
        scalar = _SCALAR_OP[cls] = (
            issubclass(
                cls,
                (arith.ConstantOp, LoadScalarOp, arith.CmpiOp, CoreOp, FloatOp, IntToFloatOp),
            )
            or cls in BINARY
        )
    return scalar


#: :func:`is_scalar_op` by op class
_SCALAR_OP: dict[type, bool] = {}


def constant(value: int) -> arith.ConstantOp:
    """``arith.constant value : i64``."""
    return arith.ConstantOp(IntegerAttr(wrap64(value), i64))


def constant_value(v: SSAValue) -> int | None:
    """The value of an ``arith.constant`` result, else None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


class ElementError(Exception):
    """A ``tile.load_scalar`` whose run-time indices name no element of its tensor."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def evaluate(
    op: Operation,
    values: dict[SSAValue, int],
    tensors: dict[SSAValue, Any] | None = None,
    core: tuple[int, int] = (0, 1),
) -> int:
    """The value of scalar op ``op`` given its operands' values (and, for a
    ``tile.load_scalar``, the tensors' contents; for a ``tile.core``, the (index, count)
    of the core)."""
    if isinstance(op, CoreOp):
        return core[1] if op.is_count else core[0]
    if isinstance(op, LoadScalarOp):
        assert tensors is not None
        data = tensors[op.source]
        r, c = op.element(values)
        if not (0 <= r < data.shape[0] and 0 <= c < data.shape[1]):
            raise ElementError(
                f"pt.load_scalar: element [{r}, {c}] is outside the {data.shape[0]}x"
                f"{data.shape[1]} tensor at these run-time indices"
            )
        return wrap64(int(data[r, c]))
    if isinstance(op, arith.ConstantOp):
        c = constant_value(op.results[0])
        assert c is not None
        return c
    if isinstance(op, arith.CmpiOp):
        a, b = (values[v] for v in op.operands)
        return int(COMPARE[predicate(op)](a, b))
    if isinstance(op, (FloatOp, IntToFloatOp)):
        return float_value(op, values)
    a, b = (values[v] for v in op.operands)
    return wrap64(BINARY[type(op)](a, b))
