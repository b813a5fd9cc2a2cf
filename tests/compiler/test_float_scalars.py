"""Run-time FP32 scalar parameters (``ptoc.Scalar[ptoc.fp32]``): the register of the ABI
holds the value's FP32 bits and tile-scalar bundles read it (TMULS, TADDS, TMAXS, ...);
the reference and the machine agree bit for bit for every value, special ones included,
in straight-line kernels and in loops, and misuse is a located error."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.errors import InputError, KernelError

TINY = ptoc.MachineConfig(depth=4, capacity=16384)
F32 = ptoc.fp32
T = ptoc.Tensor[F32, 16, 64]
S = ptoc.Scalar[F32]

#: FP32 bit patterns across the binades: NaN payloads, +-0, +-inf, subnormals, the top
#: binade, ties and values below 1
_SPECIAL = np.array(
    [0x7FC00001, 0xFFC12345, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001,
     0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFE, 0x3FC00000, 0x40200000, 0x3E800000],
    np.uint32,
).view(np.float32)  # fmt: skip


@ptoc.kernel
def affine(x: T, y: T, out: T, alpha: S, beta: S):
    t = pt.load(x) * alpha + pt.load(y)  # TMULS, TADD
    pt.store(out, pt.minimum(pt.maximum(t, beta), alpha) - beta)  # TMAXS, TMINS, TSUBS


@ptoc.kernel
def scaled_rows(x: ptoc.Tensor[F32, 64, 64], out: ptoc.Tensor[F32, 64, 64], alpha: S,
                n: ptoc.Scalar[ptoc.s32]):  # fmt: skip
    for r in pt.range(0, n, 16):
        pt.store(out, pt.load(x, rows=(r, 16)) / alpha, rows=(r, 16))


def _x(seed: int, shape=(16, 64), wild: bool = True) -> np.ndarray:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if wild:
        mask = rng.random(shape) < 0.25
        x[mask] = rng.choice(_SPECIAL, int(mask.sum()))
    return x


_PROGRAMS: dict[bool, ptoc.Program] = {}


def _affine(tiny: bool) -> ptoc.Program:
    if tiny not in _PROGRAMS:
        _PROGRAMS[tiny] = ptoc.compile(affine, TINY if tiny else None)
    return _PROGRAMS[tiny]


@pytest.mark.parametrize("tiny", [False, True])
def test_a_scalar_parameter_is_the_scalar_operand(tiny: bool) -> None:
    x, y = _x(0, wild=False), _x(1, wild=False)
    got = ptoc.verify(_affine(tiny), x=x, y=y, alpha=2.5, beta=-0.75)["out"]
    a, b = np.float32(2.5), np.float32(-0.75)
    want = np.minimum(np.maximum(x * a + y, b), a) - b
    assert np.array_equal(got, want)


@examples(20)
@given(
    a=st.sampled_from(list(_SPECIAL)) | st.floats(width=32, allow_nan=False),
    b=st.sampled_from(list(_SPECIAL)) | st.floats(width=32),
    seed=st.integers(0, 2**16),
)
def test_special_scalars_and_data_agree_with_the_reference(
    a: float, b: float, seed: int
) -> None:
    """verify compares payload bits and definedness of every element; NaN payloads,
    signed zeros, infinities and subnormals as the scalar and in the data."""
    ptoc.verify(_affine(seed % 2 == 1), x=_x(seed), y=_x(seed + 1), alpha=a, beta=b)


def test_the_parameter_carries_the_fp32_bits() -> None:
    """A NaN's payload and the sign of zero reach the register unchanged."""
    x = np.ones((16, 64), np.float32)
    nan = np.array([0x7FC12345], np.uint32).view(np.float32)[0]
    got = ptoc.run(_affine(False), x=x, y=x * 0, alpha=nan, beta=-0.0)["out"]
    want = ptoc.reference(affine, x=x, y=x * 0, alpha=nan, beta=-0.0)["out"]
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("machine", [None, TINY])
def test_a_scalar_parameter_inside_a_run_time_loop(machine) -> None:  # type: ignore[no-untyped-def]
    x = _x(4, (64, 64), wild=False)
    got = ptoc.verify(ptoc.compile(scaled_rows, machine), x=x, alpha=-3.0, n=48)["out"]
    assert np.array_equal(got[:48], x[:48] / np.float32(-3.0)) and not got[48:].any()


def test_a_value_is_rounded_to_fp32_once() -> None:
    x = np.ones((16, 64), np.float32)
    got = ptoc.run(_affine(False), x=x, y=x * 0, alpha=0.1, beta=-1.0)["out"]
    assert got[0, 0] == np.float32(0.1) + np.float32(1.0)


def _error(kernel) -> KernelError:  # type: ignore[no-untyped-def]
    with pytest.raises(KernelError) as e:
        ptoc.compile(kernel)
    return e.value


def test_the_tile_must_have_the_scalars_type() -> None:
    @ptoc.kernel
    def half(x: ptoc.Tensor[ptoc.fp16, 16, 64], out: ptoc.Tensor[ptoc.fp16, 16, 64], a: S):
        pt.store(out, pt.load(x) * a)

    e = _error(half)
    assert "the run-time scalar is fp32 and the tile fp16" in str(e)
    assert e.loc is not None and "pt.cast" in (e.hint or "")


