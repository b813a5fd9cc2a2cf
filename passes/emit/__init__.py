"""``ptoc-emit``: an allocated ``pto`` kernel -> a bundle :class:`Program`.

Every ``pto`` bundle becomes ``BSTART`` + header commands + ``BSTOP``; each run of
``pto.materialize`` becomes one ``BSTART.STD FALL`` scalar block (``materialize``: the
scalar instruction sequences that put a constant or an address into a GPR). Alongside the
program, ``program`` records the meaning of every tile bundle (:class:`Intent`) for the
allocation validator, and the kernel ABI; ``AsmTarget`` is the ``ptoc-asm`` target of
``xdsl-opt``.
"""

from .intents import Intent, IntentTable
from .program import (
    AbiBinding,
    AsmTarget,
    EmitPass,
    Emitted,
    emit_func,
    program_header,
)

__all__ = [
    "AbiBinding",
    "AsmTarget",
    "EmitPass",
    "Emitted",
    "Intent",
    "IntentTable",
    "emit_func",
    "program_header",
]
