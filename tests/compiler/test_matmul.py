"""``pt.matmul`` compiled and executed against the D11 reference of the whole shape.

The reference (``tile.matmul``) is one fold over all of K, then the bias, then ReLU
(``semantics.matmul.matmul``, itself tested against an exact Fraction oracle); the
compiled kernel splits M into blocks of at most 32 rows, N and K into pieces that fit a
tile, chains K chunks through TMATMUL_ACC and moves operands through GM. On a small
machine (4 KiB pieces) the shapes below need several M blocks, N blocks and K chunks.
Results are compared bit for bit (``ptoc.verify``) and the machine's per-PE status
with the reference's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.backend.isa import DataType, info, op
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics.core import from_bits
from ptoc.passes.geometry import default_tile_limit
from ptoc.passes.legalize import matmul as legalize_matmul

D = DataType
#: each example compiles a kernel: few on the ``ci`` profile, many on ``thorough``
EXAMPLES = 12 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 400
SMALL = ptoc.MachineConfig(depth=4, capacity=16384)

#: (A, B) DataType pairs: every class, mixed types of one class
PAIRS = [
    (D.FP16, D.FP16), (D.BF16, D.FP16), (D.FP32, D.FP32), (D.TF32, D.HF32),
    (D.E4M3, D.E5M2), (D.HiF8, D.E2M3), (D.S8, D.S8), (D.S16, D.S8), (D.U8, D.U16),
]  # fmt: skip
_VALID_BITS = {D.TF32: ~0x1FFF, D.HF32: ~0x0FFF, D.E3M2: 0x3F, D.E2M3: 0x3F}


def _raw(rng: np.random.Generator, dt: DataType, shape: tuple[int, int], style: str):
    """Carrier values of ``dt``: uniform raw bits (every binade, NaN payloads, +-0, Inf,
    subnormals) or moderate values with some specials mixed in."""
    bits = info(dt).bits
    raw = rng.integers(0, 1 << bits, shape, dtype=np.uint64)
    if style == "moderate":
        if info(dt).is_float:
            v = rng.integers(-6, 7, shape).astype(np.float64) / 4
            raw = _bits_of(dt, v)
            pick = rng.random(shape) < 0.05
            raw = np.where(pick, rng.integers(0, 1 << bits, shape, dtype=np.uint64), raw)
        else:
            lo = -8 if info(dt).is_signed else 0
            raw = rng.integers(lo, 8, shape).astype(np.int64).astype(np.uint64)
            raw &= np.uint64((1 << bits) - 1)
    mask = _VALID_BITS.get(dt)
    if mask is not None:
        raw &= np.uint64(mask & ((1 << bits) - 1))
    return from_bits(raw, dt)


def _bits_of(dt: DataType, v: np.ndarray) -> np.ndarray:
    from ptoc.backend.isa.semantics.core import round_float, to_bits

    r, _ = round_float(dt, v)
    return to_bits(r).astype(np.uint64)


def _kernel(dts, m, n, k, acc: bool, bias: bool, relu: bool, vector_a: bool):  # type: ignore[no-untyped-def]
    a_t, b_t = (ptoc.dtypes.dtype_of(d) for d in dts)
    r_t = ptoc.dtypes.dtype_of(sm.accumulator_type(*dts))

    def body(a, b, c, bias_in, out):  # type: ignore[no-untyped-def]
        x = pt.load(a)
        if vector_a and dts[0] in op("TNEG").dtypes:
            x = pt.neg(pt.neg(x))  # an operand computed by vector ops (the same bits)
        y = pt.matmul(x, pt.load(b), acc=pt.load(c) if acc else None,
                      bias=pt.load(bias_in) if bias else None, relu=relu)  # fmt: skip
        pt.store(out, y)

    body.__annotations__ = {
        "a": ptoc.Tensor[a_t, m, k],
        "b": ptoc.Tensor[b_t, k, n],
        "c": ptoc.Tensor[r_t, m, n],
        "bias_in": ptoc.Tensor[r_t, 1, n],
        "out": ptoc.Tensor[r_t, m, n],
    }
    return ptoc.kernel(body, name=f"mm_{m}x{n}x{k}")


def _check(dts, m, n, k, acc, bias, relu, vector_a, style, seed, machine=SMALL) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    r_dt = sm.accumulator_type(*dts)
    arrays = {
        "a": _raw(rng, dts[0], (m, k), style),
        "b": _raw(rng, dts[1], (k, n), style),
        "c": _raw(rng, r_dt, (m, n), style),
        "bias_in": _raw(rng, r_dt, (1, n), style),
    }
    kern = _kernel(dts, m, n, k, acc, bias, relu, vector_a)
    prog = ptoc.compile(kern, machine)
    out = ptoc.verify(prog, **arrays)  # bit for bit against tile.matmul's reference
    want = sm.matmul(
        arrays["a"], dts[0], arrays["b"], dts[1],
        acc=arrays["c"] if acc else None, bias=arrays["bias_in"] if bias else None,
        fpatr=sf.Fpatr(relu_mode=1 if relu else 0),
    )  # fmt: skip
    got = np.ascontiguousarray(out["out"])
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.d.view(f"u{got.itemsize}"))
    assert int(out.status[0]) == want.status, (out.status, want.status)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pair=st.sampled_from(PAIRS),
    m=st.sampled_from([1, 2, 16, 17, 33, 40]),
    n=st.sampled_from([1, 7, 8, 9, 33]),
    k=st.sampled_from([1, 3, 31, 64, 65, 130]),
    acc=st.booleans(),
    bias=st.booleans(),
    relu=st.booleans(),
    vector_a=st.booleans(),
    style=st.sampled_from(["raw", "moderate"]),
    seed=st.integers(0, 2**16),
)
def test_compiled_matmul_is_the_d11_reference(pair, m, n, k, acc, bias, relu, vector_a,
                                              style, seed) -> None:  # fmt: skip
    _check(pair, m, n, k, acc, bias, relu, vector_a, style, seed)


@pytest.mark.parametrize(
    ("pair", "m", "n", "k", "acc", "bias", "relu"),
    [
        ((D.FP16, D.FP16), 40, 33, 130, False, True, True),  # K chunks, late bias + ReLU
        ((D.FP32, D.FP32), 33, 9, 65, True, True, False),  # acc + late bias
        ((D.BF16, D.BF16), 17, 8, 64, False, True, True),  # one chunk: TMATMUL_BIAS + ReLU
        ((D.S8, D.S8), 1, 40, 130, True, False, True),  # TGEMV_ACC chain, S32
        ((D.U8, D.U8), 2, 1, 1, False, True, False),  # K = 1, N = 1
    ],
)
@pytest.mark.parametrize("style", ["raw", "moderate"])
def test_forms_and_chains(pair, m, n, k, acc, bias, relu, style) -> None:  # type: ignore[no-untyped-def]
    _check(pair, m, n, k, acc, bias, relu, False, style, seed=m * 1000 + n * 10 + k)


def test_k_chunks_chain_through_acc_and_m_blocks_are_at_most_32_rows() -> None:
    """40 x 33 x 130 FP16 on 4 KiB pieces: two M blocks (32 + 8 rows: CUBE_M32, then
    CUBE_M16), two N blocks and three K chunks each: 4 TMATMUL + 8 TMATMUL_ACC."""
    k = _kernel((D.FP16, D.FP16), 40, 33, 130, False, False, False, False)
    ops = ptoc.compile(k, SMALL).stats().by_op
    assert ops["TMATMUL"] == 4 and ops["TMATMUL_ACC"] == 8
    text = ptoc.compile(k, SMALL).asm()
    assert "ND2M32" in text and "ND2M16" in text and "ND2N8" in text
    assert "M322ND" in text and "M162ND" in text


@pytest.mark.parametrize("hands", [1, 2, 4])
def test_acc_destination_never_takes_the_hand_coded_by_c(hands: int) -> None:
    """``BundleMatrixAccumulatorDestinationIndicesDistinct``: C at ``T#k`` forbids D's
    hand code ``k - 1`` (C = T#1 and D -> T is the common case of a chain). The
    allocator avoids it on every machine shape; the executor would reject it."""
    machine = ptoc.MachineConfig(hands=hands, depth=4, capacity=16384)
    k = _kernel((D.FP16, D.FP16), 16, 8, 1024, False, False, False, False)
    prog = ptoc.compile(k, machine)
    assert prog.stats().by_op["TMATMUL_ACC"] >= 3
    text = prog.asm()
    for block in text.split("BSTART.TMATMUL.ACC")[1:]:
        iots = [ln for ln in block.split("BSTOP")[0].splitlines() if ln.startswith("B.IOT")]
        c_ref = iots[0].split()[1].rstrip(",")  # C is the first source
        dst = next(ln for ln in iots if "->" in ln).split("->")[1][0]
        hand, index = c_ref.split("#")
        assert not (hand == "T" and "TUMN"[int(index) - 1] == dst), iots
    _check((D.FP16, D.FP16), 16, 8, 1024, False, False, False, False, "moderate", 5, machine)


def test_acc_destination_rule_holds_when_the_scores_prefer_the_forbidden_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Steer every placement to the hand C's selector codes (the worst case for the
    rule): the allocator must still place D elsewhere, and the program verifies."""
    from ptoc.passes.allocate import tiles

    real = tiles.TileAllocator._score

    def score(self, qs, h, v, size, t):  # type: ignore[no-untyped-def]
        op = self.op
        forbidden = None if op is None else tiles._accumulator_hand(op, qs)
        return -1e9 if h == forbidden else real(self, qs, h, v, size, t)

    monkeypatch.setattr(tiles.TileAllocator, "_score", score)
    machine = ptoc.MachineConfig(depth=4, capacity=16384)
    _check((D.FP16, D.FP16), 16, 8, 1024, False, False, False, False, "moderate", 6, machine)


# --------------------------------------------------------------------------- MX

MX_PAIRS = [(D.E4M3, D.E4M3), (D.E5M2, D.E4M3), (D.E4M3, D.FP16), (D.BF16, D.E5M2),
            (D.FP16, D.BF16)]  # fmt: skip


def _kernel_mx(dts, m, n, k, acc: bool, bias: bool, relu: bool):  # type: ignore[no-untyped-def]
    a_t, b_t = (ptoc.dtypes.dtype_of(d) for d in dts)
    blocks = sm.scale_blocks(k)
    sa_needed, sb_needed = (sm.needs_scale(d) for d in dts)

    # the accumulator and the bias share one tensor (rows 0..m-1 and row m): with both
    # scales, the scratch and a spill area the ABI's eight base registers are all used
    def body(a, sa, b, sb, c, out):  # type: ignore[no-untyped-def]
        y = pt.matmul_mx(
            pt.load(a), pt.load(sa) if sa_needed else None,
            pt.load(b), pt.load(sb) if sb_needed else None,
            acc=pt.load(c, rows=(0, m)) if acc else None,
            bias=pt.load(c, rows=(m, 1)) if bias else None, relu=relu,
        )  # fmt: skip
        pt.store(out, y)

    body.__annotations__ = {
        "a": ptoc.Tensor[a_t, m, k],
        "sa": ptoc.Tensor[ptoc.e8m0, m, blocks],
        "b": ptoc.Tensor[b_t, k, n],
        "sb": ptoc.Tensor[ptoc.e8m0, blocks, n],
        "c": ptoc.Tensor[ptoc.fp32, m + 1, n],
        "out": ptoc.Tensor[ptoc.fp32, m, n],
    }
    return ptoc.kernel(body, name=f"mx_{m}x{n}x{k}")


def _scales(rng: np.random.Generator, shape: tuple[int, int], style: str) -> np.ndarray:
    """E8M0 scales: every code (2**-127 .. 2**127 and the NaN code 0xFF) or near 1."""
    if style == "raw":
        raw = rng.integers(0, 256, shape, dtype=np.uint64)
    else:
        raw = rng.integers(120, 135, shape).astype(np.uint64)
    return from_bits(raw, D.E8M0)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pair=st.sampled_from(MX_PAIRS),
    m=st.sampled_from([1, 5, 33]),
    n=st.sampled_from([1, 9, 33]),
    k=st.sampled_from([1, 31, 32, 33, 130]),
    acc=st.booleans(),
    bias=st.booleans(),
    relu=st.booleans(),
    style=st.sampled_from(["raw", "moderate"]),
    seed=st.integers(0, 2**16),
)
def test_compiled_mx_matmul_is_the_d11_reference(pair, m, n, k, acc, bias, relu, style,
                                                 seed) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    blocks = sm.scale_blocks(k)
    arrays = {
        "a": _raw(rng, pair[0], (m, k), style),
        "sa": _scales(rng, (m, blocks), style),
        "b": _raw(rng, pair[1], (k, n), style),
        "sb": _scales(rng, (blocks, n), style),
        "c": _raw(rng, D.FP32, (m + 1, n), style),
    }
    prog = ptoc.compile(_kernel_mx(pair, m, n, k, acc, bias, relu), SMALL)
    out = ptoc.verify(prog, **arrays)
    want = sm.matmul(
        arrays["a"], pair[0], arrays["b"], pair[1], mx=True,
        a_scale=arrays["sa"] if sm.needs_scale(pair[0]) else None,
        b_scale=arrays["sb"] if sm.needs_scale(pair[1]) else None,
        acc=arrays["c"][:m] if acc else None, bias=arrays["c"][m:] if bias else None,
        fpatr=sf.Fpatr(relu_mode=1 if relu else 0),
    )  # fmt: skip
    assert np.array_equal(out["out"].view(np.uint32), want.d.view(np.uint32))
    assert int(out.status[0]) == want.status


