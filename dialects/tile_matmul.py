"""``tile.matmul``: the CUBE matrix product of two tiles (TMATMUL, TMATMUL_ACC,
TMATMUL_BIAS, TGEMV and its forms; DECISIONS D11).

::

    %d = tile.matmul [mx] %a, %b [acc %c] [bias %bias] [scale_a %sa] [scale_b %sb] [relu]
        [via %scratch] : !tile.tile<FP16, 40x96>, !tile.tile<FP16, 96x24> [acc Tc]
        [bias Tbias] [scale_a Tsa] [scale_b Tsb] [via !tile.tensor<U8, PxS>]
        -> !tile.tile<FP32, 40x24>

``a`` is M x K, ``b`` K x N, the result M x N in the accumulator type of the pair
(``TileOrdinaryMatrixAccumulatorType``: FP32 for floating inputs, S32 signed, U32
unsigned); ``acc`` is an M x N tile of that type the fold starts from, ``bias`` a 1 x N
row of it added after the fold, ``relu`` clamps negatives (and -0) to +0 after the bias.

Reference semantics (D11 over the whole logical shape, written from the decision, not
from the lowering): every element [m, n] starts at ``acc[m, n]`` (or +0) and folds
k = 0 .. K-1 in increasing order with one rounding per step, then adds the bias with
one more rounding, then applies ReLU as B.FPATR ReluMode 1 does
(:func:`.matmul_d11.d11_matmul`, written from D11 apart from the executor's
``semantics.matmul``, so that verification compares two accounts of the numerics).
By D11 a K-chunked lowering that chains chunks through TMATMUL_ACC gives the same bits.

``mx`` makes it the MX product (TMATMUL_MX and its forms): A and B are FP16, BF16, E4M3 or
E5M2 (any two), the result FP32, and each FP8 side has its E8M0 scales (``scale_a``
M x ceil(K/32), ``scale_b`` ceil(K/32) x N): every product is multiplied by the exact
powers of two of its row's and column's K block before it enters the fold
(``TileProfileMatrixScaledAccumulate``).

The operands are ordinary row-major tiles (loaded, or results of vector ops); the CUBE
operand classes (CUBE_M16/M32 for A, C and D, CUBE_N8 for B) are a ``legalize`` concern.
Since no TMOV converts into or out of a CUBE layout, the lowering moves operands through
GM: ``via %scratch`` names the per-PE scratch tensor (``lower-compound`` attaches it, as
for ``tile.view``), one row per PE holding the regions of :func:`scratch_regions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from ptoc.backend.isa import DataType, TileFamily, info
from ptoc.backend.isa.semantics import matmul as sm

from .dtypes import data_type, dtype_attr, element_bits, is_pred
from .matmul_d11 import d11_matmul
from .tile_base import RefEnv, RuleError, TileOp, op_name, sole_row, tile_type
from .tile_memory import LoadOp, StoreOp
from .tile_types import TensorType, TileType


def legal_pairs_text() -> str:
    """The legal (A, B) DataType combinations of ``tile.matmul``, for diagnostics
    (``TileOrdinaryMatrixInputTypesSameClass``: both of one class; the packed 4-bit
    inputs are not supported by the op)."""
    by: dict[str, list[str]] = {"float": [], "signed": [], "unsigned": []}
    for d in sorted(sm.MATRIX_INPUT_TYPES, key=int):
        if info(d).bits < 8:
            continue
        by[sm.type_class(d)].append(d.name)
    acc = {"float": "FP32", "signed": "S32", "unsigned": "U32"}
    return "; ".join(f"any two of {', '.join(v)} -> {acc[k]}" for k, v in by.items() if v)


def result_dtype(a: DataType, b: DataType, mx: bool = False) -> DataType:
    """The accumulator (and result) DataType of an A x B pair; RuleError-free callers
    check :func:`pair_rule` first."""
    return sm.accumulator_type(a, b, mx)


def mx_types_text() -> str:
    """The MX input types of ``tile.matmul`` (``TileMXInputTypeSupported`` without the
    packed 4-bit ones) and which take a scale."""
    types = sorted((d for d in sm.MX_INPUT_TYPES if info(d).bits >= 8), key=int)
    scaled = [d.name for d in types if sm.needs_scale(d)]
    return (
        f"any two of {', '.join(d.name for d in types)} -> FP32; {', '.join(scaled)} "
        "sides take an E8M0 scale per 32 K elements"
    )


def pair_rule(a: DataType, b: DataType, mx: bool = False) -> str | None:
    """Why ``a x b`` is no legal CUBE matrix pair, naming the legal ones (None: legal)."""
    if sm.pair_legal(a, b, mx):
        return None
    if mx:
        return (
            f"{a.name} x {b.name} is not a legal MX matrix pair (TileMXOperandPairLegal: "
            f"{mx_types_text()})"
        )
    return (
        f"{a.name} x {b.name} is not a legal CUBE matrix pair "
        f"(TileOrdinaryMatrixInputTypesSameClass: {legal_pairs_text()})"
    )


@dataclass(frozen=True)
class Regions:
    """Byte offsets of the scratch regions of one matmul in a PE's scratch row (-1: the
    operand does not pass through the scratch) and the bytes they take."""

    a: int
    b: int
    acc: int
    bias: int
    d: int
    a_scale: int
    b_scale: int
    nbytes: int


def _bytes(t: TileType) -> int:
    return t.valid[0] * t.valid[1] * element_bits(t.dtype) // 8


def scratch_regions(
    a: TileType, b: TileType, acc: TileType | None, bias: TileType | None, d: TileType,
    direct: Sequence[bool] = (False, False, False, False),
    a_scale: TileType | None = None, b_scale: TileType | None = None,
) -> Regions:  # fmt: skip
    """The dense row-major images the lowering stores: A (M x K), B (K x N), the
    accumulator (M x N), the bias (1 x N), D (M x N) and the MX scales, 64-byte aligned
    one after the other; ``direct``: A / B / A scale / B scale are read straight from
    their tensor (no region)."""
    out = []
    at = 0
    for t, skip in ((a, direct[0]), (b, direct[1]), (acc, False), (bias, False), (d, False),
                    (a_scale, direct[2]), (b_scale, direct[3])):  # fmt: skip
        if t is None or skip:
            out.append(-1)
            continue
        out.append(at)
        at += (_bytes(t) + 63) // 64 * 64
    return Regions(*out, nbytes=at)


@irdl_op_definition
class MatmulOp(TileOp):
    """``tile.matmul``: D11 matrix product of row-major tiles (see the module)."""

    MNEMONIC: ClassVar[str | None] = sole_row(TileFamily.MATMUL).mnemonic
    name = op_name(MNEMONIC)
    a = operand_def(TileType)
    b = operand_def(TileType)
    acc = opt_operand_def(TileType)
    bias = opt_operand_def(TileType)
    a_scale = opt_operand_def(TileType)
    b_scale = opt_operand_def(TileType)
    scratch = opt_operand_def(TensorType)
    relu = opt_prop_def(UnitAttr)
    mx = opt_prop_def(UnitAttr)
    result = result_def(TileType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "(`mx` $mx^)? $a `,` $b (`acc` $acc^)? (`bias` $bias^)? (`scale_a` $a_scale^)? "
        "(`scale_b` $b_scale^)? (`relu` $relu^)? (`via` $scratch^)? "
        "attr-dict `:` type($a) `,` type($b) (`acc` type($acc)^)? "
        "(`bias` type($bias)^)? (`scale_a` type($a_scale)^)? "
        "(`scale_b` type($b_scale)^)? (`via` type($scratch)^)? `->` type($result)"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        acc: SSAValue | None = None,
        bias: SSAValue | None = None,
        relu: bool = False,
        scratch: SSAValue | None = None,
        result_type: TileType | None = None,
        *,
        mx: bool = False,
        a_scale: SSAValue | None = None,
        b_scale: SSAValue | None = None,
    ) -> None:
        if result_type is None:
            ta, tb = tile_type(a), tile_type(b)
            dt = result_dtype(data_type(ta.dtype), data_type(tb.dtype), mx)
            result_type = TileType(dtype_attr(dt.name), (ta.valid[0], tb.valid[1]))

        def opt(v: SSAValue | None) -> list[SSAValue]:
            return [] if v is None else [v]

        super().__init__(
            operands=[a, b, opt(acc), opt(bias), opt(a_scale), opt(b_scale), opt(scratch)],
            result_types=[result_type],
            properties={"relu": UnitAttr() if relu else None,
                        "mx": UnitAttr() if mx else None},
        )  # fmt: skip

    def with_scratch(self, scratch: SSAValue) -> MatmulOp:
        """The same op reading its operands through ``scratch``."""
        return MatmulOp(self.a, self.b, self.acc, self.bias, self.relu is not None, scratch,
                        self.result.type, mx=self.is_mx, a_scale=self.a_scale,
                        b_scale=self.b_scale)  # type: ignore[arg-type]  # fmt: skip

    @property
    def is_mx(self) -> bool:
        """An MX product (TMATMUL_MX and its forms): E8M0 block scales along K."""
        return self.mx is not None

    # ---------------------------------------------------------------- facts

    @property
    def a_type(self) -> DataType:
        return data_type(tile_type(self.a).dtype)

    @property
    def b_type(self) -> DataType:
        return data_type(tile_type(self.b).dtype)

    @property
    def acc_type(self) -> DataType:
        return data_type(tile_type(self.result).dtype)

    @property
    def mnk(self) -> tuple[int, int, int]:
        (m, k), (_, n) = tile_type(self.a).valid, tile_type(self.b).valid
        return m, n, k

    def direct_operands(self) -> tuple[bool, bool, bool, bool]:
        """Whether A / B / A scale / B scale can be read straight from their tensor: the
        operand is a ``tile.load`` at a compile-time window (a run-time index moves the
        window: its image goes through the scratch area) of a tensor the kernel never
        stores to (so reading it later, at the matmul, reads the same bytes)."""
        f = self.parent_op()
        while f is not None and not isinstance(f, func.FuncOp):
            f = f.parent_op()
        stored = set() if f is None else {o.dest for o in f.walk() if isinstance(o, StoreOp)}
        return tuple(  # type: ignore[return-value]
            v is not None
            and isinstance(v.owner, LoadOp)
            and not v.owner.dynamic_axes
            and v.owner.tensor not in stored
            for v in (self.a, self.b, self.a_scale, self.b_scale)
        )

    def reads_directly(self, v: SSAValue) -> bool:
        """Whether this op reads ``v`` (one of its operands) straight from its tensor."""
        operands = (self.a, self.b, self.a_scale, self.b_scale)
        return any(o is v and d for o, d in zip(operands, self.direct_operands(), strict=True))

    def scratch_layout(self) -> Regions:
        """The scratch regions of this op (see :func:`scratch_regions`)."""
        direct = self.direct_operands()
        return scratch_regions(
            tile_type(self.a), tile_type(self.b),
            None if self.acc is None else tile_type(self.acc),
            None if self.bias is None else tile_type(self.bias),
            tile_type(self.result), direct,
            None if self.a_scale is None else tile_type(self.a_scale),
            None if self.b_scale is None else tile_type(self.b_scale),
        )  # fmt: skip

    # ---------------------------------------------------------------- verifier

    def _rule(self, text: str) -> RuleError:
        return RuleError(self.name, text)

    def verify_(self) -> None:
        ta, tb, tr = tile_type(self.a), tile_type(self.b), tile_type(self.result)
        self.check_row_major(ta, tb, tr)
        for t, what in ((ta, "a"), (tb, "b"), (tr, "result")):
            if is_pred(t.dtype):
                raise self._rule(f"{what} cannot be a predicate tile")
        at, bt = self.a_type, self.b_type
        rule = pair_rule(at, bt, self.is_mx)
        if rule is not None:
            raise self._rule(rule)
        want = result_dtype(at, bt, self.is_mx)
        if self.acc_type != want:
            raise self._rule(
                f"the result of {at.name} x {bt.name} is {want.name} (the accumulator type, "
                f"TileOrdinaryMatrixAccumulatorType), not {self.acc_type.name}"
            )
        if info(at).bits < 8 or info(bt).bits < 8:
            raise self._rule("packed 4-bit matrix inputs are not supported by tile.matmul")
        (m, k), (k2, n) = ta.valid, tb.valid
        if k != k2:
            raise self._rule(f"a is {m}x{k} and b is {k2}x{n}: the inner dimensions differ")
        if tr.valid != (m, n):
            raise self._rule(f"the result of {m}x{k} @ {k}x{n} is {m}x{n}, not {tr.valid}")
        for v, what, shape in ((self.acc, "acc", (m, n)), (self.bias, "bias", (1, n))):
            if v is None:
                continue
            t = tile_type(v)
            self.check_row_major(t)
            if data_type(t.dtype) != want or t.valid != shape:
                raise self._rule(
                    f"{what} must be a {shape[0]}x{shape[1]} {want.name} tile, not {t}"
                )
        self._verify_scales(m, n, k)
        if self.scratch is not None:
            tt = self.scratch.type
            assert isinstance(tt, TensorType)
            if tt.dt.value != "U8":
                raise self._rule(f"the scratch tensor is U8, not {tt}")

    def _verify_scales(self, m: int, n: int, k: int) -> None:
        """MX: an E8M0 scale per 32 K elements for each FP8 side
        (``TileMXInputTypeNeedsScale``): A's M x ceil(K/32), B's ceil(K/32) x N;
        ordinary products take none."""
        blocks = sm.scale_blocks(k)
        for v, dt, what, shape in ((self.a_scale, self.a_type, "a", (m, blocks)),
                                   (self.b_scale, self.b_type, "b", (blocks, n))):  # fmt: skip
            need = sm.needs_scale(dt, self.is_mx)
            if v is None:
                if need:
                    raise self._rule(f"an MX {dt.name} {what} needs its E8M0 scales")
                continue
            if not need:
                raise self._rule(
                    f"{what} ({dt.name}{'' if self.is_mx else ', not MX'}) takes no scales"
                )
            t = tile_type(v)
            self.check_row_major(t)
            if t.dt.value != "E8M0" or t.valid != shape:
                raise self._rule(
                    f"the scales of {what} must be a {shape[0]}x{shape[1]} E8M0 tile "
                    f"(one per 32 K elements), not {t}"
                )

    def _args(
        self, args: Sequence[np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray | None]]:
        rest = list(args[2:])
        kw: dict[str, np.ndarray | None] = {}
        for name in ("acc", "bias", "a_scale", "b_scale"):
            kw[name] = rest.pop(0) if getattr(self, name) is not None else None
        return args[0], args[1], kw

    # ---------------------------------------------------------------- reference

    def _per_pe(self, args: Sequence[np.ndarray]) -> list[tuple[np.ndarray, int]]:
        a, b, kw = self._args(args)
        return [
            d11_matmul(a[p], self.a_type, b[p], self.b_type, mx=self.is_mx,
                       relu=self.relu is not None,
                       **{k: None if v is None else v[p] for k, v in kw.items()})
            for p in range(a.shape[0])
        ]  # fmt: skip

    def reference(self, env: RefEnv, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        return (np.stack([d for d, _ in self._per_pe(args)]),)

    def reference_status(self, args: Sequence[np.ndarray]) -> np.ndarray:
        """The D11 status bits (NV, DZ, OF, UF, NX) of each PE, as the reference sees it."""
        return np.array([st for _, st in self._per_pe(args)], np.int64)


#: what the dialect registers from this module
MATMUL_OPS: tuple[type[TileOp], ...] = (MatmulOp,)


def only_read_directly(v: SSAValue) -> bool:
    """Whether every reader of tile value ``v`` is a ``tile.matmul`` that reads it straight
    from its tensor: the load then has no tile of its own (its rows may be wider than
    any tile), the CUBE loads read its window chunk by chunk."""
    uses = list(v.uses)
    return bool(uses) and all(
        isinstance(u.operation, MatmulOp) and u.operation.reads_directly(v) for u in uses
    )
