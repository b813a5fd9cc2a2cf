"""``ptoc.lang`` (``import ptoc.lang as pt``): the operations of a kernel body.

Every function records one or more ``tile`` ops at the caller's source line. Names
follow PTO: ``pt.row_max`` is TROWMAX, ``pt.exp`` TEXP, ``pt.quantize`` TQUANT; Python
operators on tiles broadcast like numpy (see :mod:`ptoc.lang.arith`). The compound
interfaces (``quantize_rows``, ``merge_sorted``, ``gather_pattern``, ...) follow the
reference semantics of ``docs/compound.md``.

This module is the public namespace: the functions are defined in the submodules; those
that record exactly one operation (``pt.exp``, ``pt.row_max``, ..., and ``pt.abs``, which
no submodule defines under a builtin's name) are derived from the operation table by
:mod:`ptoc.lang.derived` and bound here.
"""

# Each submodule's ``__all__`` lists the functions it defines for kernels; the namespace is
# their union, so a new hand-written function is exported where it is written.
from . import (
    arith,
    compound,
    control,
    elementwise,
    layout,
    matrix,
    memory,
    quant,
    reduce,
    select,
)
from .arith import *  # noqa: F403
from .compound import *  # noqa: F403
from .control import *  # noqa: F403
from .derived import DERIVED
from .elementwise import *  # noqa: F403
from .layout import *  # noqa: F403
from .matrix import *  # noqa: F403
from .memory import *  # noqa: F403
from .quant import *  # noqa: F403
from .reduce import *  # noqa: F403
from .select import *  # noqa: F403

#: the hand-written functions and classes, then the derived ones (:data:`.derived.DERIVED`)
__all__ = sorted(
    [
        *arith.__all__,
        *compound.__all__,
        *control.__all__,
        *elementwise.__all__,
        *layout.__all__,
        *matrix.__all__,
        *memory.__all__,
        *quant.__all__,
        *reduce.__all__,
        *select.__all__,
    ]
)

#: the one-operation functions, derived from the operation table
globals().update(DERIVED)
__all__ += sorted(DERIVED)
