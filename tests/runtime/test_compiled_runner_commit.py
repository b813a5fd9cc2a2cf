"""How the compiled runners publish: recycled payload storage, the tile constructor
they use, and the status the kernel ORs into the machine itself.

A runner takes its result's storage from a :class:`PayloadPool` (a block no published
tile references any more), builds the tile with :func:`tile_maker`, and, when its push
is the plain one (a full queue releasing a tile of the same mask and capacity), lets
the kernel OR each PE's status into the machine's status array. These tests pin each
against the general path: chains on full queues of every depth, with operands of every
class, the status cleared or replaced between runs, and payloads kept alive by the host.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import DataType
from ptoc.backend.isa import op as op_def
from ptoc.backend.isa.semantics import arith_kernels as ak
from ptoc.backend.isa.semantics import compiled, fastpath
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.payloads import PayloadPool
from ptoc.runtime.tiles import Layout, Tile, tile_maker

from .test_compiled_arith_runner import CODES, _operands, _raw
from .util import prog


@pytest.fixture(autouse=True)
def _needs_the_kernel() -> None:
    if ak.compiled_arith() is None:
        pytest.skip(f"the compiled kernel is not in use here: {compiled.status('arith')}")


def test_the_tile_maker_builds_what_the_constructor_builds() -> None:
    payload = np.zeros((4, 4, 8), np.float32)
    payload.flags.writeable = False
    args = (DataType.FP32, 4, 8, 1, 8, Layout.ROW_MAJOR, 0b0110, 128)
    want = Tile(*args, payload, None, True)
    want.serial, want.finite, want.address = 7, False, 1234
    got = tile_maker(*args, True)(payload, 7, False, 1234)
    for name in Tile.__slots__:
        g, w = getattr(got, name), getattr(want, name)
        assert g is w if isinstance(w, np.ndarray) else g == w, name


def test_a_pool_hands_out_storage_only_when_nothing_references_it() -> None:
    template = np.arange(4 * 2 * 8, dtype=np.float32).reshape(4, 2, 8)
    pool = PayloadPool((4, 2, 8), np.dtype(np.float32), template)
    held = []
    addresses = set()
    for _ in range(3 * 32):
        payload, address = pool.take()
        assert not payload.flags.writeable
        assert np.array_equal(payload, template)  # starts as the template
        assert address not in addresses  # no storage a held payload uses
        addresses.add(address)
        held.append(payload)
    # released payloads' blocks are handed out again, still holding what they held
    kept = held[-1]
    held.clear()
    again = {pool.take()[1] for _ in range(32)}
    assert again <= addresses
    assert ak.address(kept) not in again  # a view the host keeps pins its block
    derived = kept[1:, :1]  # so does any view derived from it
    del kept
    assert all(pool.take()[1] != ak.address(derived.base) for _ in range(64))


_OPS = ["TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN", "TROWSUM", "TCOLMAX"]


def _bundle(op: str, dt: DataType, mask: str, size: str, col: int) -> str:
    if op.startswith(("TROW", "TCOL")):  # a fold of the chain's last result into M
        dst = "128B" if op.startswith("TROW") or dt == DataType.FP32 else "256B"
        body = f"B.IOT U#1, mask={mask}, last, ->M<{dst}>\n"
    else:
        body = f"B.IOT U#1, T#1, mask={mask}, last, ->U<{size}>\n"
    return (
        f"{op_def(op).bstart} {op}, {dt.name}\nB.DIM zero, 5, ->LB0\nB.DIM zero, 3, ->LB1\n"
        f"B.DIM zero, {col}, ->LB2\n{body}BSTOP\n"
    )


@settings(max_examples=25, deadline=None)
@given(
    dt=st.sampled_from([DataType.FP32, DataType.FP64]),
    mask=st.sampled_from(["1111", "1000", "0100", "0001", "1100", "1110"]),
    depth=st.integers(1, 3),
    ops=st.lists(st.sampled_from(_OPS), min_size=4, max_size=10),
    seed=st.integers(0, 2**32 - 1),
    between=st.sampled_from(["keep", "clear", "replace"]),
)
def test_chains_on_full_queues_equal_the_general_path(
    dt: DataType, mask: str, depth: int, ops: list[str], seed: int, between: str
) -> None:
    """Chains whose pushes are the plain one (the queues fill after ``depth`` bundles),
    so the kernel ORs the statuses itself; between bundles the status is kept, cleared
    in place or replaced by a new array. Every tile, the status and the queues equal
    the exact engine's after every bundle."""
    size = "256B" if dt == DataType.FP32 else "512B"
    col = 8
    rng = np.random.default_rng(seed)
    srcs = [_operands(dt, rng, (4, 3, 5)) for _ in range(2)]

    def machine() -> Machine:
        m = Machine(MachineConfig(gm_size=4096, depth=depth))
        m.push_tile("T", srcs[0], dt, cols=col, size=CODES[size], mask=int(mask, 2))
        m.push_tile("U", srcs[1], dt, cols=col, size=CODES[size], mask=int(mask, 2))
        return m

    programs = [prog(_bundle(op, dt, mask, size, col)) for op in ops]
    for p in programs:  # warm: every plan's compiled runner is built
        machine().run(p)
    fast = machine()
    with fastpath.exact_only():
        exact = machine()
    held = []
    for k, p in enumerate(programs):
        fast.run(p)
        with fastpath.exact_only():
            exact.run(p)
        assert fast.status.tolist() == exact.status.tolist(), (k, ops[k])
        assert fast.snapshot() == exact.snapshot(), (k, ops[k])
        held.append(fast.state.queues[1][0].payload)  # pins its pool block
        if between == "clear":
            fast.state.status[:] = 0
            exact.state.status[:] = 0
        elif between == "replace":
            fast.state.status = fast.state.status.copy()
    for name, w in exact.tiles().items():
        g = fast.tiles()[name]
        assert np.array_equal(_raw(g.payload), _raw(w.payload)), name
        assert np.array_equal(g.defined, w.defined), name


