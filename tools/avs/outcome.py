"""How one AVS test ends, other than by returning from ``main``.

The interpreter and the model bindings raise these; the runner turns each into a
:class:`~tools.avs.runner.Result`.
"""

from __future__ import annotations


class TestOutcome(Exception):
    """Base of every early end of a test."""

    __test__ = False  # not a pytest class


class AssertionFailed(TestOutcome):
    """An ``assert`` of the test (or a failure the binding detects on ptoc's behalf) did
    not hold: ``line`` is the test line, ``text`` the assertion, ``detail`` ptoc's values."""

    def __init__(self, line: int, text: str, detail: str = "") -> None:
        super().__init__(f"line {line}: assert {text}" + (f" ({detail})" if detail else ""))
        self.line = line
        self.text = text
        self.detail = detail


class NotApplicable(TestOutcome):
    """The test's subject is replaced by a ptoc decision or is an ASL-internal helper
    with no machine meaning: ``category`` is one of :data:`NA_CATEGORIES`."""

    def __init__(self, category: str, reason: str = "") -> None:
        assert category in NA_CATEGORIES, category
        super().__init__(f"{category}: {reason}" if reason else category)
        self.category = category
        self.reason = reason


class Untranslated(TestOutcome):
    """Machine behaviour that the tool cannot bind to ptoc yet: ``binding`` names what is
    missing (an ASL function, a model variable, an operation ptoc's executor lacks);
    ``group`` is the summary category (a key of :data:`UNTRANSLATED_GROUPS`, or
    ``binding`` itself for an ASL function nobody has bound)."""

    def __init__(self, binding: str, reason: str = "", group: str | None = None) -> None:
        if group is not None:
            assert group in UNTRANSLATED_GROUPS, group
            reason = reason or UNTRANSLATED_GROUPS[group]
        super().__init__(f"{binding}: {reason}" if reason else binding)
        self.binding = binding
        self.reason = reason
        self.group = group or binding


#: what ptoc does not model yet, by summary category
UNTRANSLATED_GROUPS: dict[str, str] = {
    "CUBE engine": "a CUBE model function the harness does not bind yet (the B.FPATR "
    "bundle state, the operand-schema and post-processing descriptor records, CUBE tiles "
    "outside the Matrix location); ptoc's executor runs the CUBE engine",
    "indexed GM transfers": "ptoc's executor does not model MGATHER/MSCATTER (and their "
    "MASK/CAS forms) or GMOV",
    "Shared tiles": (
        "the Shared register file (B.IOS, S0..S255) is not bound to the test harness: "
        "the ASL's SharedTileInfo records and their direct helpers"
    ),
    "memory events": "ptoc's executor records no memory-access events (the ASL's ordering "
    "and visibility traces)",
    "fault address": "ptoc locates a fault by bundle and command, not by a PC",
    "scalar forms not modelled": "ptoc's catalog lists the 32-bit ALU, BRU compare and "
    "AGU forms (D12), not the 48-bit HL forms, atomics, floating point, SYS or jumps",
}


#: reason categories of "not applicable" (docs/conformance.md explains each)
NA_CATEGORIES: dict[str, str] = {
    "asl-unit-compiles": "checks only that an ASL unit compiles (no machine behaviour)",
    "asl-internal": "tests an ASL-internal helper, table or dispatch record with no "
    "machine meaning in ptoc",
    "D1 relative queues": "subject is the ASL's absolute tile slots or their allocation "
    "policy, which D1's relative generation queues replace",
    "D2 per-PE capacity": "subject is core-wide capacity accounting, which D2's per-PE "
    "capacity replaces",
    "D3 allocation mask": "subject is a tile allocation mask ptoc's D3 coverage rule replaces",
    "D4 seed type set": "the test expects the ASL's type set where a seed decides the set",
    "D5 numerics profile": "the test relies on the ASL reference profile's placeholder "
    "transcendental values, which D5's profile replaces",
    "D6 definedness": "the test expects an operation to read an undefined valid source "
    "element, which D6 makes a fault",
    "D11 matrix numerics": "the test expects the ASL reference profile's raw-carrier "
    "floating matrix arithmetic, which D11's IEEE matrix profile replaces",
    "no bundle form": "a direct call names a destination DataType that no bundle of the "
    "operation can select (the ASL's bundle path derives another)",
}
