"""Which stage of the pipeline a kernel is at, and the one-line error when a pass gets
a kernel of another stage (``xdsl-opt -p ptoc-allocate`` on tile IR, ``ptoc-emit``
before allocation, a pass run twice).

    tile IR --ptoc-lower-compound--> tile IR --ptoc-legalize--> pto IR
            --ptoc-allocate--> allocated pto IR --ptoc-emit--> pto.program
"""

from __future__ import annotations

from enum import IntEnum

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ptoc.dialects.pto import AddrOp, ConstOp, MaterializeOp, ProgramOp, ScratchAddrOp
from ptoc.dialects.pto_base import PtoOp
from ptoc.dialects.tile_base import TileOp

from .diagnostics import CompileError

#: the function attribute ``ptoc-allocate`` records the kernel ABI in
ABI_ATTR = "pto.abi"

_PTO = (PtoOp, AddrOp, ConstOp, MaterializeOp, ScratchAddrOp)


class Stage(IntEnum):
    """A kernel's stage: what the next pass of the pipeline is."""

    TILE = 0  # tile IR: lower-compound, then legalize
    LEGALIZED = 1  # pto IR, one op per bundle: allocate
    ALLOCATED = 2  # pto IR with hands, references and GPRs: emit


_NAME = {
    Stage.TILE: "tile IR",
    Stage.LEGALIZED: "legalized pto IR",
    Stage.ALLOCATED: "allocated pto IR",
}
_PAST = {Stage.LEGALIZED: "already legalized (pto IR)", Stage.ALLOCATED: "already allocated"}

#: what to run to get a kernel from one stage to the one a pass expects
_RUN_FIRST = {
    (Stage.TILE, Stage.LEGALIZED): "run ptoc-legalize first",
    (Stage.TILE, Stage.ALLOCATED): "run ptoc-legalize and ptoc-allocate first",
    (Stage.LEGALIZED, Stage.ALLOCATED): "run ptoc-allocate first",
}


#: (a tile op, a pto op) by op class: every pass checks the stage, so one dict look-up
#: per op instead of two isinstance checks against the dialects' base classes
_KIND: dict[type, tuple[bool, bool]] = {}


def _kind(cls: type) -> tuple[bool, bool]:
    kind = _KIND.get(cls)
    if kind is None:
        kind = _KIND[cls] = (issubclass(cls, TileOp), issubclass(cls, _PTO))
    return kind


def _op_classes(f: func.FuncOp) -> set[type]:
    """The classes of the ops of ``f``'s body (top level): a kernel has tens of thousands
    of ops of a few classes, so the block's links are followed in one loop and the
    classes collected before any is looked at."""
    classes: set[type] = set()
    if not f.body.blocks:
        return classes
    add = classes.add
    op = f.body.block._first_op
    while op is not None:
        add(type(op))
        op = op._next_op
    return classes


def kernel_stage(f: func.FuncOp) -> Stage | None:
    """The stage of one kernel, from its ops (tile or pto) and its ABI attribute; None
    for a kernel without ops, which every pass accepts (and leaves empty)."""
    kinds = {_KIND.get(cls) or _kind(cls) for cls in _op_classes(f)}
    tile = any(k[0] for k in kinds)
    pto = any(k[1] for k in kinds)
    if tile and pto:
        raise _stage_error(f"@{f.sym_name.data} mixes tile and pto ops; it is no stage")
    if tile:
        return Stage.TILE
    if ABI_ATTR in f.attributes:
        return Stage.ALLOCATED
    return Stage.LEGALIZED if pto else None


def expect_stage(pass_name: str, f: func.FuncOp, stage: Stage) -> None:
    """Raise the one-line CompileError unless kernel ``f`` is at ``stage``."""
    got = kernel_stage(f)
    if got is None or got == stage:
        return
    kernel = f"{pass_name}: @{f.sym_name.data}"
    if got > stage:
        raise _stage_error(f"{kernel} is {_PAST[got]}; {pass_name} takes {_NAME[stage]}")
    fix = _RUN_FIRST[(got, stage)]
    raise _stage_error(f"{kernel} is {_NAME[got]}, not {_NAME[stage]}: {fix}")


def kernels(pass_name: str, module: ModuleOp) -> list[func.FuncOp]:
    """The kernels of a module a pass runs on; an error when there is none (a module of
    emitted programs, or an empty one), so that no pass silently does nothing."""
    found = [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    if found:
        return found
    if any(isinstance(op, ProgramOp) for op in module.ops):
        raise _stage_error(
            f"{pass_name}: the module holds emitted programs (pto.program), no kernel"
        )
    raise _stage_error(f"{pass_name}: the module has no kernel (func.func)")


def _stage_error(rule: str) -> CompileError:
    """A whole kernel (or module) is at the wrong stage: there is no one op to point at."""
    return CompileError(rule)
