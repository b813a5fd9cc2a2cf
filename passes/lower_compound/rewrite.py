"""``ptoc-lower-compound``: rewrite every compound ``tile`` op into direct ``tile`` ops.

Each compound interface (``docs/compound.md``) has one lowering in a module of this
package (``sort``, ``gather``, ``quant``, ``partial``). A lowering builds only ops that
``legalize`` maps one-to-one onto catalog selectors, chosen so that executing them gives
the same bits as the interface's ``compound_ref`` reference for every input the reference
accepts (checked by ``tests/compound_lowering``). The ``Lowering`` subsection of each
interface in ``docs/compound.md`` lists the selectors and bundle counts.

Views (reshape/bitcast) have no selector: a lowering that needs one emits ``tile.view``,
and the pass then appends a U8 scratch tensor parameter (``ptoc_scratch``, one row per
PE) that ``legalize`` stores into and loads from. Kernels that need no view keep their
signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ptoc.dialects import compound_ops as co
from ptoc.dialects.compound_ops.view import SCRATCH_NAME
from ptoc.dialects.tile_base import CompoundTileOp
from ptoc.dialects.tile_matmul import MatmulOp
from ptoc.dialects.tile_memory import PES_ATTR
from ptoc.dialects.tile_types import TensorType

from ..diagnostics import fail
from ..walk import walk
from .build import Emit, Scratch
from .gather import LOWERINGS as _GATHER
from .partial import LOWERINGS as _PARTIAL
from .quant import LOWERINGS as _QUANT
from .sort import LOWERINGS as _SORT

Lowering = Callable[[Emit, Any], Sequence[SSAValue]]

#: compound op class -> its lowering
LOWERINGS: dict[type[Operation], Lowering] = {**_SORT, **_GATHER, **_QUANT, **_PARTIAL}

#: default byte budget of one compare-matrix chunk of a merge (see ``sort``)
MATRIX_BYTES = 16384


@dataclass
class LowerStats:
    """What the pass did to one kernel."""

    lowered: int = 0
    ops: int = 0
    views: int = 0
    scratch_bytes: int = 0


def lower_compound_func(f: func.FuncOp, matrix_bytes: int = MATRIX_BYTES) -> LowerStats:
    """Lower every compound op of one kernel in place (see the module docstring)."""
    block = f.body.block
    stats = LowerStats()
    scratch = Scratch(lambda: _add_scratch(f))
    # loop bodies included (a compound op inside a run-time loop lowers in place)
    for op in [o for o in walk(f) if o is not f]:
        if not lowers(op):
            continue
        if isinstance(op, MatmulOp):
            _attach_scratch(op, scratch)
            continue
        lower = LOWERINGS.get(type(op))
        if lower is None:
            raise fail(op, "no lowering for this compound op")
        e = Emit(op, scratch, matrix_bytes=matrix_bytes)
        new = list(lower(e, op))
        if len(new) != len(op.results):
            raise fail(
                op, f"internal: the lowering gave {len(new)} results for {len(op.results)}"
            )
        for old, v in zip(op.results, new, strict=True):
            if v.type != old.type:
                raise fail(op, f"internal: the lowering gave {v.type} for {old.type}")
            if v.name_hint is None and old.name_hint is not None:
                v.name_hint = old.name_hint
            old.replace_all_uses_with(v)
        Rewriter.erase_op(op)
        stats.lowered += 1
        stats.ops += e.count
    if scratch.value is not None:
        stats.scratch_bytes = _size_scratch(f, scratch)
        stats.views = sum(1 for op in block.ops if isinstance(op, co.ViewOp))
    return stats


def lowers(op: Operation) -> bool:
    """Whether :func:`lower_compound_func` rewrites ``op``: a compound op, or a
    ``tile.matmul`` without its scratch tensor. A kernel with no such op leaves the pass
    unchanged."""
    cls = type(op)
    kind = _KIND.get(cls)
    if kind is None:  # a fact of the op class (isinstance on xDSL's op classes is slow)
        compound, matmul = issubclass(cls, CompoundTileOp), issubclass(cls, MatmulOp)
        kind = _KIND[cls] = 1 if compound else 2 if matmul else 0
    return kind == 1 or (kind == 2 and op.scratch is None)  # type: ignore[attr-defined]


#: by op class: 1 a compound op, 2 a ``tile.matmul``, 0 another op (:func:`lowers`)
_KIND: dict[type, int] = {}


def _attach_scratch(op: MatmulOp, scratch: Scratch) -> None:
    """Give a ``tile.matmul`` the scratch tensor its CUBE transport goes through (its
    operands reach the CUBE layouts and its result leaves them only through GM)."""
    new = op.with_scratch(scratch.get(op.scratch_layout().nbytes))
    new.location = op.location
    new.attributes |= op.attributes
    Rewriter.replace_op(op, new)


def _add_scratch(f: func.FuncOp) -> SSAValue:
    block = f.body.block
    names = {a.name_hint for a in block.args}
    name = SCRATCH_NAME
    while name in names:
        name += "_"
    arg = block.insert_arg(TensorType("U8", (tile_pes(f), 64)), len(block.args))
    arg.name_hint = name
    return arg


def _size_scratch(f: func.FuncOp, scratch: Scratch) -> int:
    """Give the scratch parameter its final size (the largest view, 64-byte rounded)."""
    block = f.body.block
    old = scratch.value
    assert old is not None and old in block.args
    nbytes = (scratch.bytes + 63) // 64 * 64
    pes = tile_pes(f)
    new = block.insert_arg(TensorType("U8", (pes, nbytes)), len(block.args))
    new.name_hint = old.name_hint
    old.replace_all_uses_with(new)
    block.erase_arg(old)  # type: ignore[arg-type]
    f.function_type = FunctionType.from_lists([a.type for a in block.args], [])
    return nbytes


def tile_pes(f: func.FuncOp) -> int:
    """The kernel's PE count (``tile.pes``, default 1)."""
    attr = f.attributes.get(PES_ATTR)
    return attr.value.data if attr is not None else 1  # type: ignore[attr-defined]


@dataclass(frozen=True)
class LowerCompoundPass(ModulePass):
    """Rewrite every compound ``tile`` op (``tile.sort32``, ``tile.merge_sorted``, ...)
    into direct ``tile`` ops that ``legalize`` maps one-to-one onto legal selectors.

    Options: ``matrix-bytes`` -- the byte budget of one compare-matrix chunk in merges
    (default 16384).
    """

    name = "ptoc-lower-compound"

    matrix_bytes: int = MATRIX_BYTES
    """Bytes per PE of one merge compare-matrix chunk."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ..pipeline import Options, run_pass

        run_pass("lower-compound", op, None, Options(matrix_bytes=self.matrix_bytes))
