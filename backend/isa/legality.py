"""The static legality rules of a bundle, one function per rule, one wording per rule.

Both the executor's preflight (``runtime/spec.py``) and the ``pto`` dialect's verifier
(``dialects/pto_base.py``) call these. Each function returns None when the rule holds and
otherwise the sentence that names the broken rule; the caller raises it as its own error
(``Fault_TileLegality`` in the executor, ``VerifyException`` in the verifier).

The checks read the catalog record (:class:`OpDef`) and the operation table's binding
shape (:class:`BindingShape`); nothing here restates a catalog fact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .datatypes import DataType
from .optable_types import BindingShape
from .schema import OpDef

__all__ = [
    "binding_counts",
    "binding_stream",
    "datr_fields",
    "destination_dtype",
    "dims",
    "dtype",
    "ior_slots",
    "shared",
    "source_dtype_for",
]


def _stream_text(stream: Sequence[tuple[int, bool]]) -> str:
    if not stream:
        return "(no bindings)"
    return " ".join(f"[{n} src{', dst' if d else ''}]" for n, d in stream)


def binding_counts(op: OpDef, sources: int, destinations: int) -> str | None:
    """The bundle binds the catalog's number of Local sources and destinations."""
    want = (len(op.sources), len(op.destinations))
    if (sources, destinations) == want:
        return None
    return (
        f"{op.mnemonic} binds {want[0]} Local source(s) and {want[1]} destination(s) in its "
        f"binding stream, not {sources} and {destinations}"
    )


def binding_stream(
    op: OpDef, shape: BindingShape, got: Sequence[tuple[int, bool]]
) -> str | None:
    """The effective B.IOT stream (``(sources, has destination)`` per B.IOT) binds the
    catalog's counts (:func:`binding_counts`, the wording the verifier shares) grouped as
    the operation takes them; where the table leaves the grouping free, counts suffice."""
    counts = binding_counts(op, sum(n for n, _ in got), sum(d for _, d in got))
    if counts is not None or shape.iots is None or tuple(got) == shape.iots:
        return counts
    return (
        f"{op.mnemonic} takes the binding stream {_stream_text(shape.iots)}, not "
        f"{_stream_text(got)}"
    )


def ior_slots(op: OpDef, present: bool, sources: Sequence[int], dst: int = 0) -> str | None:
    """``BundleOperationScalarBindingSchemaLegal``: B.IOR is legal only where the operation
    consumes slots, a present B.IOR selects registers only in those slots (``sources``:
    the selector per RegSrc slot, nonzero = used) and leaves RegDst zero."""
    if not present:
        return None
    if not op.ior:
        return f"B.IOR is illegal for {op.mnemonic}"
    return ior_fields(op, sources, dst)


def ior_fields(op: OpDef, sources: Sequence[int], dst: int = 0) -> str | None:
    """``BundleOperationScalarBindingSchemaLegal`` as the Shared TLSU path applies it: a
    present B.IOR selects registers only in the operation's slots and leaves RegDst
    zero; an all-zero B.IOR is legal for every operation (it reads nothing)."""
    for i, reg in enumerate(sources):
        if i >= len(op.ior) and reg:
            return f"B.IOR RegSrc{i} is unused by {op.mnemonic} and must be zero"
    if dst:
        return f"B.IOR RegDst is unused by {op.mnemonic} and must be zero"
    return None


def shared(op: OpDef, present: bool) -> str | None:
    """B.IOS binds Shared tiles only for the operations that accept them."""
    if present and not op.ios_legal:
        return f"B.IOS is illegal for {op.mnemonic}"
    return None


def datr_fields(op: OpDef, fields: Mapping[str, int] | None) -> str | None:
    """``TileOperationDATRFieldsLegal``: a mandatory B.DATR is present and every field
    outside the applicable set is zero. ``fields``: catalog field name -> raw value
    (None: B.DATR omitted)."""
    if fields is None:
        return f"{op.mnemonic} requires a B.DATR" if op.datr_required else None
    for name, v in fields.items():  # catalog field names (backend.program.DATR_FIELDS)
        if v and name not in op.datr_fields:
            return (
                f"B.DATR.{name}={v} is inapplicable to {op.mnemonic} (applicable: "
                f"{', '.join(sorted(op.datr_fields)) or 'none'})"
            )
    return None


def dtype(
    op: OpDef, dt: DataType | None, allowed: frozenset[DataType] | None = None
) -> str | None:
    """The BSTART DataType is concrete (None: DTYPE_NONE, the predicate/no-type code) and
    one the operation supports (``allowed`` narrows the catalog set)."""
    if dt is None:
        return f"{op.mnemonic} needs a concrete BSTART DataType"
    if dt not in (op.dtypes if allowed is None else allowed):
        return f"{op.mnemonic} does not support DataType {dt.name}"
    return None


def destination_dtype(op: OpDef, dt: DataType | None) -> str | None:
    """Where the catalog restricts the destination type (``type_rules["dst"]``: TQUANT,
    TDEQUANT), the destination DataType (B.DATR.DataType; None: omitted) is one of it."""
    rule = op.type_rules.get("dst")
    if not rule or (dt is not None and dt in rule):
        return None
    names = " or ".join(sorted(d.name for d in rule))
    got = "none" if dt is None else dt.name
    return f"{op.mnemonic} needs B.DATR.DataType {names} for its destination, not {got}"


def source_dtype_for(op: OpDef, src: DataType, dst: DataType) -> str | None:
    """Type pairs (TCVT, ``HardwareTCVTTypePairSupported``): the source type is one the
    destination type accepts, where a ``<dst>_sources`` rule restricts it."""
    legal = op.sources_for(dst)
    if legal is None or src in legal:
        return None
    names = ", ".join(sorted(d.name for d in legal))
    return f"{op.mnemonic} to {dst.name} accepts only {names} sources, not {src.name}"


def dims(op: OpDef, lbs: Sequence[int | None]) -> str | None:
    """B.DIM: LBs the operation does not define are absent, required ones present, and an
    explicitly encoded zero is illegal unless the operation gives it a meaning."""
    for k, v in enumerate(lbs):
        d = op.dim(k)
        if d is None:
            if v is not None:
                return f"{op.mnemonic} takes no B.DIM LB{k}"
            continue
        if v is None:
            if d.required:
                return f"{op.mnemonic} requires B.DIM LB{k} ({d.meaning})"
        elif v == 0 and not d.zero_legal:
            m = op.mnemonic
            return f"an explicitly encoded zero LB{k} ({d.meaning}) is illegal for {m}"
    return None
