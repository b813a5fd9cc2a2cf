"""Tensor loads and stores of the ``tile`` dialect.

A kernel is a ``func.func`` whose arguments are ``!tile.tensor`` GM buffers; its
``tile.pes`` attribute (default 1) says how many PEs run it. A load or store addresses
element ``[row + i * step + pe * pe_row, col + j + pe * pe_col]`` of the tensor for the
valid element ``(i, j)`` of the tile on PE ``pe``: ``step`` strides rows, ``pe`` offsets
split a tensor over the PEs (they become per-PE base addresses in the kernel ABI).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from ptoc.backend.isa import LegalizeRule, TileFamily

from .tile_base import RefEnv, TileOp, op_name, sole_row, tile_type
from .tile_types import TensorType, TileType

PES_ATTR = "tile.pes"


def kernel_pes(op: Operation) -> int:
    """The PE count of the kernel (``func.func`` attribute ``tile.pes``) enclosing ``op``."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        return 1
    attr = parent.attributes.get(PES_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 1


def _pair(attr: DenseArrayBase | None, default: tuple[int, int]) -> tuple[int, int]:
    if attr is None:
        return default
    a, b = attr.get_values()
    return (int(a), int(b))


class AccessOp(TileOp):
    """Shared addressing of ``tile.load`` and ``tile.store``."""

    offsets = prop_def(DenseArrayBase.constr(i64))
    step = opt_prop_def(IntegerAttr[I64])
    pe = opt_prop_def(DenseArrayBase.constr(i64))
    #: the axes (0 rows, 1 columns) whose start adds a run-time index (``indices``)
    dyn = opt_prop_def(DenseArrayBase.constr(i64))
    indices = var_operand_def(i64)

    TENSOR_INDEX: ClassVar[int] = 0

    @property
    def tensor(self) -> SSAValue:
        return self.operands[self.TENSOR_INDEX]

    @property
    def tile(self) -> TileType:
        raise NotImplementedError

    @property
    def origin(self) -> tuple[int, int]:
        return _pair(self.offsets, (0, 0))

    @property
    def row_step(self) -> int:
        return 1 if self.step is None else self.step.value.data

    @property
    def pe_offsets(self) -> tuple[int, int]:
        return _pair(self.pe, (0, 0))

    @property
    def dynamic_axes(self) -> tuple[int, ...]:
        """The axes whose start adds a run-time index, in ``indices`` order."""
        return () if self.dyn is None else tuple(int(a) for a in self.dyn.get_values())

    def index_of(self, axis: int) -> SSAValue | None:
        """The run-time index added to the start of ``axis`` (None: static)."""
        axes = self.dynamic_axes
        return self.indices[axes.index(axis)] if axis in axes else None

    def window(self, pe: int, shift: tuple[int, int] = (0, 0)) -> tuple[np.ndarray, slice]:
        """Tensor row indices and column slice of PE ``pe``'s valid elements; ``shift``
        is the value of the run-time (row, column) indices."""
        (r0, c0), (pr, pc) = self.origin, self.pe_offsets
        vr, vc = self.tile.valid
        rows = r0 + shift[0] + pe * pr + self.row_step * np.arange(vr)
        c = c0 + shift[1] + pe * pc
        return rows, slice(c, c + vc)

    def dynamic_window(self, env: RefEnv, pe: int) -> tuple[np.ndarray, slice]:
        """The window at the run-time indices' current values (``env.scalars``); a
        window they move out of the tensor is a :class:`WindowError`."""
        shift = [0, 0]
        for axis, v in zip(self.dynamic_axes, self.indices, strict=True):
            shift[axis] = int(env.scalars[v])
        rows, cols = self.window(pe, (shift[0], shift[1]))
        tt = self.tensor.type
        assert isinstance(tt, TensorType)
        if self.dynamic_axes and (
            rows[0] < 0 or cols.start < 0 or rows[-1] >= tt.dims[0] or cols.stop > tt.dims[1]
        ):
            on = f" on PE {pe}" if env.pes > 1 else ""
            raise WindowError(
                f"{self.name}: the window rows {rows[0]}..{rows[-1]}, cols "
                f"{cols.start}..{cols.stop - 1}{on} is outside the {tt.dims[0]}x{tt.dims[1]} "
                "tensor at these run-time indices"
            )
        return rows, cols

    def verify_access(self) -> None:
        t, tt = self.tile, self.tensor.type
        if not isinstance(tt, TensorType):
            raise VerifyException(f"{self.name} addresses a !tile.tensor")
        if len(self.offsets.get_values()) != 2 or (
            self.pe is not None and len(self.pe.get_values()) != 2
        ):
            raise VerifyException(f"{self.name} offsets are [row, col]")
        axes = self.dynamic_axes
        if (
            len(axes) != len(self.indices)
            or sorted(set(axes)) != list(axes)
            or any(a not in (0, 1) for a in axes)
        ):
            raise VerifyException(
                f"{self.name} names one run-time index per dynamic axis (0 rows, 1 columns)"
            )
        if t.dtype != tt.dtype:
            raise VerifyException(
                f"{self.name} tile DataType {t.dt.value} differs from the tensor's "
                f"{tt.dt.value}"
            )
        if self.row_step < 1 or min(*self.origin, *self.pe_offsets) < 0:
            raise VerifyException(f"{self.name} offsets, steps and PE offsets are nonnegative")
        rows, cols = tt.dims
        for pe in range(kernel_pes(self)):
            r, c = self.window(pe)  # run-time indices checked when they are known
            if r[-1] >= rows or c.stop > cols:
                raise VerifyException(
                    f"{self.name} on PE {pe} reaches element [{r[-1]}, {c.stop - 1}] outside "
                    f"the {rows}x{cols} tensor"
                )


@irdl_op_definition
class LoadOp(AccessOp):
    """``%t = tile.load %x[r, c] [step s] [pe [pr, pc]] [valid [axes](%n, ...)] : Tensor ->
    T``: the tile's valid elements from the tensor (TLOAD); ``valid [0](%n)`` reads only
    the first ``n`` rows of the window and ``valid [1](%m)`` only the first ``m`` columns
    (run-time integers, 1 <= n <= the tile's rows: a ragged tile,
    :mod:`ptoc.dialects.ragged`)."""

    MNEMONIC: ClassVar[str | None] = sole_row(
        TileFamily.ACCESS, legalize=LegalizeRule.LOAD
    ).mnemonic
    name = op_name(MNEMONIC)
    source = operand_def(TensorType)
    counts = var_operand_def(i64)
    #: the axes (0 rows, 1 columns) whose valid count is a run-time integer (``counts``)
    vaxes = opt_prop_def(DenseArrayBase.constr(i64))
    result = result_def(TileType)
    traits = traits_def(MemoryReadEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$source `` $offsets (`plus` $dyn^ `(` $indices `)`)? (`step` $step^)? (`pe` $pe^)? "
        "(`valid` $vaxes^ `(` $counts `)`)? attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue,
        offsets: Sequence[int],
        result_type: TileType,
        step: int = 1,
        pe: Sequence[int] | None = None,
        indices: Sequence[tuple[int, SSAValue]] = (),
        valid: Sequence[tuple[int, SSAValue]] = (),
    ) -> None:
        props = _access_props(offsets, step, pe, indices)
        if valid:
            props["vaxes"] = DenseArrayBase.from_list(i64, [a for a, _ in valid])
        super().__init__(
            operands=[source, [v for _, v in valid], [v for _, v in indices]],
            result_types=[result_type],
            properties=props,
        )

    @property
    def tile(self) -> TileType:
        return tile_type(self.result)

    @property
    def counted_axes(self) -> tuple[int, ...]:
        return () if self.vaxes is None else tuple(int(a) for a in self.vaxes.get_values())

    def valid_count(self, axis: int) -> SSAValue | None:
        """The run-time count of valid rows (0) or columns (1) read (None: all)."""
        axes = self.counted_axes
        return self.counts[axes.index(axis)] if axis in axes else None

    def verify_(self) -> None:
        self.check_dtype(self.tile.dtype)
        self.verify_access()
        axes = self.counted_axes
        if (
            len(axes) != len(self.counts)
            or sorted(set(axes)) != list(axes)
            or any(a not in (0, 1) for a in axes)
        ):
            raise VerifyException(f"{self.name} names one run-time count per valid axis")

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        data = env.tensors[self.source]
        out = np.stack([data[self.dynamic_window(env, p)] for p in range(env.pes)])
        for axis, v in zip(self.counted_axes, self.counts, strict=True):
            n, most = int(env.scalars[v]), out.shape[1 + axis]
            if not 1 <= n <= most:
                what = ("rows", "columns")[axis]
                raise WindowError(
                    f"{self.name}: {n} valid {what} is outside 1..{most} (the tile's {what})"
                )
            out = out[:, :n] if axis == 0 else out[:, :, :n]
        return (out,)


@irdl_op_definition
class StoreOp(AccessOp):
    """``tile.store %t, %x[r, c] [step s] [pe [pr, pc]] : T, Tensor``: write the tile's
    valid elements into the tensor (TSTORE)."""

    MNEMONIC: ClassVar[str | None] = sole_row(
        TileFamily.ACCESS, legalize=LegalizeRule.STORE
    ).mnemonic
    name = op_name(MNEMONIC)
    value = operand_def(TileType)
    dest = operand_def(TensorType)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $dest `` $offsets (`plus` $dyn^ `(` $indices `)`)? (`step` $step^)? "
        "(`pe` $pe^)? attr-dict `:` type($value) `,` type($dest)"
    )
    TENSOR_INDEX: ClassVar[int] = 1

    def __init__(
        self,
        value: SSAValue,
        dest: SSAValue,
        offsets: Sequence[int],
        step: int = 1,
        pe: Sequence[int] | None = None,
        indices: Sequence[tuple[int, SSAValue]] = (),
    ) -> None:
        super().__init__(
            operands=[value, dest, [v for _, v in indices]],
            properties=_access_props(offsets, step, pe, indices),
        )

    @property
    def tile(self) -> TileType:
        return tile_type(self.value)

    def verify_(self) -> None:
        self.check_dtype(self.tile.dtype)
        self.verify_access()

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        data = env.tensors[self.dest]
        windows = [self.dynamic_window(env, p) for p in range(env.pes)]
        n, m = args[0].shape[1:]  # the valid region (smaller than the tile's: ragged)
        for p in range(env.pes):  # PEs write in increasing order (one bundle, all PEs)
            rows, cols = windows[p]
            data[rows[:n], cols.start : cols.start + m] = args[0][p]
        return ()


