"""The executor's fast paths against its exact engine, bundle by bundle.

The same program runs twice on identical machines: once as shipped (native fast paths,
known-finite facts published with each tile, fused runners) and once under
:func:`fastpath.exact_only` (every operation through the exact engine, nothing known in
advance). Every published tile must agree in payload bits (NaN payloads, zero signs and
padding included), definedness, descriptor and the per-PE numeric status.

Chains matter here: a result is read by the next bundle, so a fact published with a
tile (for example "holds no NaN or infinity") is trusted by the bundle that reads it.
Operands span every binade: signed zeros, subnormals, the top binade, values that
overflow when added or multiplied, +-Inf, quiet and signalling NaNs with payloads,
ties and duplicates.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import op as op_def
from ptoc.backend.isa.semantics import compiled, fastpath
from ptoc.backend.program import Program
from ptoc.runtime import Machine, MachineConfig

from .util import prog, size_for

#: (width, exponent bits, fraction bits) of the fast-path formats
LAYOUT = {
    DataType.FP64: (64, 11, 52),
    DataType.FP32: (32, 8, 23),
    DataType.FP16: (16, 5, 10),
    DataType.BF16: (16, 8, 7),
}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
CHAIN_OPS = ["TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN"]

#: how warm FP32/FP64 arithmetic runs: the compiled kernel (where a C compiler exists;
#: else the numpy route again) or the numpy route
ROUTES = ["compiled", "numpy"]


def _route(route: str) -> contextlib.AbstractContextManager[None]:
    return compiled.suspended() if route == "numpy" else contextlib.nullcontext()


def _special(dt: DataType) -> list[int]:
    w, e, m = LAYOUT[dt]
    bias, top, fmax = (1 << (e - 1)) - 1, (1 << e) - 1, (1 << m) - 1

    def b(exp: int, frac: int) -> int:
        return (exp << m) | frac

    mags = [
        0, 1, fmax, b(1, 0), b(1, fmax), b(bias, 0), b(bias, 1), b(bias - 1, fmax),
        b(top - 1, fmax), b(top - 1, 0), b(top, 0),  # the top binade, Inf
        b(top, 1 << (m - 1)), b(top, (1 << (m - 1)) | 5), b(top, 1),  # qNaN, payload, sNaN
    ]  # fmt: skip
    return mags + [v | (1 << (w - 1)) for v in mags]


def _elements(dt: DataType, finite_only: bool) -> st.SearchStrategy[int]:
    w, e, m = LAYOUT[dt]
    bias, top = (1 << (e - 1)) - 1, (1 << e) - 1
    special = [v for v in _special(dt) if not finite_only or (v >> m) & top != top]
    moderate = st.builds(
        lambda s, x, f: (s << (w - 1)) | ((bias + x) << m) | f,
        st.integers(0, 1),
        st.integers(-min(bias - 1, 12), min(bias - 1, 12)),
        st.integers(0, (1 << m) - 1),
    )
    anything = st.integers(0, (1 << w) - 1).filter(
        lambda v: not finite_only or (v >> m) & top != top
    )
    return st.one_of(st.sampled_from(special), moderate, anything)


@st.composite
def chains(draw: st.DrawFn) -> tuple[DataType, int, int, list[np.ndarray], list[str]]:
    dt = draw(st.sampled_from(list(LAYOUT)))
    rows, cols = draw(st.integers(1, 3)), draw(st.sampled_from([1, 4, 8, 16]))
    # finite sources most of the time: then only overflow can break the chain's facts
    finite = draw(st.booleans())
    n = 4 * rows * cols
    w = LAYOUT[dt][0]
    srcs = [
        np.array(draw(st.lists(_elements(dt, finite), min_size=n, max_size=n)), np.uint64)
        .astype(UINT[w])
        .reshape(4, rows, cols)
        .view(info(dt).carrier)
        for _ in range(2)
    ]
    ops = draw(st.lists(st.sampled_from(CHAIN_OPS), min_size=2, max_size=4))
    return dt, rows, cols, srcs, ops


def _program(dt: DataType, rows: int, cols: int, ops: list[str]) -> list[str]:
    size = size_for(dt, rows, cols)
    out = []
    # the first bundle reads the two sources, each later one the previous result and
    # alternately the first source and the result before that
    operands = ["T#2, T#1"] + ["U#1, T#1" if k % 2 else "U#1, U#2" for k in range(1, len(ops))]
    for op, srcs in zip(ops, operands, strict=True):
        out.append(
            f"{op_def(op).bstart} {op}, {dt.name}\nB.DIM zero, {cols}, ->LB0\n"
            f"B.DIM zero, {rows}, ->LB1\nB.IOT {srcs}, mask=1111, last, ->U<{size}>\nBSTOP\n"
        )
    return out


def _run(
    dt: DataType, srcs: list[np.ndarray], bundles: list[str], mask: int = 0b1111
) -> tuple[Machine, list]:
    """The machine after the bundles, and each bundle's own status (the sticky status is
    cleared after every bundle, so an earlier flag cannot hide a later one)."""
    m = Machine(MachineConfig(gm_size=4096, depth=8))
    for a in srcs:
        m.push_tile("T", a, dt, mask=mask)
    statuses = []
    for text in bundles:
        m.run(prog(text))
        statuses.append(m.status.tolist())
        m.state.status[:] = 0
    return m, statuses


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


@given(chains())
def test_chained_bundles_match_the_exact_engine(
    case: tuple[DataType, int, int, list[np.ndarray], list[str]],
) -> None:
    dt, rows, cols, srcs, ops = case
    text = _program(dt, rows, cols, ops)
    fast = _run(dt, srcs, text)
    fast_again = _run(dt, srcs, text)  # the plans are warm now
    with fastpath.exact_only():
        exact, want_status = _run(dt, srcs, text)
    want = exact.tiles()
    for m, status in (fast, fast_again):
        assert status == want_status
        got = m.tiles()
        assert got.keys() == want.keys()
        for name, w in want.items():
            g = got[name]
            assert (g.rows, g.cols, g.valid_rows, g.valid_cols, g.mask) == (
                w.rows, w.cols, w.valid_rows, w.valid_cols, w.mask,
            )  # fmt: skip
            assert np.array_equal(_raw(g.payload), _raw(w.payload)), name
            assert np.array_equal(g.defined, w.defined), name


def test_an_overflowing_result_is_not_declared_finite() -> None:
    """The first sum overflows to +Inf (OF): the next bundle must see the infinity, so
    Inf - Inf gives the canonical NaN and NV, exactly as the exact engine says."""
    big = np.full((4, 1, 8), np.finfo(np.float32).max, np.float32)
    text = _program(DataType.FP32, 1, 8, ["TADD", "TSUB", "TSUB"])
    fast, status = _run(DataType.FP32, [big, big], text)
    with fastpath.exact_only():
        exact, want = _run(DataType.FP32, [big, big], text)
    # Inf + max = Inf (exact: no flag), then Inf - Inf = NaN with NV
    assert np.isinf(fast.tile("U#2").values).all() and np.isnan(fast.tile("U#1").values).all()
    assert np.array_equal(_raw(fast.tile("U#1").payload), _raw(exact.tile("U#1").payload))
    assert status == want == [[4 | 16] * 4, [0] * 4, [1] * 4]  # OF|NX, exact, NV


EXPAND_OPS = ["TROWEXPANDMIN", "TROWEXPANDMAX", "TROWEXPANDADD", "TROWEXPANDSUB",
              "TROWEXPANDMUL", "TROWEXPANDDIV"]  # fmt: skip


@given(chains(), st.data())
def test_chained_row_expansions_match_the_exact_engine(
    case: tuple[DataType, int, int, list[np.ndarray], list[str]], data: st.DataObject
) -> None:
    """A full tile combined with a broadcast column, each result read by the next
    bundle (the fused expansion path and its published facts against the engine)."""
    dt, rows, cols, (full, other), _ = case
    column = np.ascontiguousarray(other[:, :, :1])
    ops = data.draw(st.lists(st.sampled_from(EXPAND_OPS), min_size=2, max_size=4))
    size = size_for(dt, rows, cols)
    bundles = []
    for k, op in enumerate(ops):
        srcs = "T#2, T#1" if k == 0 else "U#1, T#1"
        bundles.append(
            f"{op_def(op).bstart} {op}, {dt.name}\nB.DIM zero, {cols}, ->LB0\n"
            f"B.DIM zero, {rows}, ->LB1\nB.IOT {srcs}, mask=1111, last, ->U<{size}>\nBSTOP\n"
        )
    fast, status = _run(dt, [full, column], bundles)
    with fastpath.exact_only():
        exact, want_status = _run(dt, [full, column], bundles)
    assert status == want_status
    want = exact.tiles()
    got = fast.tiles()
    assert got.keys() == want.keys()
    for name, w in want.items():
        assert np.array_equal(_raw(got[name].payload), _raw(w.payload)), name
        assert np.array_equal(got[name].defined, w.defined), name


def _run_warm(
    dt: DataType, srcs: list[np.ndarray], program: Program, masks: int = 0b1111
) -> tuple[Machine, list[int]]:
    """Run ``program`` on a fresh machine holding ``srcs``; the program is the same
    object every time, so from the second run on its plans are ready and the fused
    runners (the lean clean-path one included) execute its bundles."""
    m = Machine(MachineConfig(gm_size=4096, depth=8))
    for a in srcs:
        m.push_tile("T", a, dt, mask=masks)
    m.run(program)
    return m, m.status.tolist()


@given(chains(), st.sampled_from([0b1111, 0b1111, 0b1100]), st.sampled_from(ROUTES))
def test_warm_plans_match_the_exact_engine(
    case: tuple[DataType, int, int, list[np.ndarray], list[str]], mask: int, route: str
) -> None:
    """The same chains as one program executed again with warm plans (fused runners,
    published facts, probe samples kept on tiles) against the exact engine, with the
    compiled FP32/FP64 arithmetic where it exists and with the numpy route."""
    dt, rows, cols, srcs, ops = case
    text = "".join(_program(dt, rows, cols, ops))
    if mask != 0b1111:
        text = text.replace("mask=1111", f"mask={mask:04b}")
    program = prog(text)
    with _route(route):
        _run_warm(dt, srcs, program, mask)  # cold: builds the plans
        fast, status = _run_warm(dt, srcs, program, mask)
    with fastpath.exact_only():
        exact, want_status = _run_warm(dt, srcs, prog(text), mask)
    assert status == want_status
    want = exact.tiles()
    got = fast.tiles()
    assert got.keys() == want.keys()
    for name, w in want.items():
        assert np.array_equal(_raw(got[name].payload), _raw(w.payload)), name
        assert np.array_equal(got[name].defined, w.defined), name


def test_warm_clean_sums_take_the_lean_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Warm FP32 sums of finite tiles on every PE never reach ``fastpath.binary``: the
    lean runner of the numpy route computes them into the new payload and publishes them
    as finite; a later overflow still takes the general path and is not declared
    finite."""
    with compiled.suspended():
        _lean_path_case(monkeypatch)


