"""Compiler diagnostics: the one :class:`CompileError`, which carries the failing op, the
rule and a hint as data.

A pass raises ``fail(op, rule)``; its text is ``place: op: rule`` (what ``xdsl-opt``
prints), and the front end (``ptoc.compile``) places the same error at the kernel line
the op was traced from (:attr:`CompileError.op`'s location) -- it reads the op, never
the message text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdsl.utils.exceptions import PassFailedException

from ptoc.backend.errors import LocatedError, SourceSpan

if TYPE_CHECKING:
    from xdsl.ir import Operation, SSAValue


class CompileError(PassFailedException, LocatedError):
    """A kernel the compiler cannot lower.

    Fields: ``rule`` (the sentence naming the broken rule), ``op`` (the xDSL op it is
    about, None for a whole kernel), ``hint`` (what to do instead, or None), ``loc`` (the
    kernel source span, set by the front end) and ``argument`` (the index of the kernel
    argument the rule is about, for kernel-level rules such as the ABI's base
    addresses). Without ``loc`` the text is ``place: op: rule`` (``place`` is the op's
    ``file:line:col`` or IR position); with it, a compiler diagnostic with a caret.

    It is both an xDSL pass failure (so ``xdsl-opt`` reports it, also under
    ``--verify-diagnostics``) and a ``ptoc.Error``."""

    def __init__(
        self,
        rule: str,
        op: Operation | None = None,
        hint: str | None = None,
        loc: SourceSpan | None = None,
        *,
        argument: int | None = None,
        place: str | None = None,
    ) -> None:
        self.rule = rule
        self.op = op
        self.argument = argument
        #: ``place: op`` naming the op in IR terms (kept as text so the error pickles)
        self.place = place if place is not None or op is None else _place(op)
        LocatedError.__init__(self, rule, loc, hint)

    def render(self) -> str:
        if self.loc is None:  # the one line xdsl-opt prints (the hint is a field)
            return self.rule if self.place is None else f"{self.place}: {self.rule}"
        return super().render()

    def __reduce__(self) -> tuple[Any, ...]:
        # the op stays behind (IR does not pickle); its place is kept as text
        state = (self.rule, self.hint, self.loc, self.argument, self.place)
        return (_rebuild, (type(self), *state))


def _rebuild(
    cls: type[CompileError],
    rule: str,
    hint: str | None,
    loc: Any,
    argument: int | None,
    place: str | None,
) -> CompileError:
    return cls(rule, None, hint, loc, argument=argument, place=place)


def location(op: Operation) -> str:
    """``file:line:col`` of an op with a source location, the name of a named location
    (``legalize`` names each bundle after its tile op: ``@kernel tile.add #3``), else
    ``@kernel op #i``."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FileLineColLoc, NameLoc

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


def source_position(op: Operation) -> tuple[str, int, int] | None:
    """``(file, line, 1-based column)`` of an op that carries a source location (the
    tracer and the kernel builder stamp one on every op; lowering copies it onto what
    the op becomes), else None."""
    from xdsl.dialects.builtin import FileLineColLoc

    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return loc.filename.data, loc.line.data, loc.column.data
    return None


def _place(op: Operation) -> str:
    """``place: op`` of an op (the place alone when it already names the op)."""
    where = location(op)
    return where if f" {op.name} #" in where else f"{where}: {op.name}"


def value_name(value: SSAValue) -> str:
    """``%name`` of a value (its name hint), else ``the <op> result [k]`` (the message
    already names the op's location)."""
    from xdsl.ir import Operation

    if value.name_hint:
        return f"%{value.name_hint}"
    owner = value.owner
    if isinstance(owner, Operation):
        k = "" if len(owner.results) == 1 else f" {value.index}"  # type: ignore[attr-defined]
        return f"the {owner.name} result{k}"
    return "%<arg>"


#: what to do when the tiles of a kernel do not fit the machine's Local capacity
CAPACITY_HINT = (
    "work on smaller tiles (load fewer rows at a time), or compile for a machine with "
    "more capacity"
)


def fail(op: Operation, rule: str, hint: str | None = None) -> CompileError:
    """The error to raise for ``op`` breaking ``rule`` (``place: op: rule``)."""
    return CompileError(rule, op, hint)
