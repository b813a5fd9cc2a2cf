"""The executor's compiled runner of FP32/FP64 TADD, TSUB, TMUL and TDIV.

Warm two-source bundles on every PE run in one call of the certified kernel
(``arith_kernels``), whatever their operands hold. These tests pin, against the exact
engine, every published tile (payload bits with padding, definedness), the status after
every bundle and the "finite" fact each result carries to the next bundle, for operands
of every class and for tiles whose valid region is smaller than the tile; that the runner
really ran; that it steps aside for the exact engine and the numpy route; and that a
capacity fault on its path leaves the machine as it was.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import op as op_def
from ptoc.backend.isa.fields import SIZE_NAMES
from ptoc.backend.isa.semantics import arith_kernels as ak
from ptoc.backend.isa.semantics import compiled, fastpath
from ptoc.runtime import Machine, MachineConfig, TileAllocationFault
from ptoc.runtime.ops import native
from ptoc.runtime.payloads import PayloadPool
from ptoc.runtime.tiles import Layout, Tile

from .util import prog

OPS = ["TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN"]
EXPANSIONS = [f"T{axis}EXPAND{op}" for axis in ("ROW", "COL")
              for op in ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN")]  # fmt: skip
UINT = {32: np.uint32, 64: np.uint64}
CODES = {name: code for code, name in SIZE_NAMES.items()}


@pytest.fixture(autouse=True)
def _needs_the_kernel() -> None:
    if ak.compiled_arith() is None:
        pytest.skip(f"the compiled kernel is not in use here: {compiled.status('arith')}")


def _operands(dt: DataType, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random bit patterns (every binade, NaN payloads) mixed with ordinary values (so
    that chains stay interesting), ones (exact results) and the edges."""
    carrier = info(dt).carrier
    w = info(dt).bits
    n = int(np.prod(shape))
    bits = np.frombuffer(rng.bytes(n * w // 8), UINT[w]).view(carrier)
    fin = np.finfo(carrier)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, fin.max, -fin.max, fin.tiny,
                      fin.smallest_subnormal, 1.0, 2.0, -3.0], carrier)  # fmt: skip
    ordinary = rng.standard_normal(n).astype(carrier)
    pick = rng.integers(0, 4, n)
    out = np.where(pick == 0, bits, ordinary)
    out = np.where(pick == 1, edges[rng.integers(0, len(edges), n)], out)
    out = np.where(pick == 2, np.ones(n, carrier), out)
    return out.reshape(shape)


def _text(
    dt: DataType,
    ops: list[str],
    vr: int,
    vc: int,
    col: int,
    size: str,
    mask: str = "1111",
    pad: str = "",
) -> str:
    """The bundles, each reading the previous result; ``pad``: a B.DATR PadValue."""
    out = ""
    for k, op in enumerate(ops):
        srcs = "T#2, T#1" if k == 0 else "U#1, T#1"
        out += (
            f"{op_def(op).bstart} {op}, {dt.name}\n{f'B.DATR {pad}' + chr(10) if pad else ''}"
            f"B.DIM zero, {vc}, ->LB0\nB.DIM zero, {vr}, ->LB1\nB.DIM zero, {col}, ->LB2\n"
            f"B.IOT {srcs}, mask={mask}, last, ->U<{size}>\nBSTOP\n"
        )
    return out


def _machine(
    dt: DataType, srcs: list[np.ndarray], col: int, size: str, mask: str = "1111", **config: int
) -> Machine:
    """A machine whose hand T holds ``srcs`` as tiles of Col ``col`` and SizeCode ``size``
    (the destinations' shape)."""
    m = Machine(MachineConfig(gm_size=4096, depth=8, **config))
    for a in srcs:
        m.push_tile("T", a, dt, cols=col, size=CODES[size], mask=int(mask, 2))
    return m


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record every run of a compiled runner from now on: each takes its result's storage
    from its payload pool right before its one kernel call (the number of PEs of that
    storage is recorded)."""
    seen: list[int] = []
    real = PayloadPool.take

    def counting(pool: PayloadPool) -> tuple[np.ndarray, int]:
        payload, address = real(pool)
        seen.append(payload.shape[0])
        return payload, address

    monkeypatch.setattr(PayloadPool, "take", counting)
    return seen


def _run(m: Machine, text_or_program: object) -> list[list[int]]:
    """Run bundle by bundle, clearing the sticky status after each: each bundle's own."""
    statuses = []
    for program in text_or_program:  # type: ignore[attr-defined]
        m.run(program)
        statuses.append(m.status.tolist())
        m.state.status[:] = 0
    return statuses


