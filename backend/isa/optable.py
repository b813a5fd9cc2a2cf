"""The operation table: one :class:`OpRow` per catalog operation, in catalog order.

Each row binds what ptoc knows about an operation once (typed operand roles, executor
preparer, ``tile`` family, legalize rule, ``ptoc.lang`` name, numpy semantics) to its
catalog record. Whatever the catalog states (operand counts, B.IOR slots and defaults,
B.IOS legality, DataTypes) is read from the :class:`OpDef` when a row is built and never
restated; the build checks the table's operand lists against the catalog's counts.

Consumers look operations up here (``row("TADD")``, ``rows(executor=Executor.BINARY)``)
instead of spelling mnemonic sets of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import catalog
from .optable_rows import FREE, SINGLE, SPECS, Executor, LegalizeRule, Spec, TileFamily
from .optable_types import (
    Access,
    Axis,
    BindingShape,
    IorKind,
    IorOperand,
    OperandKind,
    OpRow,
    TileOperand,
)
from .schema import IorSlot, OpDef

__all__ = [
    "TABLE",
    "Access",
    "Axis",
    "BindingShape",
    "Executor",
    "IorKind",
    "IorOperand",
    "LegalizeRule",
    "OpRow",
    "OperandKind",
    "TileFamily",
    "TileOperand",
    "classify_ior",
    "row",
    "rows",
]

# ----------------------------------------------------------------- B.IOR kinds

#: (meaning prefix, words in the meaning, kind): the first match classifies a slot
_IOR_RULES: tuple[tuple[str, str, IorKind], ...] = (
    ("address", "", IorKind.ADDRESS),
    ("flag", "", IorKind.FLAG),
    ("diagonal", "", IorKind.DIAGONAL),
    ("natural", "row-offset", IorKind.ROW),
    ("natural", "column-offset", IorKind.COL),
    ("natural", "posM", IorKind.POS_M),
    ("natural", "posK", IorKind.POS_K),
    ("scalar", "stride", IorKind.STRIDE),
    ("scalar", "multiplier", IorKind.MULTIPLIER),
    ("scalar", "zero point", IorKind.ZERO_POINT),
    ("scalar", "padding", IorKind.PAD),
    ("scalar", "sequence start", IorKind.START),
    ("scalar", "peer_tid", IorKind.PEER),
    ("scalar", "", IorKind.SCALAR),
)


def classify_ior(slot: IorSlot) -> IorKind:
    """The kind of a catalog B.IOR slot, from its ``meaning`` (``"flag0: ..."``)."""
    head, _, text = slot.meaning.partition(":")
    for prefix, word, kind in _IOR_RULES:
        if head.startswith(prefix) and word in text:
            return kind
    raise ValueError(f"unclassified B.IOR meaning {slot.meaning!r}")


# ----------------------------------------------------------------- build


def _binding(o: OpDef, spec: Spec) -> BindingShape:
    iots: tuple[tuple[int, bool], ...] | None
    if spec.iots == FREE:
        iots = None
    elif spec.iots == SINGLE:
        # one B.IOT binds at most two sources and one destination; more need a grouping
        # the table states (TSEL, TFMA) or leave it free (operations not modelled)
        n, d = len(o.sources), len(o.destinations)
        iots = () if n == d == 0 else ((n, d == 1),) if n <= 2 and d <= 1 else None
    else:
        assert not isinstance(spec.iots, str)
        iots = spec.iots
    return BindingShape(len(o.sources), len(o.destinations), iots, len(o.ior), o.ios_legal)


def _build(o: OpDef, spec: Spec) -> OpRow:
    if (len(spec.sources), len(spec.destinations)) != (len(o.sources), len(o.destinations)):
        raise ValueError(
            f"{o.mnemonic}: the table names {len(spec.sources)} sources and "
            f"{len(spec.destinations)} destinations, the catalog {len(o.sources)} and "
            f"{len(o.destinations)}"
        )
    if o.ior_legal != bool(o.ior):
        raise ValueError(f"{o.mnemonic}: B.IOR legality and slots disagree in the catalog")
    binding = _binding(o, spec)
    if binding.iots is not None and (
        sum(n for n, _ in binding.iots),
        sum(d for _, d in binding.iots),
    ) != (binding.sources, binding.destinations):
        raise ValueError(
            f"{o.mnemonic}: B.IOT grouping {binding.iots} disagrees with the catalog"
        )
    return OpRow(
        op=o,
        semantics=spec.semantics,
        sources=spec.sources,
        destinations=spec.destinations,
        ior=tuple(IorOperand(s.field, classify_ior(s), s.default) for s in o.ior),
        binding=binding,
        executor=spec.group[0],
        tile=spec.group[1],
        legalize=spec.group[2],
        lang=spec.lang,
        arith=spec.arith,
        axis=spec.axis,
    )


def _table() -> Mapping[str, OpRow]:
    missing = [o.mnemonic for o in catalog.OPS if o.mnemonic not in SPECS]
    extra = sorted(set(SPECS) - {o.mnemonic for o in catalog.OPS})
    if missing or extra:
        raise ValueError(f"operation table out of step with the catalog: {missing} {extra}")
    return MappingProxyType({o.mnemonic: _build(o, SPECS[o.mnemonic]) for o in catalog.OPS})


#: every catalog operation, in catalog order, by mnemonic
TABLE: Mapping[str, OpRow] = _table()


def row(mnemonic: str) -> OpRow:
    """The table row of an operation (case-insensitive); KeyError if there is none."""
    return TABLE[mnemonic.upper()]


def rows(
    *,
    executor: Executor | None = None,
    tile: TileFamily | None = None,
    legalize: LegalizeRule | None = None,
) -> tuple[OpRow, ...]:
    """The rows matching every given field, in catalog order."""
    return tuple(
        r
        for r in TABLE.values()
        if (executor is None or r.executor is executor)
        and (tile is None or r.tile is tile)
        and (legalize is None or r.legalize is legalize)
    )
