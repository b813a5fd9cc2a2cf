"""The ``xdsl.universe`` entry point: ptoc's dialects, passes and the ``ptoc-asm``
target for ``xdsl-opt``.

A ptoc pass that fails raises a ``CompileError`` whose message is one line naming the
kernel (or the op's ``file:line``) and the rule. ``xdsl-opt`` reports pass failures as a
Python traceback unless ``--verify-diagnostics`` is given; when a pass or the target is
loaded from this universe, an uncaught ptoc error is printed as that one line instead
(``xdsl-opt: error: ...``) and the process exits with status 2, like ``ptoc`` does for
bad input.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target


def _tile() -> Dialect:
    from ptoc.dialects.tile import Tile

    return Tile


def _pto() -> Dialect:
    from ptoc.dialects.pto import Pto

    return Pto


def _lower_compound() -> type[ModulePass]:
    from .lower_compound import LowerCompoundPass

    return LowerCompoundPass


def _legalize() -> type[ModulePass]:
    from .legalize import LegalizePass

    return LegalizePass


def _allocate() -> type[ModulePass]:
    from .allocate import AllocatePass

    return AllocatePass


def _emit() -> type[ModulePass]:
    from .emit import EmitPass

    return EmitPass


def _asm() -> type[Target]:
    from .emit import AsmTarget

    return AsmTarget


PASSES = {
    "ptoc-lower-compound": _lower_compound,
    "ptoc-legalize": _legalize,
    "ptoc-allocate": _allocate,
    "ptoc-emit": _emit,
}


def _report_one_line(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    """``sys.excepthook`` of a tool that loaded ptoc passes: a ptoc diagnostic is printed
    as its message (exit 2), anything else as usual."""
    from ptoc.backend.errors import Error

    if isinstance(value, Error):
        sys.stdout.flush()
        print(f"{os.path.basename(sys.argv[0]) or 'xdsl-opt'}: error: {value}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(2)
    _PREVIOUS_HOOK(kind, value, tb)


_PREVIOUS_HOOK = sys.excepthook


def _one_line(loader: Callable[[], Any]) -> Callable[[], Any]:
    """A universe loader that also installs :func:`_report_one_line` (loaders run only
    when a tool such as ``xdsl-opt`` asks for the pass or target)."""

    def load() -> Any:
        global _PREVIOUS_HOOK
        if sys.excepthook is not _report_one_line:
            _PREVIOUS_HOOK = sys.excepthook
            sys.excepthook = _report_one_line
        return loader()

    return load


PTOC_UNIVERSE = Universe(
    all_dialects={"tile": _tile, "pto": _pto},
    all_passes={name: _one_line(loader) for name, loader in PASSES.items()},
    all_targets={"ptoc-asm": _one_line(_asm)},
)
