"""The ``pto`` dialect: generated catalog ops plus the scalar plumbing around them.

Besides one op per catalog row (``pto_ops``), the dialect has:

* ``pto.addr`` -- a GM address: a tensor's per-PE base plus a byte offset;
* ``pto.scratch`` -- an address in the spill scratch area (after ``allocate``);
* ``pto.const`` -- a 64-bit constant a bundle reads from a GPR;
* ``pto.materialize`` -- (after ``allocate``) write a scalar into a named GPR with
  scalar instructions in a ``BSTART.STD`` block;
* ``pto.program`` -- (after ``emit``) the finished bundle program as text lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from types import MappingProxyType

from xdsl.dialects.builtin import I64, ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, BlockArgument, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from ptoc.backend.isa import scalar_load

from .pto_base import PtoOp, fast_segments, i64_attr, lean_init
from .pto_ops import PTO_OPS
from .pto_types import GPR, DatrAttr, GprType, PtoTileType
from .tile_types import TensorType

__all__ = [
    "PTO_OP_BY_MNEMONIC",
    "AddrOp",
    "ConstOp",
    "IndexAddrOp",
    "LoadScalarOp",
    "MaterializeOp",
    "ParamOp",
    "ProgramOp",
    "Pto",
    "PtoOp",
    "RegOp",
    "ScratchAddrOp",
    "signed64",
]

PTO_OP_BY_MNEMONIC: dict[str, type[PtoOp]] = {c.MNEMONIC: fast_segments(c) for c in PTO_OPS}


# The scalar ops below are built the way IRDL's generic builder builds them (the same
# operands, result types and properties, in the same order, the Nones left out), but
# directly through ``pto_base.lean_init`` (``Operation.__init__`` without its generic
# parts): legalize and allocate build one or more of them per bundle, and the generic
# builder's argument checks cost more than the op.


@cache
def _gpr_attr(name: str) -> StringAttr:
    return StringAttr(name)


@cache
def _gpr_properties(name: str) -> Mapping[str, Attribute]:
    """The properties of every ``pto.materialize`` into GPR ``name``, one read-only
    mapping for them all (a kernel has one such op per register write, and a dictionary
    costs more than the op's other parts; no pass writes into them, and a write fails
    rather than reaching every op)."""
    return MappingProxyType({"gpr": _gpr_attr(name)})


def signed64(value: int) -> int:
    """A raw 64-bit pattern as the signed integer an i64 attribute holds."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


@irdl_op_definition
class AddrOp(IRDLOperation):
    """``%a = pto.addr %x offset 512 [pe_step 2048] : T``: the GM address
    ``base(x) + pe * pe_step + offset`` on each PE (a scalar bundle operand)."""

    name = "pto.addr"
    tensor = operand_def(TensorType)
    offset = prop_def(IntegerAttr[I64])
    pe_step = opt_prop_def(IntegerAttr[I64])
    result = result_def(GPR)
    traits = traits_def(Pure())
    assembly_format = (
        "$tensor `offset` $offset (`pe_step` $pe_step^)? attr-dict `:` type($tensor)"
    )

    def __init__(self, tensor: SSAValue, offset: int, pe_step: int = 0) -> None:
        props = {"offset": i64_attr(offset)}
        if pe_step:
            props["pe_step"] = i64_attr(pe_step)
        lean_init(self, (tensor,), (GPR,), props)

    @property
    def byte_offset(self) -> int:
        return self.offset.value.data

    @property
    def step(self) -> int:
        return 0 if self.pe_step is None else self.pe_step.value.data


@irdl_op_definition
class IndexAddrOp(IRDLOperation):
    """``%a = pto.index %base + [%i * 256, %j * 4]``: a GM address that run-time integers
    move: ``base + sum(index * scale)`` bytes (a load or store window at a run-time row or
    column). The allocator computes it into a GPR with scalar instructions right before
    the bundle that reads it."""

    name = "pto.index"
    base = operand_def(GPR)
    indices = var_operand_def(i64)
    scales = prop_def(DenseArrayBase.constr(i64))
    #: the inclusive range ``[low, high]`` of each index that keeps the window inside its
    #: tensor: outside it the program stops with a fault before the bundle
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    #: the window axis each index moves (0 rows, 1 columns)
    axis = prop_def(DenseArrayBase.constr(i64))
    #: what the window addresses, for the fault message (``pt.load of x, 64x32``)
    what = opt_prop_def(StringAttr)
    result = result_def(GPR)
    traits = traits_def(Pure())
    assembly_format = (
        "$base `+` `(` $indices `)` `scales` $scales `axis` $axis `in` $low `to` $high "
        "(`of` $what^)? attr-dict"
    )

    def __init__(
        self,
        base: SSAValue,
        terms: Sequence[tuple[SSAValue, int]],
        bounds: Sequence[tuple[int, int]],
        axes: Sequence[int],
        what: str | None = None,
    ) -> None:
        super().__init__(
            operands=[base, [v for v, _ in terms]],
            result_types=[GPR],
            properties={
                "scales": DenseArrayBase.from_list(i64, [k for _, k in terms]),
                "low": DenseArrayBase.from_list(i64, [lo for lo, _ in bounds]),
                "high": DenseArrayBase.from_list(i64, [hi for _, hi in bounds]),
                "axis": DenseArrayBase.from_list(i64, list(axes)),
                "what": None if what is None else StringAttr(what),
            },
        )

    @property
    def axes(self) -> list[str]:
        """``row`` or ``col``: what each index moves (the fault message names it)."""
        return ["col" if a else "row" for a in self.axis.get_values()]

    @property
    def bounds(self) -> list[tuple[int, int]]:
        """The valid ``[low, high]`` of every index."""
        lo, hi = self.low.get_values(), self.high.get_values()
        return [(int(a), int(b)) for a, b in zip(lo, hi, strict=True)]

    @property
    def terms(self) -> list[tuple[SSAValue, int]]:
        """(run-time integer, bytes per unit) of every moving part of the address."""
        return list(zip(self.indices, (int(k) for k in self.scales.get_values()), strict=True))


