"""The tracer: runs a kernel's Python body once with proxy values and records ``tile`` ops.

While a kernel is traced, :func:`current` returns its :class:`TraceState`; every
``ptoc.lang`` function appends one or more ``tile`` ops through :meth:`TraceState.emit`,
which stamps the op with the kernel author's source location and verifies it at once,
so that a rule the op breaks is reported at that line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from ptoc.dialects.ragged import Counts, refusal, result_counts
from ptoc.dialects.tile_base import RuleError
from ptoc.dialects.tile_types import TileType

from .errors import KernelError
from .source import SourceLoc, user_location

_STACK: list[TraceState] = []


@dataclass
class TraceState:
    """One kernel being traced: its body block, PE count and what it stored to."""

    kernel: str
    pes: int
    block: Block
    #: the ``func.return`` closing the body; ops go in front of it (verifiable at once)
    ret: Operation
    #: tensor parameter names the kernel loads from / stores to, in first-use order
    loaded: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)
    #: (file, line, 1-based col) of every op -> the full span (for carets after cloning)
    locations: dict[tuple[str, int, int], SourceLoc] = field(default_factory=dict)
    #: the open run-time loops, innermost last (``ptoc.lang.control``): ops go into the
    #: innermost one's body, in front of its terminator
    loops: list[Any] = field(default_factory=list)
    #: tensors read with ``pt.load_scalar`` (the kernel may not store to them)
    scalar_reads: set[str] = field(default_factory=set)
    #: a rule broken where no error can be raised (a ``break`` out of a ``pt.range``
    #: loop closes its generator): raised at the next op or at the end of the trace
    pending: KernelError | None = None
    #: ragged tiles (valid rows or columns a run-time count) -> their (rows, columns)
    #: counts (:mod:`ptoc.dialects.ragged`)
    counts: dict[SSAValue, Counts] = field(default_factory=dict)
    #: run-time integer expressions already computed: (op class, operands, block) -> value
    integers: dict[tuple[Any, ...], SSAValue] = field(default_factory=dict)

    @property
    def body(self) -> Block:
        """The block ops are traced into (the innermost open loop's body)."""
        return self.loops[-1].body if self.loops else self.block

    @property
    def anchor(self) -> Operation:
        """The terminator of :attr:`body`, which new ops go in front of."""
        return self.loops[-1].terminator if self.loops else self.ret

    def visible(self, block: Block | None) -> bool:
        """Whether values of ``block`` may be read here: the kernel body or an open loop's."""
        return block is self.block or any(loop.body is block for loop in self.loops)

    def finish(self) -> None:
        """The end of the trace: no loop may be left open, no rule pending."""
        self.check()
        if self.loops:
            loop = self.loops[-1]
            raise KernelError("a pt.range loop was left without finishing its body", loop.loc)

    def check(self) -> None:
        if self.pending is not None:
            e, self.pending = self.pending, None
            raise e

    def emit(
        self, op: Operation, loc: SourceLoc | None = None, fn: str | None = None
    ) -> Operation:
        """Append ``op`` at the kernel author's current line and verify it there; a broken
        rule of the op is reported as ``fn``'s (the ``ptoc.lang`` function called)."""
        self.check()
        loc = loc or user_location(2)
        why = refusal(op, self.counts)
        if why is not None:
            raise KernelError(
                f"{fn or op.name} {why}",
                loc,
                hint="a tile loaded with valid_rows= or valid_cols= combines with tiles of the "
                "same counts (computed from it), broadcasts along the other axis and scalars",
            )
        if loc is not None:
            op.location = FileLineColLoc(
                StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col + 1)
            )
            self.locations[(loc.file, loc.line, loc.col + 1)] = loc
        self.body.insert_op_before(op, self.anchor)
        try:
            op.verify()
        except VerifyException as e:
            op.detach()
            op.erase(safe_erase=False)
            text = f"{fn}: {e.rule}" if fn and isinstance(e, RuleError) else _rule_text(e)
            raise KernelError(text, loc) from None
        counts = result_counts(op, self.counts)
        if counts != (None, None):
            self.counts.update((r, counts) for r in op.results if isinstance(r.type, TileType))
        return op

    def use(self, names: list[str], name: str) -> None:
        if name not in names:
            names.append(name)


def _rule_text(e: VerifyException) -> str:
    """The rule sentence of an xDSL verifier error, without its op dump."""
    text = str(e).strip()
    return text.split("\n\n")[0].splitlines()[0] if text else "the operation is not valid"


@contextmanager
def tracing(state: TraceState) -> Iterator[TraceState]:
    _STACK.append(state)
    try:
        yield state
    finally:
        _STACK.pop()


def active() -> TraceState | None:
    return _STACK[-1] if _STACK else None


def current(what: str) -> TraceState:
    """The kernel being traced; ``what`` names the caller for the error outside one."""
    if not _STACK:
        raise KernelError(
            f"{what} is only usable inside a @ptoc.kernel function while it is traced",
            user_location(2),
            hint="decorate the function with @ptoc.kernel and call ptoc.compile, "
            "ptoc.reference or ptoc.verify on it",
        )
    return _STACK[-1]
