"""``ptoc-lower-compound``: rewrite every compound ``tile`` op into direct ``tile`` ops.

The first pass of the pipeline. Each compound interface (``docs/compound.md``) has one
lowering, built only from ops that ``legalize`` maps one-to-one onto catalog selectors, so
that executing them gives the bits of the interface's ``compound_ref`` reference. A lowering
that needs a reshape or bitcast emits ``tile.view`` and the pass appends the GM scratch
tensor parameter (``ptoc_scratch``) that ``legalize`` stores into and loads from.

Modules: ``rewrite`` (the pass and the lowering table), ``build`` (the op builder the
lowerings share), and one module per interface family: ``sort``, ``gather``, ``quant``,
``partial``.
"""

from .rewrite import (
    LOWERINGS,
    MATRIX_BYTES,
    SCRATCH_NAME,
    LowerCompoundPass,
    LowerStats,
    lower_compound_func,
    lowers,
    tile_pes,
)

__all__ = [
    "LOWERINGS",
    "MATRIX_BYTES",
    "SCRATCH_NAME",
    "LowerCompoundPass",
    "LowerStats",
    "lower_compound_func",
    "lowers",
    "tile_pes",
]