def test_mx_k_chunks_are_whole_scale_blocks() -> None:
    """E4M3 x E4M3, K = 130 on 4 KiB pieces: chunks of a multiple of 32 elements, so each
    bundle's scales are whole blocks of the operand's scale tiles."""
    prog = ptoc.compile(_kernel_mx((D.E4M3, D.E4M3), 33, 9, 130, False, False, False), SMALL)
    ops = prog.stats().by_op
    assert ops["TMATMUL_MX_ACC"] >= 2 and ops["TMATMUL_MX"] == 2
    ks = []  # K (LB2) of every matrix bundle, in program order
    for block in prog.asm().split("BSTART.")[1:]:
        if block.startswith("TMATMUL"):
            ks += [int(ln.split()[1].rstrip(",")) for ln in block.splitlines() if "->LB2" in ln]
    full = set(ks) - {130 % 32}
    assert 130 % 32 in ks and full and all(v % 32 == 0 for v in full)  # ... + 2 per block


def test_mx_acc_bundles_fit_the_capacity_with_their_scales() -> None:
    """C, A, A scale, B, B scale and D of a TMATMUL_MX_ACC are live at once: on a
    16 KiB machine the blocks leave room for the scales."""
    _check_mx_case((D.E4M3, D.E4M3), 33, 33, 130, acc=True)


