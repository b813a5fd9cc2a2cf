"""Run-time loops and run-time integers.

``for i in pt.range(start, stop, step):`` is a loop of the *program*: its body is traced
once into an ``scf.for`` and the machine runs it ``ceil((stop - start) / step)`` times, so
the program's size does not grow with the trip count (Python's ``range`` still unrolls
at trace time). ``i`` is an :class:`Index`, a run-time integer, and so is a scalar
kernel parameter (``n: ptoc.Scalar[ptoc.s32]``); they combine with ``+``, ``-`` and
``*`` and place load/store windows:
``pt.load(x, rows=(i, 16))``.

A variable that holds a tile (or a run-time integer, or a Python number) before the loop
and is assigned a new one in the body is *carried*: each iteration starts with the value
the previous one ended with, and after the loop the variable holds the last one::

    acc = pt.full((16, 64), 0.0)
    for i in pt.range(0, n, 16):
        acc = acc + pt.load(x, rows=(i, 16))
    pt.store(out, acc)

"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Operation, Region, SSAValue

from ptoc.dialects.reference import inside
from ptoc.dialects.scalars import CoreOp, constant, constant_value

from ..errors import KernelError
from ..source import SourceLoc, user_location
from ..tile import Tile
from ..trace import active, current
from ._core import describe, fail

__all__ = ["Condition", "Index", "RunScalar", "block_idx", "block_num", "range", "when"]

_range = range


class Index:
    """A run-time integer of the kernel being traced (64-bit two's complement).

    It has no value at trace time: Python ``if``/``while`` on it, ``int(i)`` and indexing
    with it are refused; use it in ``pt.range`` bounds and load/store windows.
    """

    __slots__ = ("value",)

    def __init__(self, value: SSAValue) -> None:
        self.value = value

    def __repr__(self) -> str:
        c = constant_value(self.value)
        return f"Index({c})" if c is not None else "Index(<run-time>)"

    # ---- arithmetic

    def _bin(self, cls: type[Operation], other: Any, reflected: bool, sym: str) -> Any:
        if not isinstance(other, (Index, int)) and hasattr(other, "scale"):
            return NotImplemented  # a * pt.pe() + b: the PE index's operators combine
        o = as_index(other, f"'{sym}'")
        a, b = (o, self) if reflected else (self, o)
        return _emit_binary(cls, a, b, sym)

    def __add__(self, o: Any) -> Index:
        return self._bin(arith.AddiOp, o, False, "+")

    def __radd__(self, o: Any) -> Index:
        return self._bin(arith.AddiOp, o, True, "+")

    def __sub__(self, o: Any) -> Index:
        return self._bin(arith.SubiOp, o, False, "-")

    def __rsub__(self, o: Any) -> Index:
        return self._bin(arith.SubiOp, o, True, "-")

    def __mul__(self, o: Any) -> Index:
        return self._bin(arith.MuliOp, o, False, "*")

    def __rmul__(self, o: Any) -> Index:
        return self._bin(arith.MuliOp, o, True, "*")

    def __neg__(self) -> Index:
        return _emit_binary(arith.SubiOp, as_index(0, "'-'"), self, "-")

    # ---- no value at trace time

    def _no_value(self, what: str) -> Any:
        fail(
            f"a run-time integer has no value at trace time ({what})",
            "use it in pt.range bounds and load/store windows; Python control flow needs "
            "compile-time values",
        )

    def __bool__(self) -> bool:
        return self._no_value("its truth value was asked for")

    def __index__(self) -> int:
        return self._no_value("it was used as a Python integer")

    __int__ = __index__

    # ---- comparisons: run-time conditions for pt.when

    def _cmp(self, kind: str, other: Any) -> Condition:
        o = as_index(other, f"'{kind}'", "the compared value")
        op = arith.CmpiOp(self.value, o.value, kind)
        current("pt.when").emit(op, user_location(3), "a comparison")
        return Condition(op.results[0], kind)

    def __lt__(self, other: Any) -> Condition:
        return self._cmp("slt", other)

    def __le__(self, other: Any) -> Condition:
        return self._cmp("sle", other)

    def __gt__(self, other: Any) -> Condition:
        return self._cmp("sgt", other)

    def __ge__(self, other: Any) -> Condition:
        return self._cmp("sge", other)

    def __eq__(self, other: object) -> Condition:  # type: ignore[override]
        return self._cmp("eq", other)

    def __ne__(self, other: object) -> Condition:  # type: ignore[override]
        return self._cmp("ne", other)

    __hash__ = object.__hash__


class RunScalar:
    """A run-time FP32 scalar of the kernel being traced: a scalar parameter
    ``alpha: ptoc.Scalar[ptoc.fp32]``, or what the program computes from such scalars and
    Python numbers (``alpha * 0.5 + beta``: FMUL, FADD on the GPRs' FP32 words, rounding to
    nearest even; ``pt.minimum`` / ``pt.maximum``: FMIN, FMAX; ``pt.cast(i, ptoc.fp32)`` of
    a run-time integer: SCVTF). It is the scalar operand of tile arithmetic on FP32 tiles
    (``t * alpha``: TMULS reading its register) and compares into ``pt.when`` conditions
    (``alpha > 0.0``: FLT, false whenever an operand is a NaN, ``!=`` included). It has no
    value at trace time."""

    __slots__ = ("dtype", "value")

    def __init__(self, value: SSAValue, dtype: Any) -> None:
        self.value = value
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"RunScalar({self.dtype!r})"

    def _no_value(self, what: str) -> Any:
        fail(
            f"a run-time {self.dtype.name} scalar has no value at trace time ({what})",
            "use it in tile arithmetic (t * alpha), scalar arithmetic (alpha * 2.0) and "
            "pt.when conditions (alpha > 0.0)",
        )

    def __bool__(self) -> bool:
        return self._no_value("its truth value was asked for")

    def __float__(self) -> float:
        return self._no_value("it was used as a Python float")

    __int__ = __index__ = __float__  # type: ignore[assignment]

    # ---- arithmetic: FSU forms

    def _arith(self, kind: str, other: Any, reflected: bool, sym: str) -> Any:
        from ..tile import Tile

        if isinstance(other, Tile):
            return NotImplemented  # the tile's reflected operator handles it
        o = as_float(other, f"'{sym}'", self.dtype)
        a, b = (o, self) if reflected else (self, o)
        return _float_op(kind, a, b, sym)

    def __add__(self, o: Any) -> Any:
        return self._arith("add", o, False, "+")

    def __radd__(self, o: Any) -> Any:
        return self._arith("add", o, True, "+")

    def __sub__(self, o: Any) -> Any:
        return self._arith("sub", o, False, "-")

    def __rsub__(self, o: Any) -> Any:
        return self._arith("sub", o, True, "-")

    def __mul__(self, o: Any) -> Any:
        return self._arith("mul", o, False, "*")

    def __rmul__(self, o: Any) -> Any:
        return self._arith("mul", o, True, "*")

    def __truediv__(self, o: Any) -> Any:
        return self._arith("div", o, False, "/")

    def __rtruediv__(self, o: Any) -> Any:
        return self._arith("div", o, True, "/")

    # ---- comparisons: run-time conditions for pt.when (no LE / GT form: swapped)

    def _cmp(self, kind: str, other: Any, swap: bool, sym: str) -> Condition:
        o = as_float(other, f"'{sym}'", self.dtype)
        a, b = (o, self) if swap else (self, o)
        holds = _float_op(kind, a, b, sym)  # 1 or 0
        state = current("pt.when")
        zero = as_index(0, "pt.when")
        op = arith.CmpiOp(holds.value, zero.value, "ne")
        state.emit(op, user_location(3), "a comparison")
        return Condition(op.results[0], "ne")

    def __lt__(self, other: Any) -> Condition:
        return self._cmp("lt", other, False, "<")

    def __le__(self, other: Any) -> Condition:
        return self._cmp("ge", other, True, "<=")

    def __gt__(self, other: Any) -> Condition:
        return self._cmp("lt", other, True, ">")

    def __ge__(self, other: Any) -> Condition:
        return self._cmp("ge", other, False, ">=")

    def __eq__(self, other: object) -> Condition:  # type: ignore[override]
        return self._cmp("eq", other, False, "==")

    def __ne__(self, other: object) -> Condition:  # type: ignore[override]
        return self._cmp("ne", other, False, "!=")

    __hash__ = object.__hash__


def as_float(x: Any, fn: str, dtype: Any) -> RunScalar:
    """``x`` as a run-time FP32 scalar: a :class:`RunScalar`, or a Python number rounded
    to FP32 (nearest even) and made a constant of its bits."""
    if isinstance(x, RunScalar):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        import numpy as np

        with np.errstate(over="ignore"):
            bits = int(np.array(x, np.float32).view(np.uint32))
        return RunScalar(as_index(bits, fn).value, dtype)
    if isinstance(x, Index):
        fail(
            f"{fn}: a run-time integer with a run-time {dtype.name} scalar",
            f"convert it first: pt.cast(i, ptoc.{dtype.name})",
        )
    fail(f"{fn}: the operand is a number or a run-time {dtype.name} scalar, not {describe(x)}")


def _float_op(kind: str, a: RunScalar, b: RunScalar, sym: str) -> RunScalar:
    """``a <kind> b`` as one FloatOp (the same expression in one block is one value)."""
    from ptoc.dialects.scalars import FloatOp

    state = current(f"'{sym}'")
    key = (FloatOp, kind, a.value, b.value, state.body)
    known = state.integers.get(key)
    if known is None:
        op = FloatOp(kind, a.value, b.value)
        state.emit(op, user_location(3), f"'{sym}'")
        known = state.integers[key] = op.results[0]
    return RunScalar(known, a.dtype)


def int_to_float(i: Index, dtype: Any, fn: str) -> RunScalar:
    """A run-time integer rounded to an FP32 scalar (SCVTF)."""
    from ptoc.dialects.scalars import IntToFloatOp

    op = IntToFloatOp(i.value)
    current(fn).emit(op, user_location(3), fn)
    return RunScalar(op.results[0], dtype)


class Condition:
    """A comparison of run-time integers (``i < n``): the condition of ``pt.when``. It has
    no truth value at trace time."""

    __slots__ = ("kind", "value")

    def __init__(self, value: SSAValue, kind: str) -> None:
        self.value, self.kind = value, kind

    def __repr__(self) -> str:
        return f"Condition({self.kind})"

    def __bool__(self) -> bool:
        fail(
            "a comparison of run-time integers has no truth value at trace time",
            "run code only when it holds with: with pt.when(i < n): ...",
        )


class when:
    """``with pt.when(i < n):`` runs its body only when the run-time condition holds.

    The body is traced once into a conditional of the program. It may load, compute and
    store; a tile computed inside it is not visible after it, and a variable that holds
    a tile before it is not reassigned in it.

    Example::

        @ptoc.kernel
        def when_example(
            x: ptoc.Tensor[ptoc.fp32, 64, 32],
            out: ptoc.Tensor[ptoc.fp32, 64, 32],
            rows: ptoc.Scalar[ptoc.s32],
        ):
            for r in pt.range(0, 64, 8):
                with pt.when(r < rows):  # only the blocks below the run-time height
                    pt.store(out, pt.exp(pt.load(x, rows=(r, 8))), rows=(r, 8))


        @when_example.inputs
        def _(rng):
            x = rng.standard_normal((64, 32)).astype(np.float32)
            return {"x": x, "rows": int(rng.integers(0, 65))}


        ptoc.verify(when_example)
    """

    def __init__(self, condition: Any) -> None:
        if not isinstance(condition, Condition):
            fail(
                f"pt.when takes a comparison of run-time integers, not {describe(condition)}",
                "e.g. pt.when(i < n) with i a pt.range index or a scalar parameter; for a "
                "compile-time condition use Python's if",
            )
        self.condition = condition
        self.loc = user_location(2)

    def __enter__(self) -> None:
        state = current("pt.when")
        body = Block()
        body.add_op(scf.YieldOp())
        op = scf.IfOp(self.condition.value, [], Region(body))
        _locate(op, self.loc)
        state.body.insert_op_before(op, state.anchor)
        frame = sys._getframe(1)
        self.open = OpenLoop(op, self.loc, frame, _bindings(frame))  # type: ignore[arg-type]
        state.loops.append(self.open)

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        state = current("pt.when")
        if state.loops and state.loops[-1] is self.open:
            state.loops.pop()
        if kind is not None:
            return
        after = _bindings(self.open.frame)
        for path, old in self.open.before.items():
            new = after.get(path)
            if new is not old and isinstance(old, (Tile, Index)):
                raise KernelError(
                    f"'{_spell(path)}' is assigned in the body of pt.when; a conditional's "
                    "body may not replace a value that exists before it",
                    self.loc,
                    hint="select per element with pt.where, or store the result inside the "
                    "body",
                )


def as_index(x: Any, fn: str, what: str = "the operand") -> Index:
    """``x`` as a run-time integer: an :class:`Index`, or a Python int made a constant."""
    if isinstance(x, Index):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        state = current(fn)
        key = ("constant", x, state.body)
        known = state.integers.get(key)
        if known is not None:
            return Index(known)
        op = constant(x)
        state.emit(op, user_location(3), fn)
        state.integers[key] = op.results[0]
        return Index(op.results[0])
    fail(f"{fn}: {what} is an integer or a run-time integer, not {describe(x)}")


def _emit_binary(cls: type[Operation], a: Index, b: Index, sym: str) -> Index:
    ca, cb = constant_value(a.value), constant_value(b.value)
    if ca is not None and cb is not None:  # fold: keeps constant windows static
        from ptoc.dialects.scalars import BINARY, wrap64

        return as_index(wrap64(BINARY[cls](ca, cb)), f"'{sym}'")
    state = current(f"'{sym}'")
    # the same integer expression in the same block is one value (so that two loads with
    # valid_rows=n - r have one count, and the program computes it once)
    key = (cls, a.value, b.value, state.body)
    known = state.integers.get(key)
    if known is not None:
        return Index(known)
    op = cls(a.value, b.value)  # type: ignore[call-arg]
    state.emit(op, user_location(3), f"'{sym}'")
    state.integers[key] = op.results[0]
    return Index(op.results[0])


def extreme(kind: str, a: Any, b: Any, fn: str) -> Any:
    """``pt.minimum`` / ``pt.maximum`` of run-time integers (signed: MIN / MAX) or of
    run-time FP32 scalars (FMIN / FMAX)."""
    if isinstance(a, RunScalar) or isinstance(b, RunScalar):
        dtype = (a if isinstance(a, RunScalar) else b).dtype
        x, y = as_float(a, fn, dtype), as_float(b, fn, dtype)
        return _float_op(kind.lower(), x, y, fn)
    x, y = as_index(a, fn, "the left operand"), as_index(b, fn, "the right operand")
    return _emit_binary(arith.MinSIOp if kind == "MIN" else arith.MaxSIOp, x, y, fn)


def _core(kind: int, fn: str) -> Index:
    op = CoreOp(kind)
    current(fn).emit(op, user_location(3), fn)
    return Index(op.results[0])


def block_idx() -> Index:
    """The index of the core running the kernel in its grid launch (0 .. grid - 1), a
    run-time integer: ``@ptoc.kernel(grid=N)`` runs the kernel on N cores that share
    global memory (D13; ``docs/many-cores.md``).

    Example::

        @ptoc.kernel(grid=4)
        def block_idx_example(
            x: ptoc.Tensor[ptoc.fp32, 64, 32], out: ptoc.Tensor[ptoc.fp32, 64, 32]
        ):
            rows = pt.block_idx() * 16  # each core its own 16 rows
            pt.store(out, pt.exp(pt.load(x, rows=(rows, 16))), rows=(rows, 16))


        ptoc.verify(block_idx_example)
    """
    return _core(CoreOp.INDEX, "pt.block_idx")


def block_num() -> Index:
    """The number of cores of the kernel's grid launch, a run-time integer.

    Example::

        @ptoc.kernel(grid=3)
        def block_num_example(
            x: ptoc.Tensor[ptoc.fp32, 8, 32], out: ptoc.Tensor[ptoc.fp32, 8, 32]
        ):
            with pt.when(pt.block_idx() == pt.block_num() - 1):  # the last core only
                pt.store(out, pt.load(x) * 2.0)


        ptoc.verify(block_num_example)
    """
    return _core(CoreOp.COUNT, "pt.block_num")


# --------------------------------------------------------------------------- loops


@dataclass
class OpenLoop:
    """A ``pt.range`` loop (or ``pt.when`` conditional) whose body is being traced."""

    op: scf.ForOp
    loc: SourceLoc | None
    frame: Any
    before: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    @property
    def body(self) -> Block:
        region = self.op.body if isinstance(self.op, scf.ForOp) else self.op.true_region
        return region.block

    @property
    def terminator(self) -> Operation:
        last = self.body.last_op
        assert last is not None
        return last


class range:  # noqa: A001 - mirrors Python's range, which it replaces in kernels
    """``pt.range(stop)``, ``pt.range(start, stop[, step])``: a run-time loop.

    ``start`` and ``stop`` are integers or run-time integers; ``step`` is a positive
    Python integer. The body is traced once (see the module docstring for carried
    variables); ``break`` and ``return`` out of the body are not run-time control flow and
    are refused.

    Example::

        @ptoc.kernel
        def range_example(
            x: ptoc.Tensor[ptoc.fp32, 64, 32],
            out: ptoc.Tensor[ptoc.fp32, 64, 32],
            rows: ptoc.Scalar[ptoc.s32],
        ):
            for r in pt.range(0, rows, 8):
                pt.store(out, pt.abs(pt.load(x, rows=(r, 8))), rows=(r, 8))


        @range_example.inputs
        def _(rng):
            x = rng.standard_normal((64, 32)).astype(np.float32)
            return {"x": x, "rows": 8 * int(rng.integers(0, 9))}


        ptoc.verify(range_example)
    """

    def __init__(self, start: Any, stop: Any = None, step: Any = 1) -> None:
        if stop is None:
            start, stop = 0, start
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            fail(
                f"pt.range: the step is a positive Python integer, not {describe(step)}",
                "count down with an index expression: for k in pt.range(n): i = n - 1 - k",
            )
        self.start, self.stop, self.step = start, stop, step
        self.loc = user_location(2)
        self._used = False

    def __repr__(self) -> str:
        return f"pt.range({self.start!r}, {self.stop!r}, {self.step})"

    def __iter__(self) -> Iterator[Index]:
        if self._used:
            fail("a pt.range object runs one loop; write pt.range(...) in each for statement")
        self._used = True
        return self._loop(sys._getframe(1))

    def _loop(self, frame: Any) -> Iterator[Index]:
        state = current("pt.range")
        lb = as_index(self.start, "pt.range", "the start").value
        ub = as_index(self.stop, "pt.range", "the stop").value
        step = as_index(self.step, "pt.range", "the step").value
        body = Block(arg_types=[i64])
        body.add_op(scf.YieldOp())
        op = scf.ForOp(lb, ub, step, [], Region(body))
        _locate(op, self.loc)
        state.body.insert_op_before(op, state.anchor)
        loop = OpenLoop(op, self.loc, frame, _bindings(frame))
        state.loops.append(loop)
        finished = False
        try:
            yield Index(body.args[0])
            finished = True
        finally:
            if state.loops and state.loops[-1] is loop:
                state.loops.pop()
            if not finished:
                state.pending = KernelError(
                    "the body of a pt.range loop was left early (break, return or an "
                    "exception): a run-time loop runs its whole body every iteration",
                    self.loc,
                    hint="select per element with pt.where, or split the loop bounds",
                )
        _close(state, loop)


def _locate(op: Operation, loc: SourceLoc | None) -> None:
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

    if loc is not None:
        op.location = FileLineColLoc(
            StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col + 1)
        )
        state = active()
        if state is not None:  # the program's loop statistics name this line
            state.locations[(loc.file, loc.line, loc.col + 1)] = loc


def _bindings(frame: Any) -> dict[tuple[Any, ...], Any]:
    """The proxies and numbers the frame's variables hold (one level into lists, tuples
    and dicts), by path."""
    out: dict[tuple[Any, ...], Any] = {}
    for name, v in frame.f_locals.items():
        _collect(out, (name,), v, 2)
    return out


def _collect(
    out: dict[tuple[Any, ...], Any], path: tuple[Any, ...], v: Any, depth: int
) -> None:
    if isinstance(v, (Tile, Index)) or (
        isinstance(v, (int, float)) and not isinstance(v, bool)
    ):
        out[path] = v
    elif depth > 0 and isinstance(v, (list, tuple)):
        for k, x in enumerate(v):
            _collect(out, (*path, k), x, depth - 1)
    elif depth > 0 and isinstance(v, dict):
        for k, x in v.items():
            _collect(out, (*path, k), x, depth - 1)


def _spell(path: tuple[Any, ...]) -> str:
    return path[0] + "".join(f"[{k!r}]" for k in path[1:])


def _close(state: Any, loop: OpenLoop) -> None:
    """Turn the variables the body reassigned into the loop's carried values."""
    after = _bindings(loop.frame)
    carried: list[tuple[Any, Any, Any]] = []  # (path, before, after)
    for path, old in loop.before.items():
        new = after.get(path)
        if new is None or new is old:
            continue
        if (
            isinstance(new, Index)
            and isinstance(loop.op, scf.ForOp)
            and new.value is loop.body.args[0]
        ):
            continue  # the loop variable itself (reused from an earlier loop): not carried
        if isinstance(old, (Tile, Index)) and isinstance(new, (Tile, Index)):
            if type(old) is not type(new):
                raise KernelError(
                    f"'{_spell(path)}' holds a {type(old).__name__.lower()} before the "
                    f"pt.range loop and a {type(new).__name__.lower()} after its body",
                    loop.loc,
                )
            if old.value is not new.value:
                if isinstance(new, Tile) and (
                    old.value in state.counts or new.value in state.counts
                ):
                    raise KernelError(
                        f"'{_spell(path)}' would carry a tile with a run-time number of "
                        "valid rows from iteration to iteration",
                        loop.loc,
                        hint="carry tiles whose rows are all valid (load the ragged tail "
                        "inside the body, and reduce or store it there)",
                    )
                carried.append((path, old, new))
        elif isinstance(new, Index) and isinstance(old, int):
            carried.append((path, old, new))
        elif not isinstance(old, (Tile, Index)) and new != old:
            raise KernelError(
                f"the Python value '{_spell(path)}' changes in the body of a pt.range loop, "
                "which is traced once but runs at run time",
                loop.loc,
                hint="make it a run-time integer before the loop (i = pt.range index "
                "arithmetic), or use Python's range to unroll the loop at trace time",
            )
        elif isinstance(old, (Tile, Index)) and not isinstance(new, (Tile, Index)):
            raise KernelError(
                f"'{_spell(path)}' holds a run-time value before the pt.range loop and "
                f"{describe(new)} after its body",
                loop.loc,
            )
    if not carried:
        return
    body = loop.body
    inits: list[SSAValue] = []
    for _, old, _new in carried:
        if isinstance(old, int):
            c = constant(old)
            state.body.insert_op_before(c, loop.op)
            inits.append(c.results[0])
        else:
            inits.append(old.value)
    args = [body.insert_arg(v.type, len(body.args)) for v in inits]
    for init, arg, (_, old, _new) in zip(inits, args, carried, strict=True):
        if isinstance(old, int):
            continue
        for use in list(init.uses):
            if _within(use.operation, body):
                use.operation.operands[use.index] = arg
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    new_yield = scf.YieldOp(*[new.value for _, _, new in carried])
    body.insert_op_before(new_yield, yielded)
    yielded.detach()
    yielded.erase()
    old_op = loop.op
    region = old_op.detach_region(old_op.body)
    op = scf.ForOp(old_op.lb, old_op.ub, old_op.step, inits, region)
    op.location = old_op.location
    parent = old_op.parent_block()
    assert parent is not None
    parent.insert_op_before(op, old_op)
    old_op.detach()
    old_op.erase()
    for (_, _, new), result in zip(carried, op.results, strict=True):
        new.value = result


def _within(op: Operation, body: Block) -> bool:
    return inside(op.parent_block(), body)
