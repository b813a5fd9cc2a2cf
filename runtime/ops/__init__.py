"""Operation handlers, one module per family; importing this package registers them all.

Each handler is a *preparer*: given the static :class:`~ptoc.runtime.spec.Spec` of a
bundle it performs every check that depends only on the header (cached per bundle plan
and LB tuple) and returns a *runner* that reads the sources, allocates the destinations
and calls the ``ptoc.backend.isa.semantics`` function of the operation.
"""

from __future__ import annotations

from . import elementwise, irregular, layout, memory, reduce, tile_scalar  # noqa: F401
