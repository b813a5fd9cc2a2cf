"""The types the executable ASL predicates admit (DECISIONS D9) run on the executor, with
the numerics D9 states, pinned on hand-computed values; the types they reject fault
before any effect.

The property coverage of every (operation, DataType) pair lives in test_differential.py
(its tables read the catalog); these are the named cases: FP64 binary64, E4M3 without
infinities (beyond 448 it is NaN with OF and NX), S64/U64 wrap, TNEG of unsigned and TABS
of the most negative value wrap.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from ptoc.runtime import TileLegalityFault

from ._progs import DZ, NV, NX, OF, UF, D, Rig, block, dim_lines, iot, p2, smallest_size


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


E4M3_NAN = 0x7F
E4M3_ONE, E4M3_MAX, E4M3_256, E4M3_TWO = 0x38, 0x7E, 0x78, 0x40
PES = 4


def run(op: str, dt: D, *operands: list[int], scalar: int | None = None) -> tuple:
    """Run ``op`` at ``dt`` on one-row operands (the same on every PE): (bits, status)."""
    rig = Rig()
    cols = len(operands[0])
    col = p2(cols)
    size = smallest_size(dt, 1, col)
    text = "".join(rig.load(np.array([o], np.uint64), dt, col=col) for o in operands)
    srcs = [f"T#{len(operands) - i}" for i in range(len(operands))]
    extra = ""
    if scalar is not None:
        for pe in range(PES):
            rig.m.set_gpr("a4", scalar, pe=pe)
        extra = "B.IOR a4"
    if op == "TFMA":
        binds = [iot(srcs[0], srcs[1], last=False), iot(srcs[2], dst="U", size=size)]
    else:
        binds = [iot(*srcs, dst="U", size=size)]
    dims = dim_lines(cols, None, col if col != cols else None)
    rig.run(text + block(op, dt, dims, *binds, extra))
    return rig.bits()[0, 0].tolist(), rig.status()


def test_tmax_tmin_fp64() -> None:
    a = [f64(1.5), f64(0.0), f64(-0.0), f64(float("nan")), f64(-3.0)]
    b = [f64(-2.0), f64(-0.0), f64(0.0), f64(2.0), f64(float("-inf"))]
    assert run("TMAX", D.FP64, a, b) == (
        [f64(1.5), f64(0.0), f64(0.0), f64(2.0), f64(-3.0)],
        [0] * PES,
    )
    assert run("TMIN", D.FP64, a, b)[0] == [
        f64(-2.0), f64(-0.0), f64(-0.0), f64(2.0), f64(float("-inf")),
    ]  # fmt: skip


def test_tmax_signalling_nan_fp64_sets_nv() -> None:
    snan = 0x7FF0000000000001
    assert run("TMAX", D.FP64, [snan], [f64(1.0)]) == ([f64(1.0)], [NV] * PES)


def test_tneg_unsigned_wraps() -> None:
    assert run("TNEG", D.U16, [0, 1, 0x8000, 0xFFFF])[0] == [0, 0xFFFF, 0x8000, 1]
    assert run("TNEG", D.U64, [1, 1 << 63])[0] == [(1 << 64) - 1, 1 << 63]


def test_tabs_of_the_most_negative_value_wraps() -> None:
    assert run("TABS", D.S8, [0x80, 0xFF, 0x00, 0x7F])[0] == [0x80, 0x01, 0x00, 0x7F]
    assert run("TABS", D.S64, [1 << 63, (1 << 64) - 5])[0] == [1 << 63, 5]
    assert run("TABS", D.U8, [0xFF, 0x80])[0] == [0xFF, 0x80]  # unsigned: unchanged


def test_trelu_integers() -> None:
    assert run("TRELU", D.S16, [0x8000, 0xFFFF, 5, 0])[0] == [0, 0, 5, 0]
    assert run("TRELU", D.U32, [0xFFFFFFFF, 0])[0] == [0xFFFFFFFF, 0]


def test_s64_u64_arithmetic_wraps() -> None:
    big = 1 << 62
    assert run("TMUL", D.S64, [big, 3], [4, (1 << 64) - 1])[0] == [0, (1 << 64) - 3]
    assert run("TSUB", D.U64, [0], [1])[0] == [(1 << 64) - 1]
    # INT64_MIN / -1 wraps to INT64_MIN; signed TREM takes the divisor's sign
    assert run("TDIV", D.S64, [1 << 63, 7], [(1 << 64) - 1, 2])[0] == [1 << 63, 3]
    assert run("TREM", D.S64, [(1 << 64) - 7], [2])[0] == [1]
    assert run("TREM", D.U64, [(1 << 64) - 1], [10])[0] == [((1 << 64) - 1) % 10]
    assert run("TMAX", D.U64, [1 << 63], [1])[0] == [1 << 63]  # unsigned ordering
    assert run("TMAX", D.S64, [1 << 63], [1])[0] == [1]  # signed ordering


def test_integer_zero_divisor_at_64_bits_is_illegal() -> None:
    rig = Rig()
    text = rig.load(np.array([[7]], np.uint64), D.S64, col=2)
    rig.run(text + rig.load(np.array([[0]], np.uint64), D.S64, col=2))
    dims = dim_lines(1, None, 2)
    f = rig.fault(
        block("TREM", D.S64, dims, iot("T#2", "T#1", dst="U", size=1)), TileLegalityFault
    )
    assert "zero divisor" in f.rule


def test_s8_u8_products_wrap() -> None:
    assert run("TMUL", D.U8, [16, 255], [16, 255])[0] == [0, 1]
    assert run("TMUL", D.S8, [0x80], [0xFF])[0] == [0x80]  # -128 * -1 = -128
    assert run("TMULS", D.U8, [200], scalar=2)[0] == [144]


def test_tfma_integers_wrap() -> None:
    assert run("TFMA", D.U8, [16, 3], [16, 5], [1, 250])[0] == [1, 9]
    assert run("TFMA", D.S32, [0x7FFFFFFF], [2], [2])[0] == [0]


def test_texp_fp64_is_correctly_rounded() -> None:
    """exp(1) is e rounded once (0x4005BF0A8B145769); exp(-Inf) = +0; exp(710)
    overflows; exp(-746) underflows to +0; exp(1e-300) rounds to 1 with NX only."""
    got, st = run("TEXP", D.FP64, [f64(1.0), f64(float("-inf")), f64(1e-300)])
    assert got == [0x4005BF0A8B145769, 0, f64(1.0)] and st == [NX] * PES
    got, st = run("TEXP", D.FP64, [f64(710.0)])
    assert got == [f64(float("inf"))] and st == [OF | NX] * PES
    got, st = run("TEXP", D.FP64, [f64(-746.0)])
    assert got == [0] and st == [UF | NX] * PES


def test_tlog_tsqrt_trsqrt_fp64() -> None:
    got, st = run("TLOG", D.FP64, [f64(2.0), f64(1.0)])
    assert got == [0x3FE62E42FEFA39EF, 0] and st == [NX] * PES  # ln 2 rounded once
    assert run("TSQRT", D.FP64, [f64(2.0)])[0] == [0x3FF6A09E667F3BCD]
    assert run("TRSQRT", D.FP64, [f64(4.0)]) == ([f64(0.5)], [0] * PES)
    # 1/sqrt(2) rounded once is 0x3FE6A09E667F3BCD; 1/fl(sqrt(2)) would be ...BCC
    assert run("TRSQRT", D.FP64, [f64(2.0)])[0] == [0x3FE6A09E667F3BCD]


def test_e4m3_has_no_infinity() -> None:
    """Beyond 448 an E4M3 result is its NaN with OF and NX (D9); log, recip and rsqrt of
    zero give the NaN with DZ only (TileFloatingUnaryUnboundedResult)."""
    got, st = run("TMUL", D.E4M3, [E4M3_256], [E4M3_TWO])
    assert got == [E4M3_NAN] and st == [OF | NX] * PES
    got, st = run("TADD", D.E4M3, [E4M3_MAX], [E4M3_MAX])
    assert got == [E4M3_NAN] and st == [OF | NX] * PES
    for op in ("TLOG", "TRECIP", "TRSQRT"):
        got, st = run(op, D.E4M3, [0x00])
        assert got == [E4M3_NAN] and st == [DZ] * PES, op
    assert run("TEXP", D.E4M3, [0x00]) == ([E4M3_ONE], [0] * PES)


def test_e5m2_has_infinities() -> None:
    e5m2_max, e5m2_inf = 0x7B, 0x7C
    got, st = run("TADD", D.E5M2, [e5m2_max], [e5m2_max])
    assert got == [e5m2_inf] and st == [OF | NX] * PES
    got, st = run("TRECIP", D.E5M2, [0x80])  # -0
    assert got == [0xFC] and st == [DZ] * PES


def test_tcmp_u64_orders_unsigned() -> None:
    rig = Rig()
    a = np.array([[1 << 63, 1, 5]], np.uint64)
    b = np.array([[1, 1 << 63, 5]], np.uint64)
    text = rig.load(a, D.U64, col=4) + rig.load(b, D.U64, col=4)
    datr = "B.DATR {NORM, FP64, Null, GT, Default, 0, 0}"
    dims = dim_lines(3, None, 4)
    rig.run(text + block("TCMP", D.U64, datr, dims, iot("T#2", "T#1", dst="M", size=1)))
    assert rig.bits("M#1")[0, 0].tolist() == [True, False, False]


def test_tcolprod_u8_wraps() -> None:
    rig = Rig()
    a = np.array([[16, 3], [16, 5]], np.uint64)
    text = rig.load(a, D.U8, col=64)
    rig.run(text + block("TCOLPROD", D.U8, dim_lines(2, 2, 64), iot("T#1", dst="U", size=1)))
    assert rig.bits()[0, 0].tolist() == [0, 15]


def test_tpartmul_s8() -> None:
    rig = Rig()
    a = np.array([[0x80, 2, 3]], np.uint64)
    b = np.array([[0xFF]], np.uint64)
    text = rig.load(a, D.S8, col=128) + rig.load(b, D.S8, col=128)
    dims = dim_lines(3, None, 128)
    rig.run(text + block("TPARTMUL", D.S8, dims, iot("T#2", "T#1", dst="U", size=1)))
    assert rig.bits()[0, 0].tolist() == [0x80, 2, 3]


#: a binding stream of the right shape for each operation below (the type check
#: comes before any source is looked up)
_BINDS = {
    "TSEL": (iot("T#1", "T#1", last=False), iot("T#1", dst="U", size=1)),
    "TSELS": (iot("T#1", "T#1", dst="U", size=1),),
    "TAND": (iot("T#1", "T#1", dst="U", size=1),),
}


@pytest.mark.parametrize(
    ("op", "dt"),
    [
        # narrowed by the ASL predicates (D9): TileSelectDataTypeSupported,
        # TileFillPadDataTypeSupported
        ("TSEL", D.HiF8),
        ("TSEL", D.E8M0),
        ("TSELS", D.E3M2),
        ("TFILLPAD", D.E8M0),
        ("TFILLPAD", D.HiF8),
        ("TFILLPAD", D.FP64),
        # never admitted
        ("TAND", D.FP64),
        ("TEXP", D.S32),
        ("TEXP", D.HiF8),
    ],
)
def test_types_the_asl_rejects_fault_before_any_effect(op: str, dt: D) -> None:
    rig = Rig()
    rig.run(rig.load(np.zeros((1, 8), np.uint64), dt, col=128))
    binds = _BINDS.get(op, (iot("T#1", dst="U", size=1),))
    f = rig.fault(block(op, dt, dim_lines(8, None, 128), *binds))
    assert isinstance(f, TileLegalityFault) and dt.name in f.rule, f
