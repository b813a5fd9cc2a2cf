"""Shared machinery of the ``tile`` dialect: the op base class with reference semantics,
scalar literals, and the extension point for compound operations.

Every ``tile`` op is a value: it reads tile operands and produces new tiles. Each op
class carries its numpy reference semantics in :meth:`TileOp.reference`, built on the
backend's semantics (``ptoc.backend.isa.semantics``), so the reference interpreter
(:mod:`ptoc.dialects.reference`) and verification use one definition per op.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, TypeVar

import numpy as np
from xdsl.ir import Data, SSAValue
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import DataType, OpRow, TileFamily, info, op, row, rows
from ptoc.backend.isa.semantics.core import round_float, to_bits

from .dtypes import DTypeAttr, data_type, is_pred
from .tile_types import Layout, TileType

Number = int | float


# --------------------------------------------------------------------------- scalars


def format_number(value: Number) -> str:
    """Exact, re-parseable text of a scalar literal (``inf``, ``nan`` as keywords)."""
    if isinstance(value, bool) or not isinstance(value, float):
        return str(int(value))
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    if "." not in text:  # MLIR float literals need a '.': 1e-05 -> 1.0e-05
        mant, _, exp = text.partition("e")
        text = f"{mant}.0" + (f"e{exp}" if exp else "")
    return text


def parse_number(parser: AttrParser) -> Number:
    """A scalar literal: an integer, a float, ``inf``, ``-inf`` or ``nan``."""
    if parser.parse_optional_keyword("nan"):
        return math.nan
    if parser.parse_optional_keyword("inf"):
        return math.inf
    if parser.parse_optional_punctuation("-") is not None:
        if parser.parse_optional_keyword("inf"):
            return -math.inf
        value = parser.parse_number()
        return -value if not (value == 0 and isinstance(value, int)) else 0
    return parser.parse_number()


@irdl_attr_definition
class ScalarAttr(Data[Number]):
    """A compile-time scalar operand (an int or a float): ``#tile.scalar<2.5>``."""

    name = "tile.scalar"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Number:
        with parser.in_angle_brackets():
            return parse_number(parser)

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(format_number(self.data))

    @property
    def value(self) -> Number:
        return self.data


def scalar_bits(dtype: DataType, value: Number) -> int:
    """The element-width raw bits a scalar literal denotes at ``dtype`` (cached: keyed by
    the literal's exact bits, so 0.0 and -0.0 stay apart)."""
    if isinstance(value, float):
        return _scalar_bits(dtype, "f", struct.pack("<d", value))
    return _scalar_bits(dtype, "i", int(value))


@lru_cache(maxsize=4096)
def _scalar_bits(dtype: DataType, kind: str, key: bytes | int) -> int:
    value: Number = struct.unpack("<d", key)[0] if kind == "f" else key  # type: ignore[arg-type]
    return _scalar_bits_uncached(dtype, value)


def _scalar_bits_uncached(dtype: DataType, value: Number) -> int:
    """The element-width raw bits a scalar literal denotes at ``dtype``.

    Floats round to nearest even at the element type through the backend's rounding
    (the same function the executor uses for results); integers must be exactly
    representable (signed or unsigned view of the width). Raises ValueError otherwise.
    """
    ti = info(dtype)
    width_mask = (1 << ti.bits) - 1
    if ti.is_float:
        rounded, _ = round_float(dtype, np.array([float(value)], np.float64))
        return int(to_bits(rounded).astype(np.uint64)[0]) & width_mask
    if isinstance(value, float) and not float(value).is_integer():
        raise ValueError(f"{dtype.name} scalar {format_number(value)} is not an integer")
    v = int(value)
    lo = -(1 << (ti.bits - 1)) if ti.is_signed else 0
    hi = (1 << ti.bits) - 1 if not ti.is_signed else (1 << (ti.bits - 1)) - 1
    if not lo <= v <= hi:
        raise ValueError(f"{dtype.name} scalar {v} is outside {lo}..{hi}")
    return v & width_mask


# --------------------------------------------------------------------------- base op


class RuleError(VerifyException):
    """A ``tile`` op breaks one of its static rules: the op's IR name and the rule as data
    (its message spells them ``tile.concat: rule`` for readers of the IR; the tracer
    reports ``pt.concat: rule`` at the kernel line)."""

    def __init__(self, op: str, rule: str) -> None:
        super().__init__(f"{op}: {rule}")
        self.op = op
        self.rule = rule


@dataclass
class RefEnv:
    """State of one reference evaluation: PE count and the GM tensors by SSA value."""

    pes: int
    tensors: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    #: run-time integer scalars (parameters, loop indices) by SSA value
    scalars: dict[SSAValue, int] = field(default_factory=dict)
    #: (index, count) of the core of a grid launch the evaluation is for (D13)
    core: tuple[int, int] = (0, 1)

    def gpr(self, raw: int) -> np.ndarray:
        """The same raw 64-bit GPR value on every PE, as the semantics expect it."""
        return np.full(self.pes, raw & ((1 << 64) - 1), np.uint64)


