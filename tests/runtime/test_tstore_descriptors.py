"""One fused TSTORE plan meets sources of several descriptors (the identical bundle
after loads of other shapes, types or definedness): what it keeps per source descriptor
leaves the same memory, queues, status and faults as the traced generic run."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info

from ._progs import size_name, smallest_size
from .util import p2, warm_outcome

GM = 1 << 16
TYPES = [DataType.FP32, DataType.FP16, DataType.U8, DataType.S32]


def _load(dt: DataType, vr: int, vc: int, mask: str) -> str:
    eb = info(dt).carrier.itemsize
    col = p2(max(vc, 32 // eb))  # whole 32-byte rows, a SizeCode's divisor
    return f"""\
        BSTART.TLOAD {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOR a0, s0
        B.IOT mask={mask}, last, ->T<{size_name(smallest_size(dt, vr, col))}>
        BSTOP
        """


def _store(dt: DataType, mask: str, dims: tuple[int, int] | None) -> str:
    lbs = "" if dims is None else f"C.B.DIMI {dims[1]}, ->LB0\nC.B.DIMI {dims[0]}, ->LB1\n"
    return f"BSTART.TSTORE {dt.name}\n{lbs}B.IOR a1, s1\nB.IOT T#1, mask={mask}, last\nBSTOP\n"


@given(data=st.data())
def test_one_store_plan_many_source_descriptors(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    mask = data.draw(st.sampled_from(["1000", "1100", "1111"]))
    # the store's own shape (LBs), or the source's (no LBs: each source decides)
    dims = data.draw(st.one_of(st.none(), st.tuples(st.integers(1, 5), st.integers(1, 20))))
    store = _store(dt, mask, dims)
    text = ""
    for _ in range(data.draw(st.integers(2, 5))):
        other = data.draw(st.sampled_from([dt, dt, dt, *TYPES]))  # (another type: a fault)
        vr, vc = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 20))
        load_mask = data.draw(st.sampled_from([mask, mask, "1000", "1111"]))
        text += _load(other, vr, vc, load_mask) + store
    regs = {"a0": [0x100 + pe * 0x800 for pe in range(4)], "s0": [128] * 4,
            "a1": [0x4000 + pe * 0x800 for pe in range(4)], "s1": [128] * 4}  # fmt: skip
    gm = data.draw(st.binary(min_size=256, max_size=256)) * (GM // 256)
    assert warm_outcome(text, regs, gm, False, gm_size=GM) == warm_outcome(
        text, regs, gm, True, gm_size=GM
    )


def test_each_source_descriptor_takes_the_fused_store(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from ptoc.runtime import Machine, MachineConfig
    from ptoc.runtime.bundle import build_plan

    from .util import count_generic, prog

    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    store = _store(DataType.FP32, "1000", None)
    program = prog(_load(DataType.FP32, 2, 8, "1000") + store
                   + _load(DataType.FP32, 3, 5, "1000") + store)  # fmt: skip
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    generic = count_generic(monkeypatch)
    m = Machine(MachineConfig(gm_size=GM))
    for reg, v in (("a0", 0x100), ("s0", 128), ("a1", 0x4000), ("s1", 128)):
        m.set_gpr(reg, v)
    m.load_gm(0x100, np.arange(96, dtype=np.float32))
    m.run(program)
    assert generic == []
    got = m.read_gm(0x4000, np.float32, (3, 32))
    want = np.arange(96, dtype=np.float32).reshape(3, 32)
    assert np.array_equal(got[:3, :5], want[:3, :5]) and np.array_equal(
        got[:2, 5:8], want[:2, 5:8]
    )