def test_a_scalar_on_the_left_of_a_subtraction_is_refused() -> None:
    @ptoc.kernel
    def reversed_sub(x: T, out: T, a: S):
        pt.store(out, a - pt.load(x))

    assert "left operand of a non-commutative operation" in str(_error(reversed_sub))


def test_a_float_scalar_has_no_trace_time_value() -> None:
    @ptoc.kernel
    def branch(x: T, out: T, a: S):
        if a:
            pt.store(out, pt.load(x))

    assert "has no value at trace time" in str(_error(branch))


def test_a_float_scalar_is_not_a_loop_bound() -> None:
    @ptoc.kernel
    def bound(x: T, out: T, a: S):
        for r in pt.range(0, a, 16):
            pt.store(out, pt.load(x, rows=(r, 16)), rows=(r, 16))

    assert "integer or a run-time integer" in str(_error(bound))


def test_a_float_scalar_argument_must_be_a_number() -> None:
    x = np.ones((16, 64), np.float32)
    with pytest.raises(InputError, match="is a number"):
        ptoc.run(_affine(False), x=x, y=x, alpha="2", beta=1.0)


# ---------------------------------------------------------------- FP32 scalar arithmetic


@ptoc.kernel
def computed(x: T, out: T, alpha: S, beta: S, n: ptoc.Scalar[ptoc.s64]):
    """Scalars computed at run time (FADD, FMUL, FDIV, FMAX, SCVTF) scale a tile; FLT and
    FGE guard conditionals."""
    inv = 1.0 / pt.cast(n, F32)
    s = pt.maximum(alpha * 0.5 + beta, inv)
    t = pt.load(x)
    with pt.when(alpha > beta):
        pt.store(out, t * s)
    with pt.when(alpha <= beta):
        pt.store(out, t - s)


def _computed_want(x: np.ndarray, a: float, b: float, n: int) -> np.ndarray:
    f = np.float32
    with np.errstate(all="ignore"):
        inv = f(1.0) / f(n)
        t = f(a) * f(0.5) + f(b)
        s = inv if np.isnan(t) else max(t, inv)  # FMAX: a NaN operand gives the number
        if f(a) > f(b):
            return x * s
        if f(a) <= f(b):
            return x - s
    return np.zeros_like(x)  # a NaN: neither condition holds


@pytest.mark.parametrize("machine", [None, TINY])
@pytest.mark.parametrize(
    ("a", "b", "n"),
    [(2.0, 1.0, 3), (-1.5, 0.25, 7), (1.0, 1.0, 1), (float("nan"), 0.0, 2), (3e38, 3e38, 5)],
)
def test_computed_scalars_agree_with_numpy(machine, a: float, b: float, n: int) -> None:  # type: ignore[no-untyped-def]
    x = _x(7, wild=False)
    got = ptoc.verify(ptoc.compile(computed, machine), x=x, alpha=a, beta=b, n=n)["out"]
    with np.errstate(all="ignore"):
        assert np.array_equal(got, _computed_want(x, a, b, n), equal_nan=True)


_COMPUTED: list[ptoc.Program] = []


@examples(15)
@given(
    a=st.sampled_from(list(_SPECIAL)) | st.floats(width=32),
    b=st.sampled_from(list(_SPECIAL)) | st.floats(width=32),
    n=st.integers(-(2**63), 2**63 - 1),
    seed=st.integers(0, 2**16),
)
def test_special_computed_scalars_agree_with_the_reference(a, b, n, seed) -> None:  # type: ignore[no-untyped-def]
    """NaN payloads, signed zeros, infinities and subnormals through FADD/FMUL/FDIV/FMAX
    and the comparisons; any integer through SCVTF (rounded to nearest even)."""
    if not _COMPUTED:
        _COMPUTED.append(ptoc.compile(computed))
    ptoc.verify(_COMPUTED[0], x=_x(seed), alpha=a, beta=b, n=n)


def test_an_integer_and_a_float_scalar_do_not_mix() -> None:
    @ptoc.kernel
    def mixed(x: T, out: T, a: S, n: ptoc.Scalar[ptoc.s32]):
        pt.store(out, pt.load(x) * (a + n))

    e = _error(mixed)
    assert "run-time integer with a run-time fp32 scalar" in str(e)
    assert "pt.cast(i, ptoc.fp32)" in (e.hint or "")


def test_a_loop_index_is_not_a_tile_scalar() -> None:
    @ptoc.kernel
    def index_scalar(x: T, out: T, a: S):
        for i in pt.range(0, 2, 1):
            pt.store(out, pt.load(x) * pt.cast(i, F32) * a)

    prog = ptoc.compile(index_scalar)  # SCVTF of the index: a computed scalar
    x = _x(9, wild=False)
    got = ptoc.verify(prog, x=x, a=2.0)["out"]
    assert np.array_equal(got, x * np.float32(1.0) * np.float32(2.0))
