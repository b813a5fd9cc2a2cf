"""The fused TMRGSORT (``ops/irregular.py``) against the generic runner: the same tiles,
queues, status and faults for FP32 and FP16 streams of raw bits (every binade, NaN
payloads, signalling NaNs, +-0, infinities, ties), ascending and descending, per-PE
flags, flags other than 0/1, unsorted streams, masks and sources on other PEs, and full
queues; and the common case is fused."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.semantics.sorting import SORT_DTYPES
from ptoc.runtime import Machine, MachineConfig

from ._progs import array_strategy, p2, size_name, smallest_size
from .util import MASKS, count_generic, prog, warm_outcome

GM = 1 << 14


def _load(dt: DataType, n: int, base: str, mask: str) -> str:
    col = p2(max(n, 32 // (info(dt).bits // 8)))
    return f"""\
        BSTART.TLOAD {dt.name}
        C.B.DIMI {n}, ->LB0
        C.B.DIMI {col}, ->LB2
        B.IOR {base}, s0
        B.IOT mask={mask}, last, ->T<{size_name(smallest_size(dt, 1, col))}>
        BSTOP
        """


def _program(dt: DataType, n0: int, n1: int, load_mask: str, mask: str, flag: bool,
             repeat: int) -> str:  # fmt: skip
    size = size_name(smallest_size(dt, 1, p2(n0 + n1)))
    ior = "B.IOR a2\n        " if flag else ""
    merge = f"""\
        BSTART.SFU TMRGSORT, {dt.name}
        {ior}B.IOT T#2, T#1, mask={mask}, last, ->U<{size}>
        BSTOP
        """
    return _load(dt, n0, "a0", load_mask) + _load(dt, n1, "a1", load_mask) + merge * repeat


def _sorted(dt: DataType, bits: np.ndarray, descending: bool) -> np.ndarray:
    """``bits`` (raw) in the merge order of their values: NaNs last either way."""
    v = bits.astype(f"u{info(dt).bits // 8}").view(info(dt).carrier)
    order = np.argsort(-v if descending else v, kind="stable")
    return bits[order]


@given(data=st.data())
def test_fused_tmrgsort_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(sorted(SORT_DTYPES, key=lambda d: d.name)))
    n0, n1 = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40))
    mask = data.draw(st.sampled_from(MASKS))
    load_mask = data.draw(st.sampled_from([mask, mask, "1111", "1000"]))
    flags = data.draw(st.lists(st.sampled_from([0, 1, 1, 2]), min_size=4, max_size=4))
    if data.draw(st.booleans()):
        flags = [flags[0] if flags[0] < 2 else 1] * 4
    use_flag = data.draw(st.booleans())  # (no B.IOR: ascending on every PE)
    width = info(dt).bits // 8
    gm = bytearray(GM)
    for k, n in enumerate((n0, n1)):
        for pe in range(4):
            bits = data.draw(array_strategy(dt, (n,)))
            if data.draw(st.integers(0, 9)):  # mostly sorted in this PE's direction
                bits = _sorted(dt, bits, use_flag and flags[pe] == 1)
            raw = bits.astype(f"<u{width}").tobytes()
            at = 4096 * k + 256 * pe
            gm[at : at + len(raw)] = raw
    regs = {"a0": [256 * pe for pe in range(4)], "a1": [4096 + 256 * pe for pe in range(4)],
            "s0": [256] * 4, "a2": flags}  # fmt: skip
    text = _program(dt, n0, n1, load_mask, mask, use_flag, data.draw(st.integers(1, 5)))
    assert warm_outcome(text, regs, bytes(gm), False, gm_size=GM, depth=4) == warm_outcome(
        text, regs, bytes(gm), True, gm_size=GM, depth=4
    )


def test_the_common_case_takes_the_fused_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    program = prog(_program(DataType.FP32, 3, 2, "1111", "1111", False, 1))
    Machine(MachineConfig(gm_size=GM)).run(program)  # prepares the plans
    generic = count_generic(monkeypatch)  # (plans are shared by equal bundles)
    m = Machine(MachineConfig(gm_size=GM))
    m.set_gpr("s0", 256)
    m.set_gpr("a1", 4096)
    m.load_gm(0, np.array([1, 4, 9], np.float32))
    m.load_gm(4096, np.array([2, 5], np.float32))
    m.run(program)
    assert "TMRGSORT" not in generic
    assert m.tile("U#1").values[0].tolist() == [[1, 2, 4, 5, 9]]