def _lean_path_case(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 2, 8)).astype(np.float32)
    b = rng.standard_normal((4, 2, 8)).astype(np.float32)
    big = np.full((4, 2, 8), np.finfo(np.float32).max, np.float32)
    text = "".join(_program(DataType.FP32, 2, 8, ["TADD", "TSUB", "TMUL"]))
    program = prog(text)
    want, want_status = _run_warm(DataType.FP32, [a, b], program)
    calls: list[str] = []
    real = fastpath.binary

    def spy(op: str, *args: object) -> object:
        calls.append(op)
        return real(op, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fastpath, "binary", spy)
    got, status = _run_warm(DataType.FP32, [a, b], program)
    assert calls == [] and status == want_status
    assert got.state.queues[1][0].finite is True
    for name, w in want.tiles().items():
        assert np.array_equal(_raw(got.tile(name).payload), _raw(w.payload)), name
    over, _ = _run_warm(DataType.FP32, [big, big], program)
    assert calls  # the overflow raised an IEEE exception: the general path ran
    assert over.state.queues[1][-1].finite is not True
    assert np.isinf(over.tile("U#3").values).all()


UNARY_OPS = ["TEXP", "TSQRT", "TLOG", "TRSQRT", "TRECIP", "TRELU", "TABS", "TNEG"]
REDUCE_OPS = ["TROWSUM", "TROWMAX", "TROWMIN"]


