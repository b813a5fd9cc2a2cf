"""Shared plumbing of the ``ptoc.lang`` functions: argument checks that name the rule,
DataType legality read from the catalog, scalar literals, and op emission."""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np
from xdsl.ir import Operation

from ptoc.backend.isa import DataType, op
from ptoc.dialects.tile_base import scalar_bits

from ..dtypes import DType, dtype_of, type_list
from ..errors import KernelError
from ..source import user_location
from ..tile import TensorParam, Tile
from ..trace import current

Number = int | float


def describe(x: Any, limit: int = 60) -> str:
    """A short description of a user value for a diagnostic (a numpy array is named by
    its shape and dtype, never printed; other reprs are cut at ``limit`` characters)."""
    if isinstance(x, np.ndarray):
        hint = " (arrays are passed to ptoc.run / ptoc.verify, not used in the body)"
        return f"a numpy array of shape {x.shape} and dtype {x.dtype}{hint}"
    text = repr(x)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(x).__name__} {text}"


def fail(message: str, hint: str | None = None) -> NoReturn:
    """Raise a KernelError at the kernel author's current line."""
    raise KernelError(message, user_location(2), hint=hint)


def emit(fn: str, operation: Operation) -> Operation:
    """Append ``operation`` to the kernel being traced (``fn`` names the caller)."""
    return current(fn).emit(operation, fn=fn)


def emit_tile(fn: str, operation: Operation, index: int = 0) -> Tile:
    return Tile(emit(fn, operation).results[index])


def as_tile(x: Any, fn: str, what: str = "its operand") -> Tile:
    """``x`` as a Tile of the kernel being traced, or a diagnostic naming what it is."""
    state = current(fn)
    if isinstance(x, Tile):
        owner = x.value.owner
        block = owner.parent_block() if isinstance(owner, Operation) else owner
        if not state.visible(block):  # type: ignore[arg-type]
            if _in_trace(block, state.block):  # type: ignore[arg-type]
                fail(
                    f"{fn}: {what} was computed inside a finished pt.range loop body",
                    "a tile computed in a run-time loop is visible after it only when it "
                    "replaces a tile that existed before the loop: give the variable a value "
                    "before the loop (e.g. acc = pt.full(...)) and assign it in the body",
                )
            fail(
                f"{fn}: {what} is a tile of another kernel trace",
                "tiles live only inside the kernel that computed them; load the data again",
            )
        return x
    if isinstance(x, TensorParam):
        fail(
            f"{fn}: {what} '{x.name}' is a global-memory tensor, not a tile",
            f"load it first: pt.load({x.name})",
        )
    fail(f"{fn} expects a tile as {what}, not {describe(x)}")


def _in_trace(block: Any, top: Any) -> bool:
    """Whether ``block`` lies inside the kernel body ``top`` (in a nested region)."""
    from ptoc.dialects.reference import inside

    return hasattr(block, "parent_op") and inside(block, top)


def is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


def as_number(x: Any, fn: str, what: str = "the scalar") -> Number:
    """A Python int or float from a Python or numpy scalar (bools are refused)."""
    if not is_scalar(x):
        fail(f"{fn} expects a number as {what}, not {describe(x)}")
    return int(x) if isinstance(x, (int, np.integer)) else float(x)


def scalar_for(fn: str, dtype: DType, value: Any, what: str = "the scalar") -> Number:
    """``value`` checked to denote an element of ``dtype`` (floats round to nearest even;
    integers must be representable)."""
    v = as_number(value, fn, what)
    if dtype.datatype is None:
        fail(f"{fn}: a predicate tile has no scalar form", "select with pt.where(pred, a, b)")
    if dtype.is_int and isinstance(v, float) and v.is_integer() and math.isfinite(v):
        v = int(v)  # 2.0 on an integer tile means 2
    try:
        scalar_bits(dtype.datatype, v)
    except ValueError as e:
        fail(f"{fn}: {e}", f"give a value representable as {dtype.name}")
    return v


def legal_types(mnemonic: str) -> frozenset[DataType]:
    """The DataTypes the catalog row of ``mnemonic`` accepts."""
    return op(mnemonic).dtypes


def check_type(fn: str, mnemonic: str, dtype: DType, what: str = "tiles") -> None:
    """The catalog's DataType rule for ``mnemonic``, as a diagnostic listing the legal types."""
    legal = legal_types(mnemonic)
    if dtype.datatype is None:
        fail(
            f"{fn} does not accept pred tiles (comparison results)",
            "turn a predicate into numbers with pt.where(pred, 1.0, 0.0, dtype=ptoc.fp32)",
        )
    if dtype.datatype not in legal:
        fail(
            f"{fn} does not accept {dtype.name} {what}: {mnemonic} takes {type_list(legal)}",
            f"convert first, e.g. pt.cast(t, ptoc.{_closest(dtype, legal)})",
        )


def _closest(dtype: DType, legal: frozenset[DataType]) -> str:
    """A legal type of the same kind (float/int) to suggest in a hint."""
    same = [d for d in legal if dtype_of(d).is_float == dtype.is_float]
    pick = DataType.FP32 if DataType.FP32 in legal and dtype.is_float else None
    pick = pick or (sorted(same)[0] if same else sorted(legal)[0])
    return dtype_of(pick).name


def as_dtype(x: Any, fn: str, what: str = "dtype") -> DType:
    try:
        return dtype_of(x)
    except KeyError as e:
        fail(f"{fn}: {what} {e.args[0]}")


def as_shape(x: Any, fn: str, what: str = "shape") -> tuple[int, int]:
    if isinstance(x, int) and not isinstance(x, bool):
        x = (1, x)
    if (
        not isinstance(x, (tuple, list))
        or len(x) != 2
        or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in x)
    ):
        fail(f"{fn}: {what} is (rows, cols) of positive integers, not {x!r}")
    return (int(x[0]), int(x[1]))


def same_type(fn: str, a: Tile, b: Tile, what: str = "operands") -> None:
    if a.dtype != b.dtype:
        fail(
            f"{fn}: {what} have different element types {a.dtype.name} and {b.dtype.name}",
            f"convert one of them, e.g. pt.cast(t, ptoc.{a.dtype.name}); ptoc never converts "
            "implicitly (results are bit-exact)",
        )


def same_shape(fn: str, a: Tile, b: Tile, what: str = "operands") -> None:
    if a.shape != b.shape:
        fail(f"{fn}: {what} have different shapes {a.shape} and {b.shape}")