def test_a_published_payload_never_changes_while_it_is_referenced() -> None:
    """The host keeps the payload of every result of a long chain on a depth-1 queue
    (so each tile leaves the queue at once): none of them changes afterwards."""
    dt = DataType.FP32
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((4, 1, 8)).astype(np.float32) for _ in range(2))
    text = "BSTART.VEC TADD, FP32\nB.DIM zero, 8, ->LB0\nB.DIM zero, 1, ->LB1\n"
    program = prog(text + "B.IOT U#1, T#1, mask=1111, last, ->U<128B>\nBSTOP\n")
    m = Machine(MachineConfig(gm_size=4096, depth=1))
    m.push_tile("T", b, dt, cols=8)
    m.push_tile("U", a, dt, cols=8)
    m.run(program)
    kept = []
    for _ in range(100):
        m.run(program)
        t = m.state.queues[1][0]
        kept.append((t.payload, _raw(t.payload).copy()))
    assert all(np.array_equal(_raw(p), c) for p, c in kept)
    assert len({ak.address(p) for p, _ in kept}) == len(kept)


def test_a_pickled_tile_forgets_its_payload_address() -> None:
    """A grid launch ships queues to other processes: there the payload lives elsewhere,
    so the address a compiled runner recorded must be asked again (every other field
    travels as it was)."""
    import pickle

    payload = np.arange(4 * 4 * 8, dtype=np.float32).reshape(4, 4, 8)
    payload.flags.writeable = False
    t = Tile(DataType.FP32, 4, 8, 1, 8, Layout.ROW_MAJOR, 0b1111, 128, payload, None, True)
    t.serial, t.finite, t.address = 9, True, ak.address(payload)
    u = pickle.loads(pickle.dumps(t))
    assert u.address == 0
    for name in Tile.__slots__:
        if name not in ("address", "payload"):
            assert getattr(u, name) == getattr(t, name), name
    assert np.array_equal(u.payload, payload)