class TileOp(IRDLOperation):
    """Base of every ``tile`` op: a value-semantics operation with a numpy reference.

    ``MNEMONIC`` names the catalog operation the op maps to one-to-one (None for memory
    and compound ops); the verifier checks DataTypes against that catalog row.
    """

    MNEMONIC: ClassVar[str | None] = None

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        """Results of the op on reference arrays ``(P, ValidRow, ValidCol)``."""
        raise NotImplementedError(f"{self.name} has no reference semantics")

    # ---- verification helpers shared by subclasses

    @property
    def semantics(self) -> Callable[..., Any]:
        """The numpy semantics of the op's catalog operation (its operation-table row's)."""
        assert self.MNEMONIC is not None, self.name
        fn = row(self.MNEMONIC).semantics
        assert fn is not None, self.MNEMONIC
        return fn

    def check_dtype(self, dt: DTypeAttr, what: str = "DataType") -> None:
        """The catalog row's DataType rule (plus: no predicates where numbers are meant)."""
        if is_pred(dt):
            raise VerifyException(f"{self.name} {what} cannot be a predicate tile")
        if self.MNEMONIC is not None and data_type(dt) not in op(self.MNEMONIC).dtypes:
            legal = ", ".join(sorted(d.name for d in op(self.MNEMONIC).dtypes))
            raise VerifyException(
                f"{self.name} does not accept {what} {dt.data.value} ({self.MNEMONIC} "
                f"accepts {legal})"
            )

    def check_row_major(self, *types: TileType) -> None:
        for t in types:
            if t.layout.data != Layout.ROW_MAJOR:
                raise VerifyException(f"{self.name} requires row_major tiles")


class CompoundTileOp(TileOp):
    """Extension point: an op defined by a numpy reference that no single catalog row
    implements. A later ``lower-compound`` pass rewrites it into direct ``tile`` ops;
    ``legalize`` rejects any compound op that reaches it.
    """


def tile_type(value: SSAValue) -> TileType:
    t = value.type
    assert isinstance(t, TileType), t
    return t


def print_scalar_operand(printer: Printer, name: str, value: Number) -> None:
    printer.print_string(f" {name} {format_number(value)}")


def parse_scalar_keyword(parser: Parser, name: str) -> Number | None:
    if parser.parse_optional_keyword(name) is None:
        return None
    return parse_number(parser)


_OpT = TypeVar("_OpT", bound=TileOp)


def mnemonic_op(
    base: type[_OpT], cls_name: str, op_name: str, mnemonic: str, doc: str
) -> type[_OpT]:
    """One concrete op of a family: ``base`` with its dialect name, catalog mnemonic and
    semantics line (the families share verifier, syntax and reference)."""
    cls = type(
        cls_name,
        (base,),
        {
            "name": op_name,
            "MNEMONIC": mnemonic,
            "__doc__": doc,
            "__annotations__": {"MNEMONIC": ClassVar[str]},
        },
    )
    return irdl_op_definition(cls)


def op_name(mnemonic: str) -> str:
    """The ``tile`` op name of a catalog operation: ``TADD`` -> ``tile.add``."""
    return f"tile.{mnemonic[1:].lower()}"


def derive_ops(
    base: type[_OpT],
    family: TileFamily,
    cls_name: Callable[[OpRow], str],
    doc: Callable[[OpRow], str],
    **classvars: Callable[[OpRow], object],
) -> tuple[type[_OpT], ...]:
    """One concrete op class of ``base`` per operation-table row of ``family``, in
    catalog order: named ``cls_name(row)``, documented ``doc(row)``, with the class
    variables ``classvars`` computes from the row (``ROW=lambda r: ...``)."""
    out = []
    for r in rows(tile=family):
        cls = type(
            cls_name(r),
            (base,),
            {
                "name": op_name(r.mnemonic),
                "MNEMONIC": r.mnemonic,
                "__module__": base.__module__,  # the family's module, which exports it
                "__doc__": doc(r),
                **{k: f(r) for k, f in classvars.items()},
                "__annotations__": {"MNEMONIC": ClassVar[str]}
                | {k: ClassVar[object] for k in classvars},
            },
        )
        out.append(irdl_op_definition(cls))
    return tuple(out)


def sole_row(family: TileFamily, **match: object) -> OpRow:
    """The one operation-table row of ``family`` whose attributes equal ``match``
    (``axis=Axis.ROW``): how a hand-written op class names its catalog operation."""
    found = [r for r in rows(tile=family) if all(getattr(r, k) == v for k, v in match.items())]
    if len(found) != 1:
        raise ValueError(f"{family.value} {match}: {len(found)} table rows, not one")
    return found[0]


def export(namespace: dict[str, object], ops: Sequence[type]) -> None:
    """Bind every derived op class under its class name in a module's namespace."""
    for cls in ops:
        namespace[cls.__name__] = cls
