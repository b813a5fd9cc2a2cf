"""Run-time valid rows (ragged tails): ``pt.load(..., valid_rows=k)`` and what is computed
from it run over ``min(k, rows)`` rows, each bundle with ``B.DIM`` from a register; the
reference and the machine agree bit for bit for every count, on the default and a tiny
machine, and what the machine cannot do is a located error."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.errors import KernelError, ReferenceFault
from ptoc.execute import reference_of

TINY = ptoc.MachineConfig(depth=4, capacity=16384)
MACHINES = [pytest.param(None, id="default"), pytest.param(TINY, id="tiny")]
F32 = ptoc.fp32
ROWS, COLS, BLOCK = 48, 32, 16
T = ptoc.Tensor[F32, ROWS, COLS]

#: FP32 bit patterns across the binades: NaN payloads, +-0, +-inf, subnormals, the top
#: binade, ties and values below 1
_SPECIAL = np.array(
    [0x7FC00001, 0xFFC12345, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001,
     0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFE, 0x3FC00000, 0x40200000, 0x3E800000],
    np.uint32,
).view(np.float32)  # fmt: skip


def _x(seed: int, wild: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    if wild:
        mask = rng.random(x.shape) < 0.25
        x[mask] = rng.choice(_SPECIAL, int(mask.sum()))
    return x


@ptoc.kernel
def tail_ops(
    x: T, y: T, g: ptoc.Tensor[F32, 1, COLS], out: T, sums: T, n: ptoc.Scalar[ptoc.s32]
):
    """Every family that takes a counted tile, over blocks whose last one is short."""
    gamma = pt.load(g)
    for r in pt.range(0, n, BLOCK):
        a = pt.load(x, rows=(r, BLOCK), valid_rows=n - r)
        b = pt.load(y, rows=(r, BLOCK), valid_rows=n - r)
        c = pt.maximum(a, b) * 0.5 + pt.abs(a)  # binary, tile-scalar, unary
        m = pt.row_max(c)  # a row reduction: (BLOCK, 1) with the same count
        d = pt.exp(c - m) * gamma  # row and column broadcasts
        e = pt.where(a > b, d, pt.cast(pt.cast(b, ptoc.fp16), F32))  # compare, select, cast
        pt.store(out, e, rows=(r, BLOCK))
        pt.store(sums, pt.col_sum(e), rows=(r, 1))  # a column fold of the valid rows


def _inputs(seed: int, n: int, wild: bool = False) -> dict:
    g = np.random.default_rng(seed + 100).standard_normal((1, COLS)).astype(np.float32)
    return {"x": _x(seed, wild), "y": _x(seed + 1, wild), "g": g, "n": n}


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("n", [1, 5, 16, 17, 31, 48])
def test_every_counted_family_verifies(machine, n: int) -> None:
    got = ptoc.verify(ptoc.compile(tail_ops, machine), **_inputs(n, n))
    assert not got["out"][n:].any()  # rows past the count are never written
    last = (n - 1) // BLOCK * BLOCK  # the start of the last (maybe short) block
    assert got["sums"][last].any() and not got["sums"][last + 1 :].any()


def test_the_reference_folds_only_the_valid_rows() -> None:
    """The column sum of the short block adds its valid rows, nothing else (numpy on the
    same rows, the same order)."""
    n = 21
    inputs = _inputs(3, n)
    ref = reference_of(tail_ops, inputs)
    e = ref["out"][BLOCK:n]
    want = e[0].copy()
    for row in e[1:]:
        want = want + row
    assert np.array_equal(ref["sums"][BLOCK].view(np.uint32), want.view(np.uint32))


@examples(12)
@given(
    n=st.integers(1, ROWS),
    seed=st.integers(0, 2**16),
    tiny=st.booleans(),
)
def test_random_counts_and_special_values_verify(n: int, seed: int, tiny: bool) -> None:
    """Random counts over inputs with NaN payloads, signed zeros, infinities, subnormals
    and the top binade: machine == reference in payload bits and definedness (verify
    compares every stored element bit for bit; rows past the count stay zero)."""
    prog = _compiled(tiny)
    got = ptoc.verify(prog, **_inputs(seed, n, wild=True))
    assert not got["out"][n:].any()


_PROGRAMS: dict[bool, ptoc.Program] = {}


def _compiled(tiny: bool) -> ptoc.Program:
    if tiny not in _PROGRAMS:
        _PROGRAMS[tiny] = ptoc.compile(tail_ops, TINY if tiny else None)
    return _PROGRAMS[tiny]


def test_each_bundle_of_the_body_counts_its_rows_in_a_register() -> None:
    lines = ptoc.compile(tail_ops).asm().splitlines()
    counted = [x for x in lines if x.startswith("B.DIM ") and x.endswith("0, ->LB1")]
    assert len(counted) >= 12  # the two loads and every op on the counted tiles
    assert len({x.split()[1] for x in counted}) == 1  # one count, in one register
    (loop,) = ptoc.compile(tail_ops).stats().loops
    assert loop.overhead == 0


def test_program_size_does_not_depend_on_the_count() -> None:
    prog = _compiled(False)
    runs = [ptoc.run(prog, **_inputs(0, n)) for n in (1, 17, 48)]
    (loop,) = prog.stats().loops
    assert [r.bundles for r in runs] == [runs[0].bundles + k * loop.bundles for k in (0, 1, 2)]


# ---------------------------------------------------------------- what is refused


def _error(kernel) -> KernelError:  # type: ignore[no-untyped-def]
    with pytest.raises(KernelError) as e:
        ptoc.compile(kernel)
    return e.value


def test_a_counted_tile_with_a_full_tile_is_a_located_error() -> None:
    @ptoc.kernel
    def mixed(x: T, out: T, n: ptoc.Scalar[ptoc.s32]):
        full = pt.load(x, rows=(0, BLOCK))
        for r in pt.range(0, n, BLOCK):
            t = pt.load(x, rows=(r, BLOCK), valid_rows=n - r)
            pt.store(out, t + full, rows=(r, BLOCK))

    e = _error(mixed)
    assert (
        "mixes a tile with a run-time number of valid rows and one whose rows are all" in str(e)
    )
    assert e.loc is not None and e.loc.line > 0


def test_two_different_counts_are_a_located_error() -> None:
    @ptoc.kernel
    def two(x: T, out: T, n: ptoc.Scalar[ptoc.s32]):
        a = pt.load(x, rows=(0, BLOCK), valid_rows=n)
        b = pt.load(x, rows=(BLOCK, BLOCK), valid_rows=n - 1)
        pt.store(out, a + b)

    assert "different run-time numbers of valid rows" in str(_error(two))


def test_other_families_refuse_counted_tiles() -> None:
    @ptoc.kernel
    def trans(x: T, out: ptoc.Tensor[F32, COLS, BLOCK], n: ptoc.Scalar[ptoc.s32]):
        pt.store(out, pt.transpose(pt.load(x, rows=(0, BLOCK), valid_rows=n)))

    assert "does not take tiles with a run-time number of valid rows or columns" in str(
        _error(trans)
    )


def test_a_carried_counted_tile_is_refused() -> None:
    @ptoc.kernel
    def carried(x: T, out: T, n: ptoc.Scalar[ptoc.s32]):
        acc = pt.load(x, rows=(0, BLOCK), valid_rows=n)
        for r in pt.range(0, 2, 1):
            acc = acc * 2.0
            del r
        pt.store(out, acc, rows=(0, BLOCK))

    assert "would carry a tile with a run-time number of valid rows" in str(_error(carried))


def test_valid_rows_is_a_run_time_integer() -> None:
    @ptoc.kernel
    def literal(x: T, out: T):
        pt.store(out, pt.load(x, rows=(0, BLOCK), valid_rows=3), rows=(0, BLOCK))

    e = _error(literal)
    assert "valid_rows=3 is a Python integer" in str(e) and "rows=(start, 3)" in (e.hint or "")


def test_a_count_below_one_stops_the_reference_and_the_machine() -> None:
    @ptoc.kernel
    def empty(x: T, out: T, n: ptoc.Scalar[ptoc.s32]):
        pt.store(out, pt.load(x, rows=(0, BLOCK), valid_rows=n), rows=(0, BLOCK))

    prog = ptoc.compile(empty)
    x = _x(0)
    with pytest.raises(ReferenceFault, match=r"0 valid rows is outside 1\.\.16"):
        reference_of(empty, {"x": x, "n": 0})
    with pytest.raises(ptoc.MachineFault, match="zero LB1"):
        ptoc.run(prog, x=x, n=0)
    got = ptoc.run(prog, x=x, n=4)["out"]
    assert np.array_equal(got[:4], x[:4]) and not got[4:].any()


# ---------------------------------------------------------------- ragged columns

W = ptoc.Tensor[F32, 16, 48]


@ptoc.kernel
def col_tail(x: W, out: W, sums: W, m: ptoc.Scalar[ptoc.s32]):
    """Column blocks whose last one is short: row reductions fold the valid columns,
    column reductions and their broadcasts keep the count."""
    for c in pt.range(0, m, 16):
        t = pt.load(x, cols=(c, 16), valid_cols=m - c)
        s = pt.row_sum(t)  # (16, 1), all rows valid: the columns fold
        u = t / s - pt.col_max(t)  # a row broadcast, and a column broadcast of (1, count)
        pt.store(out, u, cols=(c, 16))
        pt.store(sums, s, cols=(c, 1))


@ptoc.kernel
def both_tails(x: W, out: W, n: ptoc.Scalar[ptoc.s32], m: ptoc.Scalar[ptoc.s32]):
    """Blocks ragged in both directions."""
    for r in pt.range(0, n, 8):
        for c in pt.range(0, m, 16):
            t = pt.load(x, rows=(r, 8), cols=(c, 16), valid_rows=n - r, valid_cols=m - c)
            pt.store(out, pt.exp(t) + pt.row_max(t), rows=(r, 8), cols=(c, 16))


def _w(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((16, 48)).astype(np.float32)


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("m", [1, 7, 16, 33, 48])
def test_ragged_columns_verify(machine, m: int) -> None:
    x = _w(m)
    got = ptoc.verify(ptoc.compile(col_tail, machine), x=x, m=m)
    assert not got["out"][:, m:].any()
    last = (m - 1) // 16 * 16
    s = x[:, last:m]
    want = s[:, 0].copy()
    for k in range(1, s.shape[1]):
        want = want + s[:, k]  # TROWSUM folds left to right over the valid columns
    assert np.array_equal(got["sums"][:, last].view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize(("n", "m"), [(1, 1), (5, 20), (16, 48), (9, 47)])
def test_ragged_rows_and_columns_verify(machine, n: int, m: int) -> None:
    got = ptoc.verify(ptoc.compile(both_tails, machine), x=_w(n * m), n=n, m=m)["out"]
    assert not got[n:].any() and not got[:, m:].any()


def test_a_ragged_column_tile_with_a_static_row_vector_is_refused() -> None:
    @ptoc.kernel
    def scaled(x: W, g: ptoc.Tensor[F32, 1, 16], out: W, m: ptoc.Scalar[ptoc.s32]):
        t = pt.load(x, cols=(0, 16), valid_cols=m)
        pt.store(out, t * pt.load(g), cols=(0, 16))

    e = _error(scaled)
    assert "valid columns and one whose columns are all valid" in str(e)
