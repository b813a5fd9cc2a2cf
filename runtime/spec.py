"""Static (per plan and LB values) preflight shared by every operation handler.

A :class:`Spec` is built once per distinct bundle plan and LB tuple; handlers call its
``require_*`` helpers, which raise the fault the rule names. Order of the checks a
handler performs: binding schema, B.IOR/B.IOS presence, B.DATR applicability on raw
field values, DataTypes, dimensions and defaults -- all before any source is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.isa import DTYPE_NONE, DataType, OpDef, info
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
        self.name = plan.op.mnemonic
        self.dims = dims
        self.datr = plan.datr
        self.dtype_code = plan.start.dtype

    # ----------------------------------------------------------- failures

    def illegal(self, rule: str) -> TileLegalityFault:
        return TileLegalityFault(rule, self.name)

    # ----------------------------------------------------------- bindings

    def require_bindings(self, *expected: tuple[int, bool]) -> None:
        """The effective B.IOT stream is exactly ``expected`` ((sources, has dst) each)."""
        got = tuple((len(b.srcs), b.dst is not None) for b in self.plan.bindings)
        if got != expected:
            raise self.illegal(
                f"{self.name} takes the binding stream {_stream_text(expected)}, not "
                f"{_stream_text(got)}"
            )

    def require_counts(self, sources: int, destinations: int) -> None:
        """The effective B.IOT stream binds ``sources`` sources and ``destinations`` dsts."""
        s = len(self.plan.sources)
        d = len(self.plan.destinations)
        if (s, d) != (sources, destinations):
            raise self.illegal(
                f"{self.name} binds {sources} Local source(s) and {destinations} "
                f"destination(s), not {s} and {d}"
            )

    def dest_hand(self, k: int = 0) -> tuple[Hand, int]:
        return self.plan.destinations[k]

    # ----------------------------------------------------------- B.IOR / B.IOS

    def require_no_ior(self) -> None:
        if self.plan.ior is not None:
            raise self.illegal(f"B.IOR is illegal for {self.name}")

    def require_ior_slots(self, used: int) -> None:
        """A present B.IOR may select registers only in its first ``used`` source slots and
        must leave RegDst zero (``BundleOperationScalarBindingSchemaLegal``)."""
        ior = self.plan.ior
        if ior is None:
            return
        if used == 0:
            self.require_no_ior()
        for i, reg in enumerate(ior.sources):
            if i >= used and reg != 0:
                raise self.illegal(f"B.IOR RegSrc{i} is unused by {self.name} and must be zero")
        if ior.dst != 0:
            raise self.illegal(f"B.IOR RegDst is unused by {self.name} and must be zero")

    def require_no_shared(self) -> None:
        if self.plan.shared:
            if self.op.ios_legal:
                raise unsupported("Shared tile binding (B.IOS)", self.name)
            raise self.illegal(f"B.IOS is illegal for {self.name}")

    # ----------------------------------------------------------- B.DATR

    def require_datr_applicable(self, allowed: frozenset[str] | None = None) -> None:
        """Every raw B.DATR field outside the applicable set is zero
        (``TileOperationDATRFieldsLegal``); a mandatory B.DATR is present."""
        allowed = self.op.datr_fields if allowed is None else allowed
        if self.datr is None:
            if self.op.datr_required:
                raise self.illegal(f"{self.name} requires a B.DATR")
            return
        for m in DATR_FIELDS:
            v = getattr(self.datr, m.attr)
            if v and m.name not in allowed:
                raise self.illegal(
                    f"B.DATR.{m.name}={v} is inapplicable to {self.name} (applicable: "
                    f"{', '.join(sorted(allowed)) or 'none'})"
                )

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
        allowed = self.op.dtypes if allowed is None else allowed
        code = self.dtype_code
        if code == DTYPE_NONE:
            raise self.illegal(f"{self.name} needs a concrete BSTART DataType")
        dt = DataType(code)
        if dt not in allowed:
            raise self.illegal(f"{self.name} does not support DataType {dt.name}")
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
        defs = {d.lb: d for d in self.op.dims}
        for k, v in enumerate(self.dims):
            d = defs.get(k)
            if d is None:
                if v is not None:
                    raise self.illegal(f"{self.name} takes no B.DIM LB{k}")
                continue
            if v is None:
                if d.required:
                    raise self.illegal(f"{self.name} requires B.DIM LB{k} ({d.meaning})")
            elif v == 0 and not d.zero_legal:
                raise self.illegal(
                    f"an explicitly encoded zero LB{k} ({d.meaning}) is illegal for {self.name}"
                )

    def std_shape(self) -> Shape:
        """LB0 = ValidCol (required), LB1 = ValidRow (default 1), LB2 = Col (default
        ValidCol); REFERENCE section 6 and every seed contract."""
        self.require_dims()
        vc = self.dims[0]
        assert vc is not None
        vr = self.dims[1] if self.dims[1] is not None else 1
        col = self.dims[2] if self.dims[2] is not None else vc
        return Shape(vr, vc, col)


def _stream_text(stream: tuple[tuple[int, bool], ...]) -> str:
    if not stream:
        return "(no bindings)"
    parts = [f"[{n} src{', dst' if d else ''}]" for n, d in stream]
    return " ".join(parts)


def elem_bits(dt: DataType | None) -> int:
    """Element width in bits (predicate tiles: 1)."""
    return 1 if dt is None else info(dt).bits


__all__ = ["BundleControlFault", "Shape", "Spec", "elem_bits"]
