"""The tile-level reference interpreter: evaluate a ``tile`` kernel on numpy inputs.

Each op's meaning is its :meth:`TileOp.reference`; this module only walks the kernel,
feeds tensors and collects the stored outputs. Tile values are ``(P, ValidRow,
ValidCol)`` arrays in the element's carrier dtype, one slice per PE.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from .dtypes import carrier
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
        if not isinstance(arg.type, TensorType):
            raise ReferenceEvalError(f"kernel argument {i} is not a !tile.tensor")
        out.append(TensorArg(arg.name_hint or f"arg{i}", i, arg.type, arg))
    return out


def kernel_pes_of(kernel: func.FuncOp) -> int:
    attr = kernel.attributes.get(PES_ATTR)
    return attr.value.data if attr is not None else 1  # type: ignore[attr-defined]


def output_names(kernel: func.FuncOp) -> list[str]:
    """Tensor parameters the kernel stores to (its outputs), in parameter order."""
    stored = {op.dest for op in kernel.walk() if isinstance(op, StoreOp)}
    return [a.name for a in tensor_args(kernel) if a.value in stored]


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
    """The kernel's ops in program order without its dead code.

    An op that produces no value (a store: its effect is outside the tiles) is live, and
    so is every op that a live op reads a result of; every other op is dead: nothing it
    computes reaches an output. The compiler drops exactly these ops
    (``ptoc.passes.allocate.schedule.live_ops``) and the reference does not evaluate them,
    so a dead op's data-dependent rule (a TDIV by an integer zero, a TMRGSORT of unsorted
    data) faults neither the machine nor the reference (docs/pipeline.md, "Dead code").
    """
    body = [op for op in kernel.body.block.ops if not isinstance(op, func.ReturnOp)]
    needed: set[SSAValue] = set()
    keep: list[Operation] = []
    for op in reversed(body):
        if not op.results or any(r in needed for r in op.results):
            keep.append(op)
            needed.update(op.operands)
    return keep[::-1]


def run_reference(
    module: ModuleOp | func.FuncOp, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Evaluate the kernel's live ops (:func:`live_ops`); returns the final contents of
    every stored-to tensor by name."""
    kernel = kernel_func(module)
    tensors = initial_tensors(kernel, inputs)
    env = RefEnv(kernel_pes_of(kernel))
    by_name = {a.name: a for a in tensor_args(kernel)}
    for name, arr in tensors.items():
        env.tensors[by_name[name].value] = arr
    values: dict[SSAValue, np.ndarray] = {}
    for op in live_ops(kernel):
        if not isinstance(op, TileOp):
            raise ReferenceEvalError(f"{op.name} is not a tile op")
        args = [values[v] for v in op.operands if v in values]
        results = op.reference(env, args)
        for v, r in zip(op.results, results, strict=True):
            values[v] = r
    return {name: tensors[name] for name in output_names(kernel)}
