"""The fused TLOAD and TSTORE (``runtime/ops/memory_fused.py``) against the generic
runners: the same tiles, memory bytes, queues and faults, for aligned and misaligned
bases and strides, rows that overlap or coincide, transfers that end at the last byte
of memory or one element beyond it, addresses that wrap, and every PE mask; and they
are taken in the common case."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType
from ptoc.runtime import Machine, MachineConfig, MachineFault
from ptoc.runtime.gm import new_memory
from ptoc.runtime.grid import AccessLog
from ptoc.runtime.ops import memory_fused

from ._progs import p2, size_name, smallest_size
from .util import count_builds, count_generic, prog

GM = 1 << 16
TYPES = [DataType.FP32, DataType.FP16, DataType.U8, DataType.S64, DataType.BF16]
MASKS = ["1000", "0100", "0010", "0001", "1100", "1110", "1111"]


def _program(dt: DataType, vr: int, vc: int, mask: str, store: bool) -> str:
    eb = {1: 1, 2: 2, 4: 4, 8: 8}[np.dtype(_carrier(dt)).itemsize]
    col = p2(max(vc, 32 // eb))  # whole 32-byte rows, a SizeCode's divisor
    size = size_name(smallest_size(dt, vr, col))
    text = f"""\
        BSTART.TLOAD {dt.name}
        C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        B.IOR a0, s0
        B.IOT mask={mask}, last, ->T<{size}>
        BSTOP
        """
    if store:
        text += f"""\
        BSTART.TSTORE {dt.name}
        B.IOR a1, s1
        B.IOT T#1, mask={mask}, last
        BSTOP
        """
    return text


def _carrier(dt: DataType) -> np.dtype:
    from ptoc.backend.isa import info

    return info(dt).carrier


def _outcome(
    text: str,
    regs: dict[str, list[int]],
    gm: bytes,
    generic: bool,
    sparse: bool = False,
    logged: bool = False,
) -> object:
    """What a run leaves: the fault or nothing, the whole machine, and with ``logged``
    the grid access log's records (``sparse``: a paged memory of the same size)."""
    program = prog(text)
    # a first run prepares each bundle's plan; only a prepared plan takes a fused form
    Machine(MachineConfig(gm_size=GM)).run(program)
    m = Machine(MachineConfig(gm_size=GM), gm=new_memory(GM, sparse) if sparse else None)
    m.load_gm(0, np.frombuffer(gm, np.uint8))
    for name, values in regs.items():
        for pe, v in enumerate(values):
            m.set_gpr(name, v, pe=pe)
    log = m.state.access_log = AccessLog() if logged else None
    try:
        m.run(program, trace=generic)  # a traced run takes the generic runners
        out: tuple[object, ...] = ("ran",)
    except MachineFault as f:
        out = ("fault", type(f).__name__, str(f))
    m.state.access_log = None
    records = [] if log is None else [
        (s.tolist(), e.tolist(), w) for s, e, _, w in log.records
    ]  # fmt: skip
    return (*out, m.snapshot(), records)