def _check_mx_case(pair, m, n, k, acc=False, bias=False, relu=False) -> None:  # type: ignore[no-untyped-def]
    test_compiled_mx_matmul_is_the_d11_reference.hypothesis.inner_test(
        pair, m, n, k, acc, bias, relu, "raw", 0
    )


def test_matmul_on_several_pes_uses_each_pes_rows_and_scratch() -> None:
    """Four PEs, each multiplying its own 8 rows of A (a per-PE load window) through its
    own scratch row, with a vector-computed B shared by all."""

    @ptoc.kernel(pes=4)
    def per_pe(
        a: ptoc.Tensor[ptoc.bf16, 32, 72],
        b: ptoc.Tensor[ptoc.bf16, 72, 20],
        out: ptoc.Tensor[ptoc.fp32, 32, 20],
    ):
        x = pt.load(a, rows=(8 * pt.pe(), 8))
        y = pt.neg(pt.load(b))
        pt.store(out, pt.matmul(x, y, relu=True), rows=8 * pt.pe())

    x = per_pe.random_inputs(0)
    for machine in (None, SMALL):
        got = ptoc.verify(per_pe, machine, **x)["out"]
        a, b = x["a"].astype(np.float64), -x["b"].astype(np.float64)
        want = np.maximum(a @ b, 0)
        assert np.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_mx_with_acc_bias_and_both_scales() -> None:
    """Every MX operand at once (the most sources a bundle of this lowering binds)."""
    _check_mx_case((D.E4M3, D.E4M3), 33, 33, 1, acc=True, bias=True)
    _check_mx_case((D.E5M2, D.E4M3), 33, 9, 130, acc=True, bias=True, relu=True)


