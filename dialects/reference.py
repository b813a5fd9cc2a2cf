"""The tile-level reference interpreter: evaluate a ``tile`` kernel on numpy inputs.

Each op's meaning is its :meth:`TileOp.reference`; this module only walks the kernel,
feeds tensors and collects the stored outputs. Tile values are ``(P, ValidRow,
ValidCol)`` arrays in the element's carrier dtype, one slice per PE.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from .dtypes import carrier
from .scalars import ElementError, is_scalar, is_scalar_op, wrap64
from .scalars import evaluate as scalar_value
from .tile_base import RefEnv, TileOp
from .tile_memory import PES_ATTR, StoreOp
from .tile_types import TensorType


class ReferenceEvalError(Exception):
    """A kernel the reference cannot evaluate (missing input, unknown op, bad input)."""


@dataclass(frozen=True)
class TensorArg:
    """A kernel's tensor parameter: its name, position, type and block argument."""

    name: str
    index: int
    type: TensorType
    value: BlockArgument


def kernel_func(module: ModuleOp | func.FuncOp) -> func.FuncOp:
    """The single ``func.func`` of a module (or the function itself)."""
    if isinstance(module, func.FuncOp):
        return module
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(funcs) != 1:
        raise ReferenceEvalError(f"expected one kernel func.func, found {len(funcs)}")
    return funcs[0]


def tensor_args(kernel: func.FuncOp) -> list[TensorArg]:
    """The tensor parameters in order; names come from the SSA name hints (``%x``)."""
    out: list[TensorArg] = []
    for i, arg in enumerate(kernel.body.block.args):
        if is_scalar(arg):
            continue
        if not isinstance(arg.type, TensorType):
            raise ReferenceEvalError(f"kernel argument {i} is not a !tile.tensor or an i64")
        out.append(TensorArg(arg.name_hint or f"arg{i}", i, arg.type, arg))
    return out


@dataclass(frozen=True)
class ScalarArg:
    """A kernel's run-time scalar parameter (an ``i64`` argument): name, position."""

    name: str
    index: int
    value: BlockArgument


def scalar_args(kernel: func.FuncOp) -> list[ScalarArg]:
    """The run-time scalar parameters in order."""
    return [
        ScalarArg(a.name_hint or f"arg{i}", i, a)
        for i, a in enumerate(kernel.body.block.args)
        if is_scalar(a)
    ]


def kernel_pes_of(kernel: func.FuncOp) -> int:
    attr = kernel.attributes.get(PES_ATTR)
    return attr.value.data if attr is not None else 1  # type: ignore[attr-defined]


def output_names(kernel: func.FuncOp) -> list[str]:
    """Tensor parameters the kernel stores to (its outputs), in parameter order."""
    # through each parameter's uses (every store to it, nested regions included), not a
    # walk of the whole kernel: a compile asks this once, and a kernel has far more ops
    # than loads and stores
    return [
        a.name
        for a in tensor_args(kernel)
        if any(
            type(u.operation) is StoreOp and u.operation.dest is a.value for u in a.value.uses
        )
    ]


