"""Static (per plan and LB values) preflight shared by every operation handler.

A :class:`Spec` is built once per distinct bundle plan and LB tuple; handlers call its
``require_*`` helpers, which raise the fault the rule names. The rules and their wording
live in ``backend/isa/legality.py`` (the ``pto`` verifier calls the same functions); the
operation's binding shape comes from its operation-table row (:attr:`Spec.row`). Order
of the checks a handler performs: binding schema, B.IOR/B.IOS presence, B.DATR
applicability on raw field values, DataTypes, dimensions and defaults -- all before any
source is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ptoc.backend.isa import DTYPE_NONE, TABLE, DataType, OpDef, OpRow, info, legality
from ptoc.backend.isa.fields import LAYOUT_NAMES, PAD_NULL, Hand
from ptoc.backend.program import DATR_FIELDS

from .bundle import BundlePlan
from .faults import BundleControlFault, TileLegalityFault, unsupported
from .tiles import CUBE_LAYOUT_CODES, LAYOUT_TRANSFORMS, Layout


@dataclass(frozen=True)
class Shape:
    """A destination or expected source geometry: ValidRow x ValidCol of physical Col."""

    valid_rows: int
    valid_cols: int
    cols: int


class Spec:
    """Static view of one bundle: op, BSTART DataType, B.DATR, LB values, B.IOR."""

    def __init__(self, plan: BundlePlan, dims: tuple[int | None, ...]) -> None:
        assert plan.op is not None
        self.plan = plan
        self.op: OpDef = plan.op
        self.row: OpRow = TABLE[plan.op.mnemonic]
        self.name = plan.op.mnemonic
        self.dims = dims
        self.datr = plan.datr
        self.dtype_code = plan.start.dtype
        #: set by the preparers that may read a CUBE tile (the CUBE store conversion and
        #: the matrix operations); every other operation rejects one
        self.reads_cube = False
        #: destination descriptors by (mask, destination specs), for ``Ctx.allocate``:
        #: they depend on nothing else, so a bundle run again reuses them
        self.dests: dict[tuple[object, ...], Any] = {}

    @property
    def semantics(self) -> Callable[..., Any]:
        """The operation's numpy semantics (from its operation-table row)."""
        fn = self.row.semantics
        assert fn is not None, f"{self.name} has no semantics"
        return fn

    # ----------------------------------------------------------- failures

    def illegal(self, rule: str) -> TileLegalityFault:
        return TileLegalityFault(rule, self.name)

    def _check(self, rule: str | None) -> None:
        if rule is not None:
            raise self.illegal(rule)

    # ----------------------------------------------------------- bindings

    def require_schema(self, *, datr: bool = True) -> None:
        """The bundle binds what the operation's :class:`BindingShape` says, in the order
        the ASL checks it: B.IOT stream, B.IOR slots, B.IOS, then (``datr``) B.DATR
        applicability."""
        self.require_bindings()
        self.require_ior_slots()
        self.require_no_shared()
        if datr:
            self.require_datr_applicable()

    def require_bindings(self) -> None:
        """The effective B.IOT stream is the operation's (or binds its counts)."""
        got = tuple((len(b.srcs), b.dst is not None) for b in self.plan.bindings)
        self._check(legality.binding_stream(self.op, self.row.binding, got))

    def dest_hand(self, k: int = 0) -> tuple[Hand, int]:
        return self.plan.destinations[k]

    # ----------------------------------------------------------- B.IOR / B.IOS

    def require_ior_slots(self) -> None:
        """A present B.IOR selects registers only in the slots the operation consumes and
        leaves RegDst zero (``BundleOperationScalarBindingSchemaLegal``)."""
        ior = self.plan.ior
        if ior is not None:
            self._check(legality.ior_slots(self.op, True, ior.sources, ior.dst))

    def require_no_shared(self) -> None:
        if self.plan.shared:
            if self.op.ios_legal:
                raise unsupported("Shared tile binding (B.IOS)", self.name)
            self._check(legality.shared(self.op, True))

    # ----------------------------------------------------------- B.DATR

    def require_datr_applicable(self) -> None:
        """Every raw B.DATR field outside the applicable set is zero
        (``TileOperationDATRFieldsLegal``); a mandatory B.DATR is present."""
        d = self.datr
        fields = None if d is None else {m.name: getattr(d, m.attr) for m in DATR_FIELDS}
        self._check(legality.datr_fields(self.op, fields))

    @property
    def pad(self) -> int:
        """PadValue: omitted B.DATR selects Null (D6), else the explicit field; operations
        without an applicable PadValue (``pad_union`` must-zero or histogram-byte-id)
        leave their padding Null."""
        if (
            self.datr is None
            or self.op.pad_union != "pad-value"
            or "PadValueOrByteId" not in self.op.datr_fields
        ):
            return PAD_NULL
        return self.datr.pad

    @property
    def rmode(self) -> int:
        return 0 if self.datr is None else self.datr.rmode

    @property
    def sat(self) -> bool:
        return bool(self.datr is not None and self.datr.sat)

    @property
    def cmode(self) -> int:
        return 0 if self.datr is None else self.datr.cmode

    def layouts(self) -> tuple[Layout, Layout]:
        """(source, destination) layouts of the B.DATR Layout transform (NORM if omitted)."""
        code = 0 if self.datr is None else self.datr.layout
        if code in CUBE_LAYOUT_CODES:
            raise unsupported(f"CUBE layout {LAYOUT_NAMES.get(code, code)}", self.name)
        return LAYOUT_TRANSFORMS[code]

    def require_row_major_dest(self) -> None:
        if self.layouts()[1] is not Layout.ROW_MAJOR:
            code = 0 if self.datr is None else self.datr.layout
            raise self.illegal(
                f"{self.name} produces a row-major tile; B.DATR.Layout="
                f"{LAYOUT_NAMES.get(code, code)} is illegal"
            )

    # ----------------------------------------------------------- DataTypes

    def dtype(self, allowed: frozenset[DataType] | None = None) -> DataType:
        """The BSTART DataType, checked against ``allowed`` (default: the catalog set)."""
        code = self.dtype_code
        dt = None if code == DTYPE_NONE else DataType(code)
        self._check(legality.dtype(self.op, dt, allowed))
        assert dt is not None
        return dt

    def datr_dtype(self, default: DataType) -> DataType:
        """The secondary DataType: B.DATR.DataType when present and concrete, else
        ``default`` (``ResolveBundleEffectiveDataType``; raw 0 is FP64, not omission)."""
        if self.datr is None or self.datr.dtype == DTYPE_NONE:
            return default
        return DataType(self.datr.dtype)

    # ----------------------------------------------------------- dimensions

    def lb(self, k: int) -> int | None:
        return self.dims[k]

    def require_dims(self) -> None:
        """LBs the operation does not define are absent; required ones are present; an
        explicitly encoded zero is illegal unless the operation assigns it a meaning."""
        self._check(legality.dims(self.op, self.dims))

    def std_shape(self) -> Shape:
        """LB0 = ValidCol (required), LB1 = ValidRow (default 1), LB2 = Col (default
        ValidCol); REFERENCE section 6 and every seed contract."""
        self.require_dims()
        vc = self.dims[0]
        assert vc is not None
        vr = self.dims[1] if self.dims[1] is not None else 1
        col = self.dims[2] if self.dims[2] is not None else vc
        return Shape(vr, vc, col)


def elem_bits(dt: DataType | None) -> int:
    """Element width in bits (predicate tiles: 1)."""
    return 1 if dt is None else info(dt).bits


__all__ = ["BundleControlFault", "Shape", "Spec", "elem_bits"]