# --------------------------------------------------------------------------- K loops


@contextmanager
def _k_loops(chunks: int = 1) -> Iterator[None]:
    """Compile a block's K chain as a run-time loop from ``chunks`` middle chunks on
    (the compiler's threshold is higher: a loop pays off only for long chains)."""
    saved = legalize_matmul.LOOP_CHUNKS
    legalize_matmul.LOOP_CHUNKS = chunks
    try:
        yield
    finally:
        legalize_matmul.LOOP_CHUNKS = saved


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pair=st.sampled_from(PAIRS),
    m=st.sampled_from([1, 17, 33]),
    n=st.sampled_from([1, 9, 33]),
    k=st.sampled_from([300, 333]),
    acc=st.booleans(),
    bias=st.booleans(),
    relu=st.booleans(),
    style=st.sampled_from(["raw", "moderate"]),
    seed=st.integers(0, 2**16),
)
def test_k_chains_as_run_time_loops_are_the_d11_reference(pair, m, n, k, acc, bias, relu,
                                                          style, seed) -> None:  # fmt: skip
    """The chunks between a block's first and last one as a run-time loop (C reloaded
    from D's GM image each iteration, A's and B's chunks at run-time addresses): D,
    status, late bias and ReLU are the reference's bit for bit, at every type pair."""
    with _k_loops():
        _check(pair, m, n, k, acc, bias, relu, False, style, seed)