@settings(max_examples=12, deadline=None)
@given(
    sources=st.lists(
        st.sampled_from(["U#1, T#1", "U#2, T#1", "U#2, U#1", "T#1, U#2"]),
        min_size=3,
        max_size=7,
    ),
    holds=st.lists(st.booleans(), min_size=7, max_size=7),
    seed=st.integers(0, 2**32 - 1),
)
def test_large_results_reuse_only_storage_nothing_holds(
    sources: list[str], holds: list[bool], seed: int
) -> None:
    """Large results (16x256 FP32 on four PEs) take the storage of the tile their push
    releases when nothing else holds it: never when that tile is a source of the bundle
    or the host keeps it. Every tile equals the exact engine's after every bundle and
    every kept tile stays as it was."""
    dt = DataType.FP32
    rng = np.random.default_rng(seed)
    srcs = [_operands(dt, rng, (4, 16, 256)) for _ in range(3)]
    head = "BSTART.VEC TADD, FP32\nB.DIM zero, 256, ->LB0\nB.DIM zero, 16, ->LB1\n"

    def machine() -> Machine:
        m = Machine(MachineConfig(gm_size=4096, depth=2))
        m.push_tile("T", srcs[0], dt, cols=256, size=CODES["16KB"])
        m.push_tile("U", srcs[1], dt, cols=256, size=CODES["16KB"])
        m.push_tile("U", srcs[2], dt, cols=256, size=CODES["16KB"])
        return m

    programs = [prog(head + f"B.IOT {s}, mask=1111, last, ->U<16KB>\nBSTOP\n") for s in sources]
    for p in programs:
        machine().run(p)  # warm
    fast = machine()
    with fastpath.exact_only():
        exact = machine()
    kept = []
    for k, p in enumerate(programs):
        fast.run(p)
        with fastpath.exact_only():
            exact.run(p)
        assert fast.snapshot() == exact.snapshot(), (k, sources[k])
        if holds[k]:
            t = fast.state.queues[1][0]
            kept.append((t, _raw(t.payload).copy()))
    for t, bits in kept:
        assert np.array_equal(_raw(t.payload), bits)


@pytest.mark.parametrize("hold", [False, True])
def test_a_released_tile_lends_its_storage_only_when_nothing_holds_it(
    monkeypatch: pytest.MonkeyPatch, hold: bool
) -> None:
    """A chain of large adds on a depth-2 queue: each push releases a result of the
    same runner, whose storage the next result takes -- unless the host keeps it."""
    taken: list[int] = []  # the bundles that took storage from the pool instead
    at = [0]  # the bundle running
    real = PayloadPool.take

    def counting(pool: PayloadPool) -> tuple[np.ndarray, int]:
        taken.append(at[0])
        return real(pool)

    dt = DataType.FP32
    rng = np.random.default_rng(11)
    a, b = (_operands(dt, rng, (4, 16, 256)) for _ in range(2))
    head = "BSTART.VEC TADD, FP32\nB.DIM zero, 256, ->LB0\nB.DIM zero, 16, ->LB1\n"
    program = prog(head + "B.IOT U#1, T#1, mask=1111, last, ->U<16KB>\nBSTOP\n")

    def machine() -> Machine:
        m = Machine(MachineConfig(gm_size=4096, depth=2))
        m.push_tile("T", a, dt, cols=256, size=CODES["16KB"])
        m.push_tile("U", b, dt, cols=256, size=CODES["16KB"])
        return m

    machine().run(program)  # warm
    monkeypatch.setattr(PayloadPool, "take", counting)  # (reclaim counts references)
    fast = machine()
    with fastpath.exact_only():
        exact = machine()
    kept = []
    for k in range(6):
        at[0] = k
        fast.run(program)
        with fastpath.exact_only():
            exact.run(program)
        assert fast.snapshot() == exact.snapshot()
        if hold:
            t = fast.state.queues[1][0]
            kept.append((t, _raw(t.payload).copy()))
    assert all(np.array_equal(_raw(t.payload), bits) for t, bits in kept)
    # the first two releases are the host's tiles (not the pool's storage)
    assert taken == ([0, 1, 2, 3, 4, 5] if hold else [0, 1])


def test_pools_give_their_budget_back_when_they_go() -> None:
    """The bytes pools keep count against one process-wide budget until a pool goes."""
    from ptoc.runtime import payloads

    before = payloads._total
    pool = PayloadPool((4, 64, 256), np.dtype(np.float32), None)
    kept = [pool.take() for _ in range(3)]
    assert payloads._total == before + 3 * 4 * 64 * 256 * 4
    del kept, pool
    assert payloads._total == before
