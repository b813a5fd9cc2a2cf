"""Compiler diagnostics: one exception type that names the op, its location and the rule."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, NameLoc
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from ptoc.backend.errors import Error


class CompileError(PassFailedException, Error):
    """A kernel the compiler cannot lower: ``file:line: tile.op: rule``.

    It is both an xDSL pass failure (so ``xdsl-opt`` reports it) and a ``ptoc.Error``."""


def location(op: Operation) -> str:
    """``file:line:col`` of an op with a source location, the name of a named location
    (``legalize`` names each bundle after its tile op: ``@kernel tile.add #3``), else
    ``@kernel op #i``."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    if isinstance(loc, NameLoc):
        return loc.desc.data
    block = op.parent_block()
    if block is None:
        return "<detached>"
    parent = block.parent_op()
    kernel = f"@{parent.sym_name.data} " if isinstance(parent, func.FuncOp) else ""
    for i, other in enumerate(block.ops):
        if other is op:
            return f"{kernel}op #{i}"
    return f"{kernel}<unknown>"


def value_name(value: SSAValue) -> str:
    """``%name`` of a value (its name hint), else ``the <op> result [k]`` (the message
    already names the op's location)."""
    if value.name_hint:
        return f"%{value.name_hint}"
    owner = value.owner
    if isinstance(owner, Operation):
        k = "" if len(owner.results) == 1 else f" {value.index}"  # type: ignore[attr-defined]
        return f"the {owner.name} result{k}"
    return "%<arg>"


def fail(op: Operation, rule: str) -> CompileError:
    """The error to raise for ``op`` breaking ``rule`` (``place: op: rule``)."""
    where = location(op)
    if f" {op.name} #" in where:
        return CompileError(f"{where}: {rule}")
    return CompileError(f"{where}: {op.name}: {rule}")