@irdl_op_definition
class PrefetchOp(AccessOp):
    """``tile.prefetch %x[r, c] window [R, C] [step s] [pe [pr, pc]] : Tensor``: prefetch
    the GM window a ``tile.load`` of an R x C tile would read (TPREFETCH). It produces
    nothing and changes nothing a kernel can observe (cache placement is not
    architectural), so its reference does nothing; it is kept, not dead code."""

    MNEMONIC: ClassVar[str | None] = sole_row(
        TileFamily.ACCESS, legalize=LegalizeRule.PREFETCH
    ).mnemonic
    name = op_name(MNEMONIC)
    source = operand_def(TensorType)
    extent = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(MemoryReadEffect())
    assembly_format = (
        "$source `` $offsets (`plus` $dyn^ `(` $indices `)`)? `window` $extent "
        "(`step` $step^)? (`pe` $pe^)? attr-dict `:` type($source)"
    )

    def __init__(
        self,
        source: SSAValue,
        offsets: Sequence[int],
        window: Sequence[int],
        step: int = 1,
        pe: Sequence[int] | None = None,
    ) -> None:
        props = _access_props(offsets, step, pe)
        props["extent"] = DenseArrayBase.from_list(i64, list(window))
        super().__init__(operands=[source, []], properties=props)

    @property
    def tile(self) -> TileType:
        """The tile a ``tile.load`` of the window would produce."""
        rows, cols = (int(v) for v in self.extent.get_values())
        tt = self.source.type
        assert isinstance(tt, TensorType)
        return TileType(tt.dtype, (rows, cols))

    def verify_(self) -> None:
        window = self.extent.get_values()
        if len(window) != 2 or min(window) < 1:
            raise VerifyException(f"{self.name} window is [rows, cols], both positive")
        self.check_dtype(self.tile.dtype)
        self.verify_access()

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return ()


def _access_props(
    offsets: Sequence[int],
    step: int,
    pe: Sequence[int] | None,
    indices: Sequence[tuple[int, SSAValue]] = (),
) -> dict[str, DenseArrayBase | IntegerAttr | None]:
    return {
        "offsets": DenseArrayBase.from_list(i64, list(offsets)),
        "step": None if step == 1 else IntegerAttr(step, i64),
        "pe": None if pe is None or tuple(pe) == (0, 0) else DenseArrayBase.from_list(i64, pe),
        "dyn": DenseArrayBase.from_list(i64, [a for a, _ in indices]) if indices else None,
    }


class WindowError(Exception):
    """A load or store window that its run-time indices move out of its tensor."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


MEMORY_OPS: tuple[type[TileOp], ...] = (LoadOp, StoreOp, PrefetchOp)