def test_mx_k_loops_move_the_scales_by_whole_blocks() -> None:
    """An MX chain as a loop: A's scale columns and B's scale rows move by the chunk's
    scale blocks each iteration."""
    with _k_loops():
        k = _kernel_mx((D.E4M3, D.E4M3), 33, 9, 330, False, False, False)
        assert ptoc.compile(k, SMALL).stats().loops
        _check_mx_case((D.E4M3, D.E4M3), 33, 9, 330, acc=True, bias=True, relu=True)
        _check_mx_case((D.FP16, D.BF16), 1, 9, 330)


def test_long_k_chains_compile_to_a_loop_whose_size_does_not_depend_on_k() -> None:
    """With the compiler's own threshold: a short chain stays unrolled, a long one is a
    loop per block (the program has the same bundles for twice the K) and still the
    reference's bits. A and B are read from their tensors chunk by chunk, so their rows
    may be wider than any tile (K = 40960 FP16 is 80 KiB a row)."""
    machine = ptoc.MachineConfig()
    limit = default_tile_limit(machine)
    kc = legalize_matmul.blocking(16, 8, 1 << 20, D.FP16, D.FP16, D.FP32, limit)[2]
    short = _kernel((D.FP16, D.FP16), 16, 8, kc * (legalize_matmul.LOOP_CHUNKS + 1),
                    False, False, False, False)  # fmt: skip
    assert not ptoc.compile(short, machine).stats().loops
    sizes = []
    for chunks in (40, 80):
        kern = _kernel((D.FP16, D.FP16), 16, 8, kc * chunks, False, False, False, False)
        st_ = ptoc.compile(kern, machine).stats()
        assert len(st_.loops) == 1 and st_.by_op["TMATMUL_ACC"] == 2
        sizes.append(st_.bundles)
    assert sizes[0] == sizes[1]
    _check((D.FP16, D.FP16), 16, 8, kc * 40, True, True, True, False, "moderate", 5, machine)


def test_a_wide_operand_read_also_by_vector_ops_is_still_too_large() -> None:
    """Only a load that nothing but the CUBE reads escapes the row limit of tiles."""

    @ptoc.kernel
    def wide(
        a: ptoc.Tensor[ptoc.fp16, 16, 16384],
        b: ptoc.Tensor[ptoc.fp16, 16384, 8],
        out: ptoc.Tensor[ptoc.fp32, 16, 8],
        a_out: ptoc.Tensor[ptoc.fp16, 16, 16384],
    ):
        x = pt.load(a)
        pt.store(out, x @ pt.load(b))
        pt.store(a_out, pt.neg(x))

    with pytest.raises(ptoc.KernelError, match="too large for the machine"):
        ptoc.compile(wide)


