"""Pure numpy semantics of every PTO tile operation.

Arrays are the valid region of each participating PE stacked on axis 0, shape
``(P, ValidRow, ValidCol)``, in the DataType's carrier dtype. Every function returns
its results and a ``uint8`` numeric-status vector of shape ``(P,)`` (bits NV, DZ, OF,
UF, NX). Data-dependent illegality (an integer zero divisor, an out-of-range gather
index, an unsorted merge input, ...) raises :class:`SemanticError` before any result
exists, so the executor can turn it into ``Fault_TileLegality`` with no effect.
"""