@pytest.mark.parametrize("dt", [DataType.FP32, DataType.FP64])
@pytest.mark.parametrize("shape", [(2, 8, 8, "256B"), (3, 5, 8, "256B"), (1, 16, 32, "2KB")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_warm_bundles_equal_the_exact_engine(
    monkeypatch: pytest.MonkeyPatch, dt: DataType, shape: tuple, seed: int
) -> None:
    """Chains of the six operations (each result read by the next bundle, so the
    published "finite" fact is used) on tiles whose valid region is the whole tile or
    smaller, with operands of every class."""
    _chain(monkeypatch, dt, shape, seed, "1111", ["", "Zero", "Max"][seed])


@pytest.mark.parametrize("mask", ["1000", "0100", "0001", "1100", "1110"])
@pytest.mark.parametrize("dt", [DataType.FP32, DataType.FP64])
def test_warm_bundles_on_a_run_of_pes(
    monkeypatch: pytest.MonkeyPatch, mask: str, dt: DataType
) -> None:
    """The same chains on each other PE_MASK that has a PEMode encoding (each a run of
    consecutive PEs): the other PEs' storage is poison and their status untouched."""
    _chain(monkeypatch, dt, (3, 5, 8, "512B"), int(mask, 2), mask, "Min")
    _chain(monkeypatch, dt, (3, 5, 8, "512B"), int(mask, 2), mask)


def _chain(
    monkeypatch: pytest.MonkeyPatch,
    dt: DataType,
    shape: tuple,
    seed: int,
    mask: str,
    pad: str = "",
) -> None:
    vr, vc, col, size = shape
    if dt == DataType.FP64 and size == "256B":
        size = "512B"
    rng = np.random.default_rng(seed)
    srcs = [_operands(dt, rng, (4, vr, vc)) for _ in range(2)]
    ops = [OPS[k] for k in rng.permutation(len(OPS))] + [OPS[int(rng.integers(len(OPS)))]]

    def bundles() -> list:
        return [prog(_text(dt, [op], vr, vc, col, size, mask, pad)) for op in ops]

    warm = bundles()
    _run(_machine(dt, srcs, col, size, mask), warm)  # builds every bundle's plan
    seen = _counting(monkeypatch)
    fast = _machine(dt, srcs, col, size, mask)
    status = _run(fast, warm)
    pes = [pe for pe in range(4) if mask[pe] == "1"]
    assert seen == [4] * len(ops)  # the kernel ran every bundle (statuses: on its PEs)
    with fastpath.exact_only():
        exact = _machine(dt, srcs, col, size, mask)
        want_status = _run(exact, bundles())
    assert status == want_status
    _same_tiles(fast, exact, pes, vr, vc)


def _same_tiles(fast: Machine, exact: Machine, pes: list[int], vr: int, vc: int) -> None:
    """Every tile of ``fast`` has the payload bits and definedness of ``exact``'s, and
    each result's "finite" fact (hand U) is true of its valid region on ``pes``."""
    want, got = exact.tiles(), fast.tiles()
    assert got.keys() == want.keys()
    for name, w in want.items():
        g = got[name]
        assert np.array_equal(_raw(g.payload), _raw(w.payload)), name
        assert np.array_equal(g.defined, w.defined), name
    for t in fast.state.queues[1]:  # the results: their facts are true
        if t.finite is not None:
            assert t.finite == bool(np.isfinite(t.payload[pes, :vr, :vc]).all())


SCALAR_OPS = ["TADDS", "TSUBS", "TMULS", "TDIVS", "TMAXS", "TMINS"]


def _scalar_words(dt: DataType, rng: np.random.Generator) -> list[int]:
    """Four per-PE GPR words for a tile-scalar operand: an operand value of every class
    (NaN payloads, signalling ones among them, infinities, zeros, subnormals, ordinary
    values) in the low element bits and garbage above them, every PE the same half of
    the time."""
    w = info(dt).bits
    vals = _operands(dt, rng, (4,)).view(UINT[w]).astype(np.uint64).tolist()
    if w == 32:  # bits above the element never participate
        vals = [v | (int(rng.integers(0, 2**32)) << 32) for v in vals]
    if rng.integers(0, 2):
        vals = [vals[0]] * 4
    return [int(v) for v in vals]


@pytest.mark.parametrize("dt", [DataType.FP32, DataType.FP64])
@pytest.mark.parametrize("mask", ["1111", "1000", "0100", "1110"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_warm_tile_scalar_bundles_equal_the_exact_engine(
    monkeypatch: pytest.MonkeyPatch, dt: DataType, mask: str, seed: int
) -> None:
    """Chains of TADDS .. TMINS (each reading the previous result) whose scalar is each
    PE's B.IOR GPR, or 0 where B.IOR is omitted, run by the kernel with a zero-stride
    second operand: the same tiles, statuses and "finite" facts as the exact engine."""
    vr, vc, col, size = (3, 5, 8, "512B")
    rng = np.random.default_rng(seed)
    src = _operands(dt, rng, (4, vr, vc))
    ops = [SCALAR_OPS[k] for k in rng.permutation(len(SCALAR_OPS))] * 2
    regs = [f"a{k + 1}" for k in range(len(ops))]
    words = [_scalar_words(dt, rng) for _ in ops]
    omit = [bool(rng.integers(0, 4) == 0) for _ in ops]

    def bundles() -> list:
        out = []
        for k, op in enumerate(ops):
            ior = "" if omit[k] else f"B.IOR {regs[k % 7]}\n"
            out.append(prog(
                f"{op_def(op).bstart} {op}, {dt.name}\n{ior}B.DIM zero, {vc}, ->LB0\n"
                f"B.DIM zero, {vr}, ->LB1\nB.DIM zero, {col}, ->LB2\n"
                f"B.IOT {'T#1' if k == 0 else 'U#1'}, mask={mask}, last, ->U<{size}>\nBSTOP\n"
            ))  # fmt: skip
        return out

    def machine() -> Machine:
        return _machine(dt, [src], col, size, mask)

    def run(m: Machine, programs: list) -> list[list[int]]:
        statuses = []
        for k, program in enumerate(programs):
            for pe in range(4):
                m.set_gpr(regs[k % 7], words[k][pe], pe=pe)
            m.run(program)
            statuses.append(m.status.tolist())
            m.state.status[:] = 0
        return statuses

    warm = bundles()
    run(machine(), warm)  # builds every bundle's plan
    seen = _counting(monkeypatch)
    fast = machine()
    status = run(fast, warm)
    assert seen == [4] * len(ops)  # the kernel ran every bundle
    with fastpath.exact_only():
        exact = machine()
        want_status = run(exact, bundles())
    assert status == want_status
    _same_tiles(fast, exact, [pe for pe in range(4) if mask[pe] == "1"], vr, vc)


@pytest.mark.parametrize("dt", [DataType.FP32, DataType.FP64])
@pytest.mark.parametrize("op", EXPANSIONS)
def test_warm_expansions_equal_the_exact_engine(
    monkeypatch: pytest.MonkeyPatch, dt: DataType, op: str
) -> None:
    """A full tile with a broadcast column (row expansions) or row (column expansions),
    each result read by the next bundle, operands of every class, a padded destination."""
    vr, vc, col = 3, 6, 8
    size = "256B" if dt == DataType.FP32 else "512B"
    rng = np.random.default_rng(len(op))
    full = _operands(dt, rng, (4, vr, vc))
    row = op.startswith("TROW")
    b = _operands(dt, rng, (4, vr, 1) if row else (4, 1, vc))
    b_col = 1 if row else col

    def machine() -> Machine:
        m = Machine(MachineConfig(gm_size=4096, depth=8))
        m.push_tile("T", full, dt, cols=col, size=CODES[size])
        m.push_tile("T", b, dt, cols=b_col)
        return m

    def bundle(first: bool) -> str:
        srcs = "T#2, T#1" if first else "U#1, T#1"
        return (
            f"{op_def(op).bstart} {op}, {dt.name}\nB.DIM zero, {vc}, ->LB0\n"
            f"B.DIM zero, {vr}, ->LB1\nB.DIM zero, {col}, ->LB2\n"
            f"B.IOT {srcs}, mask=1111, last, ->U<{size}>\nBSTOP\n"
        )

    bundles = [prog(bundle(True)), prog(bundle(False)), prog(bundle(False))]
    _run(machine(), bundles)  # warm
    seen = _counting(monkeypatch)
    fast = machine()
    status = _run(fast, bundles)
    assert seen == [4, 4, 4]
    with fastpath.exact_only():
        exact = machine()
        cold = [prog(bundle(True)), prog(bundle(False)), prog(bundle(False))]
        want_status = _run(exact, cold)
    assert status == want_status
    for name, w in exact.tiles().items():
        g = fast.tiles()[name]
        assert np.array_equal(_raw(g.payload), _raw(w.payload)), name
        assert np.array_equal(g.defined, w.defined), name
    for t in fast.state.queues[1]:
        assert t.finite == bool(np.isfinite(t.payload[:, :vr, :vc]).all())


REDUCTIONS = [f"T{axis}{op}" for axis in ("ROW", "COL") for op in ("SUM", "PROD", "MAX", "MIN")]


@pytest.mark.parametrize("dt", [DataType.FP32, DataType.FP64])
@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("mask", ["1111", "1000", "0001", "1110"])
def test_warm_reductions_equal_the_exact_engine(
    monkeypatch: pytest.MonkeyPatch, dt: DataType, op: str, mask: str
) -> None:
    """Row and column folds of a padded tile (valid region smaller than the tile),
    operands of every class, with and without a PadValue, on every PE and on runs."""
    vr, vc, col = 5, 13, 16
    size = "512B" if dt == DataType.FP32 else "1KB"
    rng = np.random.default_rng(len(op) + len(mask))
    src = _operands(dt, rng, (4, vr, vc))
    row = op.startswith("TROW")
    dst = "->U<128B>" if row else f"->U<{'128B' if dt == DataType.FP32 else '256B'}>"

    def machine() -> Machine:
        m = Machine(MachineConfig(gm_size=4096, depth=8))
        m.push_tile("T", src, dt, cols=col, size=CODES[size], mask=int(mask, 2))
        return m

    def bundles(pad: str) -> list:
        datr = f"B.DATR {pad}\n" if pad else ""
        dims = f"B.DIM zero, {vc}, ->LB0\nB.DIM zero, {vr}, ->LB1\nB.DIM zero, {col}, ->LB2\n"
        text = f"{op_def(op).bstart} {op}, {dt.name}\n{datr}{dims}"
        return [prog(text + f"B.IOT T#1, mask={mask}, last, {dst}\nBSTOP\n")]

    for pad in ("", "Max"):
        warm = bundles(pad)
        _run(machine(), warm)
        seen = _counting(monkeypatch)
        fast = machine()
        status = _run(fast, warm)
        monkeypatch.undo()
        assert seen == [4], (op, pad)
        with fastpath.exact_only():
            exact = machine()
            want_status = _run(exact, bundles(pad))
        assert status == want_status
        for name, w in exact.tiles().items():
            g = fast.tiles()[name]
            assert np.array_equal(_raw(g.payload), _raw(w.payload)), (name, pad)
            assert np.array_equal(g.defined, w.defined), (name, pad)


def test_the_runner_steps_aside_for_the_exact_engine_and_the_numpy_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dt = DataType.FP32
    rng = np.random.default_rng(5)
    srcs = [rng.standard_normal((4, 2, 8)).astype(np.float32) for _ in range(2)]
    program = prog(_text(dt, ["TADD"], 2, 8, 8, "256B"))
    _machine(dt, srcs, 8, "256B").run(program)  # cold: builds the plan
    seen = _counting(monkeypatch)
    m = _machine(dt, srcs, 8, "256B")
    m.run(program)
    assert seen == [4]
    for context in (fastpath.exact_only, compiled.suspended):
        with context():
            other = _machine(dt, srcs, 8, "256B")
            other.run(program)
        assert seen == [4]  # the general path ran
        assert np.array_equal(_raw(other.tile("U#1").payload), _raw(m.tile("U#1").payload))


def test_a_capacity_fault_on_the_compiled_path_leaves_no_trace() -> None:
    """The kernel computes before the destination is pushed: when the push is refused,
    the general path raises the fault and neither the queues nor the status change."""
    dt = DataType.FP32
    big = np.full((4, 1, 8), np.finfo(np.float32).max, np.float32)  # the sum overflows
    program = prog(_text(dt, ["TADD"], 1, 8, 8, "32KB"))
    _machine(dt, [big, big], 8, "32KB").run(program)  # warm
    m = _machine(dt, [big, big], 8, "32KB", capacity=65536)
    m.state.status[:] = 0
    before = m.snapshot()
    with pytest.raises(TileAllocationFault):
        m.run(program)
    assert m.snapshot() == before


def test_a_payload_that_is_not_dense_is_left_to_the_general_path() -> None:
    storage = np.zeros((4, 2, 16), np.float32)
    storage.flags.writeable = False
    view = storage[:, :, :8]
    t = Tile(DataType.FP32, 2, 8, 2, 8, Layout.ROW_MAJOR, 0b1111, 256, view)
    dense = Tile(DataType.FP32, 2, 16, 2, 16, Layout.ROW_MAJOR, 0b1111, 256, storage)
    strides = (2 * 8 * 4, 8 * 4, 4)
    assert native._address(t, strides) == -1
    assert native._address(dense, (2 * 16 * 4, 16 * 4, 4)) == ak.address(storage)


def test_a_program_that_ran_pickles_without_its_executable_form() -> None:
    """A grid launch ships programs to other processes: the executable form a run keeps
    on the Program (closures, the compiled kernels' handles) stays behind and is rebuilt
    there."""
    dt = DataType.FP32
    rng = np.random.default_rng(6)
    srcs = [rng.standard_normal((4, 2, 8)).astype(np.float32) for _ in range(2)]
    program = prog(_text(dt, ["TADD", "TMAX"], 2, 8, 8, "256B"))
    here = _machine(dt, srcs, 8, "256B")
    here.run(program)
    copy = pickle.loads(pickle.dumps(program))
    assert copy == program and "_executable_steps" not in copy.__dict__
    there = _machine(dt, srcs, 8, "256B")
    there.run(copy)
    assert np.array_equal(_raw(there.tile("U#1").payload), _raw(here.tile("U#1").payload))