@given(chains(), st.data(), st.sampled_from([0b1111, 0b1100, 0b1000]))
def test_facts_through_unary_reduction_and_expansion_chains(
    case: tuple[DataType, int, int, list[np.ndarray], list[str]],
    data: st.DataObject,
    mask: int,
) -> None:
    """Every result that an operation publishes as finite (unary operations, row
    reductions, expansions, binary operations, on every PE or a subset) is read by the
    next bundle, warm and cold, against the exact engine: payload bits and per-bundle
    status."""
    dt, rows, cols, srcs, _ = case
    full, col = f"U<{size_for(dt, rows, cols)}>", f"M<{size_for(dt, rows, 1)}>"
    head = f"{dt.name}\nB.DIM zero, {cols}, ->LB0\nB.DIM zero, {rows}, ->LB1\n"
    m = f"mask={mask:04b}"
    steps = data.draw(
        st.lists(st.sampled_from(["unary", "binary", "reduce"]), min_size=2, max_size=5)
    )
    bundles = [f"BSTART.VEC TADD, {head}B.IOT T#2, T#1, {m}, last, ->{full}\nBSTOP\n"]
    for kind in steps:
        if kind == "unary":
            op = data.draw(st.sampled_from(UNARY_OPS))
            bundles.append(f"{op_def(op).bstart} {op}, {head}B.IOT U#1, {m}, last, ->{full}\n"
                           "BSTOP\n")  # fmt: skip
        elif kind == "binary":
            op = data.draw(st.sampled_from(CHAIN_OPS))
            bundles.append(f"{op_def(op).bstart} {op}, {head}B.IOT U#1, T#2, {m}, last, "
                           f"->{full}\nBSTOP\n")  # fmt: skip
        else:
            op, ex = (
                data.draw(st.sampled_from(REDUCE_OPS)),
                data.draw(st.sampled_from(EXPAND_OPS)),
            )
            bundles.append(f"{op_def(op).bstart} {op}, {head}B.IOT U#1, {m}, last, ->{col}\n"
                           "BSTOP\n")  # fmt: skip
            bundles.append(f"{op_def(ex).bstart} {ex}, {head}B.IOT U#1, M#1, {m}, last, "
                           f"->{full}\nBSTOP\n")  # fmt: skip
    program = prog("".join(bundles))

    def per_bundle() -> tuple[Machine, list[list[int]]]:
        return _run(dt, srcs, bundles, mask)

    def whole(p: Program) -> tuple[Machine, list[int]]:
        machine = Machine(MachineConfig(gm_size=4096, depth=8))
        for a in srcs:
            machine.push_tile("T", a, dt, mask=mask)
        machine.run(p)
        return machine, machine.status.tolist()

    fast, status = per_bundle()
    whole(program)  # cold plans
    warm, warm_status = whole(program)
    with fastpath.exact_only():
        exact, want_status = per_bundle()
        _, want_whole = whole(prog("".join(bundles)))
    assert status == want_status
    assert warm_status == want_whole
    want = exact.tiles()
    for m_ in (fast, warm):
        got = m_.tiles()
        assert got.keys() == want.keys()
        for name, w in want.items():
            assert np.array_equal(_raw(got[name].payload), _raw(w.payload)), name
            assert np.array_equal(got[name].defined, w.defined), name