@irdl_op_definition
class LoadScalarOp(IRDLOperation):
    """``%v = pto.load_scalar %a bytes 4 signed : i64``: the integer of ``bytes`` bytes
    at GM address ``%a``, sign- or zero-extended (an AGU load into a GPR)."""

    name = "pto.load_scalar"
    address = operand_def(GPR)
    size = prop_def(IntegerAttr[I64])
    signed = prop_def(IntegerAttr[I64])
    result = result_def(i64)
    assembly_format = "$address `bytes` $size `signed` $signed attr-dict"

    def __init__(self, address: SSAValue, size: int, signed: bool) -> None:
        super().__init__(
            operands=[address],
            result_types=[i64],
            properties={
                "size": IntegerAttr(size, i64),
                "signed": IntegerAttr(int(signed), i64),
            },
        )

    @property
    def mnemonic(self) -> str:
        """The AGU load of the catalog for this size and extension (``LBI`` .. ``LDI``)."""
        return scalar_load(self.size.value.data, bool(self.signed.value.data))


@irdl_op_definition
class ScratchAddrOp(IRDLOperation):
    """``%a = pto.scratch offset 128``: an address in this PE's spill scratch area (the
    ABI passes its per-PE base like a tensor's)."""

    name = "pto.scratch"
    offset = prop_def(IntegerAttr[I64])
    result = result_def(GPR)
    traits = traits_def(Pure())
    assembly_format = "`offset` $offset attr-dict"

    def __init__(self, offset: int) -> None:
        lean_init(self, (), (GPR,), {"offset": i64_attr(offset)})

    @property
    def byte_offset(self) -> int:
        return self.offset.value.data


@irdl_op_definition
class ConstOp(IRDLOperation):
    """``%c = pto.const 1065353216``: a 64-bit scalar (stored as signed i64)."""

    name = "pto.const"
    value = prop_def(IntegerAttr[I64])
    result = result_def(GPR)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: int) -> None:
        props = {"value": i64_attr(signed64(value))}
        lean_init(self, (), (GPR,), props)

    @property
    def raw(self) -> int:
        """The unsigned 64-bit pattern."""
        return self.value.value.data & ((1 << 64) - 1)


@irdl_op_definition
class ParamOp(IRDLOperation):
    """``%g = pto.param %alpha``: the register of a run-time scalar parameter, read by a
    bundle as its scalar operand (a tile-scalar op's value: the parameter's raw bits)."""

    name = "pto.param"
    param = operand_def(i64)
    result = result_def(GPR)
    traits = traits_def(Pure())
    assembly_format = "$param attr-dict"

    def __init__(self, param: SSAValue) -> None:
        lean_init(self, (param,), (GPR,))

    @property
    def index(self) -> int:
        """The parameter's position among the kernel's arguments."""
        arg = self.param
        assert isinstance(arg, BlockArgument)
        return arg.index


@irdl_op_definition
class RegOp(IRDLOperation):
    """``%g = pto.reg %v``: the register holding run-time value ``%v`` (computed by the
    program: an FP32 scalar, say), read by a bundle as its scalar operand."""

    name = "pto.reg"
    value = operand_def(i64)
    result = result_def(GPR)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: SSAValue) -> None:
        super().__init__(operands=[value], result_types=[GPR])


@irdl_op_definition
class MaterializeOp(IRDLOperation):
    """``pto.materialize %v gpr "s1"``: write the scalar ``%v`` into GPR ``s1`` (emitted as
    scalar instructions in a ``BSTART.STD FALL`` block)."""

    name = "pto.materialize"
    value = operand_def(GPR)
    gpr = prop_def(StringAttr)
    assembly_format = "$value `gpr` $gpr attr-dict"

    def __init__(self, value: SSAValue, gpr: str) -> None:
        lean_init(self, (value,), (), _gpr_properties(gpr), shared=True)


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """``pto.program "k" [...lines]``: the emitted bundle program in canonical text."""

    name = "pto.program"
    kernel = prop_def(StringAttr)
    lines = prop_def(ArrayAttr[StringAttr])

    def __init__(self, kernel: str, lines: Sequence[str]) -> None:
        super().__init__(
            properties={
                "kernel": StringAttr(kernel),
                "lines": ArrayAttr(StringAttr(s) for s in lines),
            }
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.kernel.data)
        printer.print_string(" [")
        with printer.indented():
            for i, line in enumerate(self.lines):
                printer.print_string("\n" if i == 0 else ",\n", indent=None)
                printer.print_string("", indent=None)
                printer.print_string_literal(line.data)
        printer.print_string("\n", indent=None)
        printer.print_string("]")

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        kernel = parser.parse_str_literal()
        lines = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_str_literal
        )
        return cls(kernel, lines)


Pto = Dialect(
    "pto",
    [
        *PTO_OPS,
        AddrOp,
        IndexAddrOp,
        LoadScalarOp,
        ScratchAddrOp,
        ConstOp,
        MaterializeOp,
        ParamOp,
        ProgramOp,
        RegOp,
    ],
    [PtoTileType, GprType, DatrAttr],
)
