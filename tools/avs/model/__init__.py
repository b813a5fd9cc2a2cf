"""The ptoc binding of the ASL model functions the AVS tests call.

Importing this package registers every binding (:mod:`.harness`, :mod:`.catalog`,
:mod:`.bundle`, :mod:`.direct`, :mod:`.internal`, :mod:`.cube`, :mod:`.cube_operands`,
:mod:`.fpatr_state`, :mod:`.shared`, :mod:`.scalar`); :class:`PtocModel` is the model one
test runs against.
"""

from . import (  # noqa: F401
    bundle,
    catalog,
    cube,
    cube_operands,
    direct,
    elements,
    fpatr_state,
    harness,
    internal,
    scalar,
    schema,
    shared,
)
from .core import BINDINGS, NOT_APPLICABLE, UNBOUND, PtocModel

__all__ = ["BINDINGS", "NOT_APPLICABLE", "UNBOUND", "PtocModel"]
