"""Operation handlers, one module per family, and the one registry that names them.

Each handler is a *preparer*: given the static :class:`~ptoc.runtime.spec.Spec` of a
bundle it performs every check that depends only on the header (cached per bundle plan
and LB tuple) and returns a *runner* that reads the sources, allocates the destinations
and calls the ``ptoc.backend.isa.semantics`` function of the operation. Which preparer
runs an operation is its operation-table row's ``executor``; :data:`PREPARERS` maps each
:class:`~ptoc.backend.isa.Executor` to its preparer.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ptoc.backend.isa import Executor

from ..engine import Preparer
from . import cube
from . import elementwise as ew
from . import irregular as irr
from . import layout as lay
from . import memory as mem
from . import reduce as red
from . import tile_scalar as ts

E = Executor

#: the preparer of every executor kind (the table says which operations each runs)
PREPARERS: Mapping[Executor, Preparer] = MappingProxyType(
    {
        E.BINARY: ew.binary,
        E.UNARY: ew.unary,
        E.FMA: ew.tfma,
        E.CMP: ew.tcmp,
        E.SEL: ew.tsel,
        E.CVT: ew.tcvt,
        E.TILE_SCALAR: ts.tile_scalar_binary,
        E.CMPS: ts.tcmps,
        E.SELS: ts.tsels,
        E.EXPANDS: ts.texpands,
        E.REDUCTION: red.reduction,
        E.EXPANSION: red.expansion,
        E.CONCAT: lay.tconcat,
        E.EXTRACT: lay.textract,
        E.INSERT: lay.tinsert,
        E.IMG2COL: irr.timg2col,
        E.FILLPAD: lay.tfillpad,
        E.GENERATION: irr.generation,
        E.HISTOGRAM: irr.thistogram,
        E.QUANTIZE: irr.quantize,
        E.SORT: irr.tsort,
        E.MRGSORT: irr.tmrgsort,
        E.TRANS: lay.ttrans,
        E.GATHER: irr.tgather,
        E.SCATTER: irr.tscatter,
        E.PART: irr.tpart,
        E.LOAD: mem.tload,
        E.STORE: mem.tstore,
        E.MOV: mem.tmov,
        E.MATMUL: cube.matmul,
    }
)

__all__ = ["PREPARERS"]