def test_k_loops_on_several_pes_read_each_pes_rows() -> None:
    """Two PEs, each with its own rows of A: the loop's run-time addresses keep the
    per-PE step of the window."""

    @ptoc.kernel(pes=2)
    def two_pes(
        a: ptoc.Tensor[ptoc.fp16, 32, 320],
        b: ptoc.Tensor[ptoc.fp16, 320, 8],
        out: ptoc.Tensor[ptoc.fp32, 32, 8],
    ):
        x = pt.load(a, rows=(16 * pt.pe(), 16))
        pt.store(out, pt.matmul(x, pt.load(b)), rows=16 * pt.pe())

    with _k_loops():
        prog = ptoc.compile(two_pes, SMALL)
        assert prog.stats().loops
        x = two_pes.random_inputs(3)
        got = ptoc.verify(prog, **x)["out"]
    want = sm.matmul(x["a"], D.FP16, x["b"], D.FP16).d
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_a_stored_result_leaves_the_cube_straight_into_its_window() -> None:
    """``store(out, a @ b)``: D's blocks go by TSTORE M322ND into the store's window of
    ``out`` (no scratch image, no row-major reload), and with one K chunk B's chunk is
    loaded once for both M blocks."""

    @ptoc.kernel
    def window(
        a: ptoc.Tensor[ptoc.bf16, 64, 64],
        b: ptoc.Tensor[ptoc.bf16, 64, 48],
        out: ptoc.Tensor[ptoc.fp32, 70, 60],
    ):
        pt.store(out, pt.load(a) @ pt.load(b), row=3, col=5)

    prog = ptoc.compile(window)
    asm = prog.asm()
    assert asm.count("ND2N8") == 1 and asm.count("ND2M32") == 2
    assert asm.count("M322ND") == 2
    assert "BSTART.TLOAD FP32" not in asm and asm.count("BSTART.TSTORE") == 2
    x = window.random_inputs(1)
    got = ptoc.verify(prog, **x)["out"]
    want = sm.matmul(x["a"], D.BF16, x["b"], D.BF16).d
    assert np.array_equal(got[3:67, 5:53].view(np.uint32), want.view(np.uint32))
    assert not got[:3].any() and not got[67:].any()
    assert not got[:, :5].any() and not got[:, 53:].any()


def _reloaded(prog: ptoc.Program) -> bool:
    """Whether D went through the scratch: a row-major FP32 reload of it."""
    return "BSTART.TLOAD FP32" in prog.asm()


def test_a_result_the_window_is_touched_before_its_store_goes_through_the_scratch() -> None:
    """D may go straight to the store's window only when nothing between the matmul and
    the store names that tensor: a load of the old contents, or another store to it,
    would see (or be overwritten by) D too early."""

    @ptoc.kernel
    def read_between(
        a: ptoc.Tensor[ptoc.fp16, 32, 16],
        b: ptoc.Tensor[ptoc.fp16, 16, 8],
        out: ptoc.Tensor[ptoc.fp32, 32, 8],
        old: ptoc.Tensor[ptoc.fp32, 32, 8],
    ):
        y = pt.load(a) @ pt.load(b)
        pt.store(old, pt.neg(pt.load(out)))
        pt.store(out, y)

    @ptoc.kernel
    def store_between(
        a: ptoc.Tensor[ptoc.fp16, 32, 16],
        b: ptoc.Tensor[ptoc.fp16, 16, 8],
        c: ptoc.Tensor[ptoc.fp32, 32, 8],
        out: ptoc.Tensor[ptoc.fp32, 32, 8],
    ):
        y = pt.load(a) @ pt.load(b)
        pt.store(out, pt.neg(pt.load(c)))
        pt.store(out, y)

    @ptoc.kernel
    def read_twice(
        a: ptoc.Tensor[ptoc.fp16, 32, 16],
        b: ptoc.Tensor[ptoc.fp16, 16, 8],
        out: ptoc.Tensor[ptoc.fp32, 32, 8],
        neg: ptoc.Tensor[ptoc.fp32, 32, 8],
    ):
        y = pt.load(a) @ pt.load(b)
        pt.store(out, y)
        pt.store(neg, pt.neg(y))

    before = np.random.default_rng(5).standard_normal((32, 8)).astype(np.float32)
    for kern in (read_between, store_between, read_twice):
        prog = ptoc.compile(kern)
        assert _reloaded(prog), kern.name
        x = kern.random_inputs(2)
        if kern is read_between:
            x["out"] = before  # the contents the load in between must read
        got = ptoc.verify(prog, **x)
        want = sm.matmul(x["a"], D.FP16, x["b"], D.FP16).d
        assert np.array_equal(got["out"].view(np.uint32), want.view(np.uint32))
        if kern is read_between:
            assert np.array_equal(got["old"], -before)


def test_a_late_bias_still_goes_through_the_scratch() -> None:
    """With several K chunks the bias is added after the reload (one rounding, as the
    reference adds it after the whole fold), so D is not stored straight."""
    kern = _kernel((D.FP16, D.FP16), 33, 9, 130, False, True, True, False)
    assert _reloaded(ptoc.compile(kern, SMALL))
    assert not _reloaded(ptoc.compile(_kernel((D.FP16, D.FP16), 33, 9, 130, False, False,
                                              True, False), SMALL))  # fmt: skip
    _check((D.FP16, D.FP16), 33, 9, 130, False, True, True, False, "raw", 4)