@pytest.mark.parametrize(
    "first",
    ["TEXP", "TRECIP", "TROWSUM"],
)
def test_an_overflowing_unary_or_reduction_is_not_declared_finite(first: str) -> None:
    """exp(88.8) and 1/2**-149 overflow to +Inf, the row sum of the largest values too
    (OF): the next sum must see the infinity (+Inf + 0 is +Inf exactly, no flag; a
    result wrongly declared finite would take the clean path and report NX)."""
    dt = DataType.FP32
    x = {"TEXP": 88.8, "TRECIP": 2.0**-149, "TROWSUM": float(np.finfo(np.float32).max)}
    a = np.full((4, 1, 8), x[first], np.float32)
    head = "FP32\nB.DIM zero, 8, ->LB0\nB.DIM zero, 1, ->LB1\n"
    # x + 0 = x, both scanned: a copy of the source known to be finite
    known = f"BSTART.VEC TADD, {head}B.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n"
    add = f"BSTART.VEC TADD, {head}B.IOT U#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n"
    if first == "TROWSUM":
        bundles = [
            known,
            f"BSTART.SFU TROWSUM, {head}B.IOT U#1, mask=1111, last, ->M<128B>\nBSTOP\n",
            f"BSTART.SFU TROWEXPANDSUB, {head}B.IOT U#1, M#1, mask=1111, last, ->U<128B>\n"
            "BSTOP\n",
            add,
        ]
    else:
        bundles = [
            known,
            f"{op_def(first).bstart} {first}, {head}B.IOT U#1, mask=1111, last, ->U<128B>\n"
            "BSTOP\n",
            add,
        ]
    finite = np.zeros((4, 1, 8), np.float32)
    with fastpath.exact_only():
        exact, want = _run(dt, [finite, a], bundles)
    # cold, then warm plans (the bundle plans are shared: the fused runners run)
    for fast, status in (_run(dt, [finite, a], bundles), _run(dt, [finite, a], bundles)):
        assert status == want
        assert status[-1] == [0] * 4  # +-Inf + 0 = +-Inf exactly: no flag
        for name, w in exact.tiles().items():
            assert np.array_equal(_raw(fast.tiles()[name].payload), _raw(w.payload)), name