def _address(eb: int) -> st.SearchStrategy[int]:
    aligned = st.integers(0, GM // eb - 1).map(lambda k: k * eb)
    edge = st.sampled_from([GM - eb, GM - 64 * eb, GM, GM + eb, (1 << 64) - eb, 0])
    return st.one_of(aligned, aligned, edge, st.integers(0, GM + 64))


@given(data=st.data())
def test_fused_transfers_equal_the_generic_runners(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    eb = np.dtype(_carrier(dt)).itemsize
    vr, vc = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 24))
    mask = data.draw(st.sampled_from(MASKS))
    store = data.draw(st.booleans())
    row = vc * eb
    strides = st.one_of(
        st.sampled_from([0, eb, row, row + eb, 3 * row, row - eb if row > eb else 0]),
        st.integers(0, 4 * row).map(lambda s: s - s % eb),
        st.integers(0, 4 * row),
        st.sampled_from([(1 << 64) - row, 1 << 63]),
    )
    pes = st.lists
    regs = {
        "a0": data.draw(pes(_address(eb), min_size=4, max_size=4)),
        "s0": data.draw(pes(strides, min_size=4, max_size=4)),
        "a1": data.draw(pes(_address(eb), min_size=4, max_size=4)),
        "s1": data.draw(pes(strides, min_size=4, max_size=4)),
    }
    if data.draw(st.booleans()):  # the kernel's usual case: every PE the same
        regs = {k: [v[0]] * 4 for k, v in regs.items()}
    gm = data.draw(st.binary(min_size=256, max_size=256)) * (GM // 256)
    text = _program(dt, vr, vc, mask, store)
    sparse, logged = data.draw(st.booleans()), data.draw(st.booleans())
    fused = _outcome(text, regs, gm, False, sparse, logged)
    assert fused == _outcome(text, regs, gm, True, sparse, logged)


def test_the_common_case_takes_the_fused_forms(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    built = count_builds(monkeypatch, memory_fused)
    generic = count_generic(monkeypatch)
    text = _program(DataType.FP32, 4, 16, "1000", store=True)
    regs = {"a0": [0x100] * 4, "s0": [64] * 4, "a1": [0x2000] * 4, "s1": [128] * 4}
    src = np.arange(GM, dtype=np.uint8).tobytes()[:GM]
    got = _outcome(text, regs, src, generic=False)
    # the measured run (the last; its program's plans were prepared) fused both: the
    # first run of the program prepared its plans on the generic path
    assert built[-1:] == ["TLOAD"] and generic == ["TLOAD", "TSTORE"]
    assert got == _outcome(text, regs, src, generic=True)
    m = Machine(MachineConfig(gm_size=GM))
    m.load_gm(0, np.frombuffer(src, np.uint8))
    for name, v in regs.items():
        m.set_gpr(name, v[0])
    m.run(prog(text))
    rows = [src[0x100 + 64 * r : 0x100 + 64 * r + 64] for r in range(4)]
    stored = [m.read_gm(0x2000 + 128 * r, np.uint8, 64).tobytes() for r in range(4)]
    assert stored == rows
    # the fused store records the chunks it writes (a recycled memory is zeroed there)
    m = Machine(MachineConfig(gm_size=GM))
    for name, v in regs.items():
        m.set_gpr(name, v[0])
    written = m.state.gm_written
    assert written is not None and written.untouched(0x2000, 0x2000 + 128 * 4)
    m.run(prog(text))
    assert not written.untouched(0x2000 + 128 * 3, 0x2000 + 128 * 3 + 64)


#: (base, stride) edge cases of one FP32 PE moving 4 rows of 16 elements (64 bytes):
#: the last row ends at the last byte of memory or one element beyond it, misaligned
#: base or stride, rows that overlap or coincide, a stride or base that wraps
_EDGES = [
    (GM - 64 - 3 * 128, 128), (GM - 60 - 3 * 128, 128), (GM - 64 - 3 * 64, 64),
    (0x102, 64), (0x100, 66), (0x100, 60), (0x100, 0), (0x100, 4),
    ((1 << 64) - 64, 64), (0x100, (1 << 64) - 64), (GM, 64), (0, 1 << 63),
]  # fmt: skip


def test_one_pe_edges_equal_the_generic_runners() -> None:
    """The one-PE form of a dense memory (the kernels' case, with its own proof) at each
    edge of the proof, as a load and as a load then a store, on every PE."""
    for mask in ("1000", "0001"):
        for store in (False, True):
            text = _program(DataType.FP32, 4, 16, mask, store)
            for base, stride in _EDGES:
                good = {"a0": [0x100] * 4, "s0": [64] * 4}
                edge = {"a0": [base] * 4, "s0": [stride] * 4}
                for regs in ({**edge, "a1": [0x2000] * 4, "s1": [128] * 4},
                             {**good, "a1": [base] * 4, "s1": [stride] * 4}):  # fmt: skip
                    if not store and regs["a0"] == good["a0"]:
                        continue
                    gm = bytes(range(256)) * (GM // 256)
                    fused = _outcome(text, regs, gm, False)
                    assert fused == _outcome(text, regs, gm, True), (mask, store, regs)
