"""The run-time loop examples: bit-exact on the default and a tiny machine for several
run-time arguments, close to float64 numpy, and programs whose size does not grow with
the data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptoc
from ptoc.loader import load_kernel

from .test_examples import EXAMPLES, MACHINES, TINY


def _softmax64(x: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("rows", [16, 48, 512])
def test_softmax_rows_verifies(machine, rows: int) -> None:
    k = load_kernel(f"{EXAMPLES}/softmax_rows.py::softmax_rows")
    x = np.random.default_rng(rows).standard_normal((4096, 64)).astype(np.float32)
    out = ptoc.verify(ptoc.compile(k, machine), x=x, rows=rows)["out"]
    assert np.allclose(out[:rows], _softmax64(x[:rows]), rtol=1e-5, atol=1e-7)
    assert not out[rows:].any()  # the rows past the argument are untouched


def test_softmax_rows_size_does_not_depend_on_the_height() -> None:
    """The pinned count: 7 kernel bundles in the loop body plus the 16 fillers that set
    up its entry state once (the default machine's queue depth), for 64 and 4096 rows."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("softmax_rows", EXAMPLES / "softmax_rows.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    small, large = (ptoc.compile(mod.make_softmax_rows(n)) for n in (64, 4096))
    assert small.program.bundle_count() == large.program.bundle_count() == 23
    assert small.stats().scalar_blocks == large.stats().scalar_blocks
    (loop,) = large.stats().loops
    assert (loop.bundles, loop.overhead) == (7, 0)


@pytest.mark.parametrize("machine", MACHINES)
def test_rmsnorm_rows_verifies(machine) -> None:
    k = load_kernel(f"{EXAMPLES}/rmsnorm_rows.py::rmsnorm_rows")
    prog = ptoc.compile(k, machine)
    for seed, rows in ((0, None), (1, 1), (2, 13), (3, 1023)):  # ragged tails included
        inputs = k.random_inputs(seed)
        if rows is not None:
            inputs["rows"] = rows
        out = ptoc.verify(prog, **inputs)["out"]
        x, g, n = (
            inputs["x"][: inputs["rows"]].astype(np.float64),
            inputs["gamma"],
            inputs["rows"],
        )
        want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * g
        assert np.allclose(out[:n], want, rtol=1e-5, atol=1e-6)
        assert not out[n:].any()  # the tail's missing rows are neither read nor written
    (loop,) = prog.stats().loops
    # gamma stays where it is on the default machine; four entries per hand cost a few
    # refreshes per iteration
    assert loop.overhead == 0 if machine is None else loop.overhead <= 3


@pytest.mark.parametrize("machine", MACHINES)
def test_paged_gather_verifies_and_faults_on_a_bad_page(machine) -> None:
    k = load_kernel(f"{EXAMPLES}/paged_gather.py::paged_gather")
    prog = ptoc.compile(k, machine)
    for seed in range(3):
        inputs = k.random_inputs(seed)
        out = ptoc.verify(prog, **inputs)["out"]
        for b in range(inputs["blocks"]):
            page = int(inputs["table"][0, b])
            assert np.array_equal(
                out[16 * b : 16 * b + 16], inputs["cache"][16 * page : 16 * page + 16]
            )
    bad = k.random_inputs(0)
    bad["table"][0, 0], bad["blocks"] = 32, 1  # one page past the cache
    with pytest.raises(ptoc.MachineFault, match=r"row start 512 .*'cache'.*0\.\.496"):
        ptoc.run(prog, **bad)


_PAGED: dict[bool, ptoc.Program] = {}


@given(
    table=st.lists(st.integers(-3, 34), min_size=8, max_size=8),
    blocks=st.integers(0, 8),
    tiny=st.booleans(),
)
def test_random_block_tables_gather_or_fault(table: list[int], blocks: int, tiny: bool) -> None:
    """Any block table (duplicates, pages past either end of the cache) and any block
    count: the pages the loop reaches are gathered bit for bit, and the first one outside
    the cache stops the machine with the load's bounds fault."""
    k = load_kernel(f"{EXAMPLES}/paged_gather.py::paged_gather")
    if tiny not in _PAGED:
        _PAGED[tiny] = ptoc.compile(k, TINY if tiny else None)
    inputs = k.random_inputs(0) | {
        "table": np.array([table], np.int32),
        "blocks": blocks,
    }
    used = table[:blocks]
    if all(0 <= p < 32 for p in used):
        out = ptoc.verify(_PAGED[tiny], **inputs)["out"]
        for b, page in enumerate(used):
            want = inputs["cache"][16 * page : 16 * page + 16]
            assert np.array_equal(
                out[16 * b : 16 * b + 16].view(np.uint16), want.view(np.uint16)
            )
        assert not out[16 * blocks :].view(np.uint16).any()
    else:
        with pytest.raises(ptoc.MachineFault, match="'cache'"):
            ptoc.run(_PAGED[tiny], **inputs)


@pytest.mark.parametrize("machine", MACHINES)
def test_topk_rows_verifies(machine) -> None:
    k = load_kernel(f"{EXAMPLES}/topk_rows.py::topk_rows")
    prog = ptoc.compile(k, machine)
    for seed, rows in ((0, 3), (1, 0), (2, 7)):
        inputs = k.random_inputs(seed) | {"rows": rows}
        got = ptoc.verify(prog, **inputs)
        x = inputs["x"][:rows]
        order = np.argsort(-x, axis=1, kind="stable")[:, :16]
        assert np.array_equal(got["values"][:rows], np.take_along_axis(x, order, axis=1))
        assert np.array_equal(got["indices"][:rows], order.astype(np.uint32))


def _example_module(name: str):  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("machine", MACHINES)
def test_gemm_loop_gives_the_bits_of_the_unrolled_chain(machine) -> None:
    """The K loop's TMATMUL_ACC chain is the unrolled kernel's chain (D11: one FP32
    rounding per K step, in increasing K order), so the outputs are equal bit for bit."""
    loop = load_kernel(f"{EXAMPLES}/gemm.py::gemm_fp16_loop")
    unrolled = load_kernel(f"{EXAMPLES}/gemm.py::gemm_fp16")
    prog = ptoc.compile(loop, machine)
    inputs = loop.random_inputs(3)
    got = ptoc.verify(prog, **inputs)["c"]
    want = ptoc.run(ptoc.compile(unrolled), **inputs)["c"]
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    a, b = (inputs[n].astype(np.float64) for n in ("a", "b"))
    bound = 512 * 2.0**-24 * (np.abs(a) @ np.abs(b))  # K roundings of the FP32 fold
    assert np.all(np.abs(got - a @ b) <= bound + 1e-30)


def test_gemm_loop_size_does_not_depend_on_the_matrix_sizes() -> None:
    mod = _example_module("gemm")
    sizes = [(64, 64, 128), (128, 128, 512), (256, 128, 1024)]
    counts = {ptoc.compile(mod.make_gemm_fp16_loop(*s)).program.bundle_count() for s in sizes}
    assert len(counts) == 1, counts
    loops = ptoc.compile(mod.make_gemm_fp16_loop(128, 128, 512)).stats().loops
    assert len(loops) == 3  # the block loops over M and N, and the K loop


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("kernel", ["attention_loop_d64", "attention_loop_d128"])
def test_attention_loop_matches_the_unrolled_recurrence(kernel: str, machine) -> None:
    """Over a run-time number of keys the loop computes what the unrolled kernel computes
    for the same keys, bit for bit, and attention within the FP16 rounding of P. On the
    tiny machine the carried state (m, the row sums and the 32 x dim FP32 accumulator:
    17 KiB at dim 128) exceeds the 16 KiB capacity: the largest carried tiles live in the
    spill area across the back edge."""
    mod = _example_module("attention")
    k = load_kernel(f"{EXAMPLES}/attention.py::{kernel}")
    prog = ptoc.compile(k, machine)
    dim = 64 if kernel.endswith("64") else 128
    for seed, keys in ((0, mod.BLOCK), (1, mod.KEYS), (2, mod.MAX_KEYS)):
        inputs = k.random_inputs(seed)
        inputs["keys"] = keys
        got = ptoc.verify(prog, **inputs)["o"]
        q, kk, v = (inputs[n].astype(np.float64) for n in ("q", "k", "v"))
        s = q @ kk[:keys].T / np.sqrt(dim)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        want = (p / p.sum(axis=1, keepdims=True)) @ v[:keys]
        assert np.allclose(got, want, rtol=0, atol=2e-2 * np.abs(v[:keys]).max())
        if keys == mod.KEYS:  # the unrolled example covers exactly KEYS keys
            unrolled = load_kernel(f"{EXAMPLES}/attention.py::attention_d{dim}")
            small = {n: inputs[n][: mod.KEYS] if n in "kv" else inputs[n] for n in "qkv"}
            ref = ptoc.run(ptoc.compile(unrolled), **small)["o"]
            assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    (loop,) = prog.stats().loops
    if machine is None:  # the new m, l and accumulator land where the entry has them
        assert loop.overhead == 0
    else:  # the spilled accumulator pieces are reloaded and stored in every iteration
        assert loop.bundles > loop.overhead > 0


def test_attention_loop_program_size_does_not_depend_on_the_keys() -> None:
    k = load_kernel(f"{EXAMPLES}/attention.py::attention_loop_d64")
    prog = ptoc.compile(k)
    small, large = (k.random_inputs(0) for _ in range(2))
    small["keys"], large["keys"] = 32, 512
    runs = [ptoc.run(prog, **x) for x in (small, large)]
    (loop,) = prog.stats().loops
    # the same program; the long sequence runs 15 more iterations of the one body
    assert runs[1].bundles - runs[0].bundles == 15 * loop.bundles
