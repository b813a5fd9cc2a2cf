"""``ptoc-legalize``: ``tile`` -> ``pto``, one catalog bundle per op (or per row piece).

For every tile value the pass picks the physical descriptor (``passes/geometry.py``); for
every op the catalog operation, BSTART DataType, LB0..LB2, B.DATR fields and scalar
operands. A tile larger than one allocation is split into row pieces and row-separable ops
run once per piece; an op that cannot be split is a diagnostic.

Modules: ``select`` (the pass), ``ctx`` (the block being built and the tile-value ->
pieces maps), ``rules`` (one rule per operation-table ``LegalizeRule``, picked through
the op's table row), ``pieces`` (row-piece splitting and assembling), ``view`` (the
rule of ``tile.view``, the GM-scratch reshape that ``lower-compound`` emits).
"""

from .rules import RULES, must_stay_whole, rule_of
from .select import LegalizePass, legalize_func, needs_names
from .view import legalize_view

__all__ = [
    "RULES",
    "LegalizePass",
    "legalize_func",
    "legalize_view",
    "must_stay_whole",
    "needs_names",
    "rule_of",
]