def initial_tensors(
    kernel: func.FuncOp, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Every tensor's starting contents: the given array, else zeros, in carrier dtype."""
    out: dict[str, np.ndarray] = {}
    for a in tensor_args(kernel):
        shape = a.type.dims
        dtype = carrier(a.type.dtype)
        if a.name in inputs:
            arr = np.asarray(inputs[a.name])
            if arr.shape != shape:
                raise ReferenceEvalError(
                    f"input {a.name} has shape {arr.shape}, expected {shape}"
                )
            out[a.name] = np.array(arr, dtype=dtype, copy=True)
        else:
            out[a.name] = np.zeros(shape, dtype)
    return out


def live_ops(kernel: func.FuncOp) -> list[Operation]:
    """The kernel's ops in program order without its dead code (a loop's body ops are
    evaluated when the loop is, see :func:`live_set`)."""
    live = live_set(kernel)
    return [op for op in kernel.body.block.ops if op in live]


def live_set(kernel: func.FuncOp) -> set[Operation]:
    """The kernel's live ops, loop bodies included.

    An op that produces no value (a store: its effect is outside the tiles) is live, and
    so is every op that a live op reads a result of; every other op is dead: nothing it
    computes reaches an output. A loop is live when its body holds a live op or a result
    is read; a loop-carried value is live when its result or its body argument is read
    by a live op (to a fixed point). The compiler drops exactly the dead ops
    (``ptoc.passes.allocate.schedule.live_ops``) and the reference does not evaluate them,
    so a dead op's data-dependent rule (a TDIV by an integer zero, a TMRGSORT of unsorted
    data) faults neither the machine nor the reference (docs/pipeline.md, "Dead code").
    """
    live: set[Operation] = set()
    _live_block(kernel.body.block, set(), live)
    return live


def _live_block(block: Block, needed: set[SSAValue], live: set[Operation]) -> None:
    """Mark the live ops of ``block`` given the values read after it (``needed``, which
    this extends with what the block's live ops read)."""
    for op in reversed(list(block.ops)):
        if isinstance(op, (func.ReturnOp, scf.YieldOp)):
            continue
        if isinstance(op, scf.ForOp):
            if _live_loop(op, needed, live):
                live.add(op)
                needed.update((op.lb, op.ub, op.step))
            continue
        if isinstance(op, scf.IfOp):
            inner: set[Operation] = set()
            _live_block(op.true_region.block, set(), inner)
            if inner:
                live.add(op)
                live.update(inner)
                needed.add(op.cond)
                needed.update(_outer_reads(op.true_region.block, inner))
            continue
        if not op.results or any(r in needed for r in op.results):
            live.add(op)
            needed.update(op.operands)


def _live_loop(loop: scf.ForOp, needed: set[SSAValue], live: set[Operation]) -> bool:
    body = loop.body.block
    carried = [r in needed for r in loop.results]
    while True:
        inner_live: set[Operation] = set()
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        inner = {y for y, c in zip(yielded.operands, carried, strict=True) if c}
        _live_block(body, inner, inner_live)
        now = [c or a in inner for c, a in zip(carried, body.args[1:], strict=True)]
        if now == carried:
            break
        carried = now
    if not inner_live and not any(carried):
        return False
    live.update(inner_live)
    needed.update(v for v in inner if v.owner not in inner_live and v not in body.args)
    for v in _outer_reads(body, inner_live):
        needed.add(v)
    needed.update(a for a, c in zip(loop.iter_args, carried, strict=True) if c)
    return True


def _outer_reads(body: Block, inner_live: set[Operation]) -> list[SSAValue]:
    """Values defined outside a loop body that its live ops read."""
    out = []
    for op in inner_live:
        for v in op.operands:
            owner = v.owner
            block = owner if isinstance(owner, Block) else owner.parent_block()
            if not inside(block, body):
                out.append(v)
    return out


def inside(block: Block | None, body: Block) -> bool:
    """Whether ``block`` is ``body`` or lies in a region nested in it."""
    while block is not None:
        if block is body:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


#: evaluates one tile op on its tile arguments (a hook to report its errors)
Apply = Callable[[TileOp, RefEnv, list[np.ndarray]], Sequence[np.ndarray]]


def _apply(op: TileOp, env: RefEnv, args: list[np.ndarray]) -> Sequence[np.ndarray]:
    return op.reference(env, args)


def bind_scalars(kernel: func.FuncOp, env: RefEnv, scalars: Mapping[str, int]) -> None:
    """Put the run-time scalar parameters' values into ``env`` (each one is required)."""
    for a in scalar_args(kernel):
        if a.name not in scalars:
            raise ReferenceEvalError(f"no value for the scalar parameter {a.name}")
        env.scalars[a.value] = wrap64(int(scalars[a.name]))


def evaluate_kernel(kernel: func.FuncOp, env: RefEnv, apply: Apply = _apply) -> None:
    """Evaluate the kernel's live ops (:func:`live_set`) on ``env``, loops included."""
    _run_block(kernel.body.block, env, {}, live_set(kernel), apply)


def _run_block(
    block: Block,
    env: RefEnv,
    values: dict[SSAValue, np.ndarray],
    live: set[Operation],
    apply: Apply,
) -> list[SSAValue]:
    """Run ``block``'s live ops; returns the operands of its terminator."""
    for op in block.ops:
        if isinstance(op, (func.ReturnOp, scf.YieldOp)):
            return list(op.operands)
        if op not in live:
            continue
        if is_scalar_op(op):
            try:
                env.scalars[op.results[0]] = scalar_value(
                    op, env.scalars, env.tensors, env.core
                )
            except ElementError as e:
                e.op = op  # type: ignore[attr-defined]
                raise
        elif isinstance(op, scf.ForOp):
            _run_loop(op, env, values, live, apply)
        elif isinstance(op, scf.IfOp):
            if env.scalars[op.cond]:
                _run_block(op.true_region.block, env, values, live, apply)
        elif isinstance(op, TileOp):
            args = [values[v] for v in op.operands if v in values]
            results = apply(op, env, args)
            for v, r in zip(op.results, results, strict=True):
                values[v] = r
        else:
            raise ReferenceEvalError(f"{op.name} is not a tile op")
    return []


def _run_loop(
    loop: scf.ForOp,
    env: RefEnv,
    values: dict[SSAValue, np.ndarray],
    live: set[Operation],
    apply: Apply,
) -> None:
    body = loop.body.block
    i, stop, step = (env.scalars[v] for v in (loop.lb, loop.ub, loop.step))
    state = [_get(env, values, v) for v in loop.iter_args]
    while i < stop:
        env.scalars[body.args[0]] = i
        for a, x in zip(body.args[1:], state, strict=True):
            _put(env, values, a, x)
        out = _run_block(body, env, values, live, apply)
        state = [_get(env, values, v) for v in out]
        i = wrap64(i + step)
    for r, x in zip(loop.results, state, strict=True):
        _put(env, values, r, x)


def _get(env: RefEnv, values: dict[SSAValue, np.ndarray], v: SSAValue) -> object:
    if is_scalar(v):
        return env.scalars.get(v)
    return values.get(v)


def _put(env: RefEnv, values: dict[SSAValue, np.ndarray], v: SSAValue, x: object) -> None:
    if x is None:
        return  # a dead carried value
    if is_scalar(v):
        env.scalars[v] = x  # type: ignore[assignment]
    else:
        values[v] = x  # type: ignore[assignment]


def run_reference(
    module: ModuleOp | func.FuncOp,
    inputs: Mapping[str, np.ndarray],
    scalars: Mapping[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Evaluate the kernel's live ops (:func:`live_set`) with its scalar parameters'
    values ``scalars``; returns the final contents of every stored-to tensor by name."""
    kernel = kernel_func(module)
    tensors = initial_tensors(kernel, inputs)
    env = RefEnv(kernel_pes_of(kernel))
    by_name = {a.name: a for a in tensor_args(kernel)}
    for name, arr in tensors.items():
        env.tensors[by_name[name].value] = arr
    bind_scalars(kernel, env, scalars or {})
    evaluate_kernel(kernel, env)
    return {name: tensors[name] for name in output_names(kernel)}
