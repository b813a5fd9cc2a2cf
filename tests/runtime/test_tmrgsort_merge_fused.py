"""The lean TMRGSORT (``ops/sort_fused.py``: NaN-free sorted streams, one direction on
every PE, merged by one stable sort in the new payload) against the generic runner:
FP32 and FP16 streams of every binade, +-0 ties, infinities, subnormals and
duplicates, ascending and descending, per-PE sources, a NaN (quiet or signalling), an
inversion, a flag that differs on a PE or sources on other PEs, each sending the
bundle back to the fused form, and streams of one element; the lean form takes every
clean pair of streams."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.semantics.sorting import SORT_DTYPES
from ptoc.runtime.bundle import build_plan
from ptoc.runtime.ops import irregular

from ._progs import array_strategy
from .test_tmrgsort_fused import GM, _program, _sorted
from .util import MASKS, warm_outcome


def _numbers(dt: DataType, bits: np.ndarray, dups: list[int]) -> np.ndarray:
    """``bits`` with every NaN made a zero of its sign (+-0 ties) and the elements at
    ``dups`` copied from their neighbours (duplicates)."""
    sign = 1 << (info(dt).bits - 1)
    v = bits.astype(f"u{info(dt).bits // 8}").view(info(dt).carrier)
    out = bits.copy()
    out[np.isnan(v)] &= np.uint64(sign)
    for i in dups:
        if 0 < i < len(out):
            out[i] = out[i - 1]
    return out


#: a quiet and a signalling NaN (NV) of each sort type
_NANS = {DataType.FP32: [0x7FFFFFFF, 0x7F800001], DataType.FP16: [0x7FFF, 0xFC01]}


@given(data=st.data())
def test_numeric_merge_equals_the_generic_runner(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(sorted(SORT_DTYPES, key=lambda d: d.name)))
    lengths = st.one_of(st.integers(1, 3), st.integers(1, 40))  # (one element: no pair)
    n0, n1 = data.draw(lengths), data.draw(lengths)
    # 0: a NaN in one stream, 1: an inversion, 2: the flag differs on a PE, 3: a source
    # on other PEs, else none
    spoil = data.draw(st.integers(0, 7))
    nan_stream = data.draw(st.integers(0, 1))
    if spoil == 0 and data.draw(st.booleans()):  # a NaN in no pair: the stream's only one
        n0, n1 = (1, n1) if nan_stream == 0 else (n0, 1)
    mask = data.draw(st.sampled_from(MASKS))
    desc = data.draw(st.booleans())
    use_flag = desc or data.draw(st.booleans())  # (no B.IOR: ascending)
    flags = [int(desc)] * 4
    if spoil == 2:  # (on a PE after the first: the first PE's flag is the others')
        mask, use_flag = data.draw(st.sampled_from(["1100", "1110", "1111"])), True
        flags[data.draw(st.integers(1, mask.count("1") - 1))] = data.draw(
            st.sampled_from([1 - desc, 2])
        )
    load_mask = data.draw(st.sampled_from(["1111", "1000", "0001"])) if spoil == 3 else mask
    width = info(dt).bits // 8
    gm = bytearray(GM)
    for k, n in enumerate((n0, n1)):
        for pe in range(4):
            dups = data.draw(st.lists(st.integers(0, n - 1), max_size=n))
            bits = _sorted(dt, _numbers(dt, data.draw(array_strategy(dt, (n,))), dups), desc)
            if spoil == 0 and k == nan_stream:
                bits[data.draw(st.integers(0, n - 1))] = data.draw(st.sampled_from(_NANS[dt]))
            if spoil == 1 and n > 1 and bits[0] != bits[-1]:
                bits = bits[::-1].copy()
            raw = bits.astype(f"<u{width}").tobytes()
            at = 4096 * k + 256 * pe
            gm[at : at + len(raw)] = raw
    regs = {"a0": [256 * pe for pe in range(4)], "a1": [4096 + 256 * pe for pe in range(4)],
            "s0": [256] * 4, "a2": flags}  # fmt: skip
    text = _program(dt, n0, n1, load_mask, mask, use_flag, data.draw(st.integers(1, 3)))
    declined: list[str] = []  # per bundle the lean form hands to the fused form
    real_form = irregular._fused_tmrgsort

    def form(*args):  # type: ignore[no-untyped-def]
        general = real_form(*args)

        def counted(state, plan):  # type: ignore[no-untyped-def]
            declined.append(plan.name)
            return general(state, plan)

        return counted

    build_plan.cache_clear()  # (equal bundles share one plan: start from none)
    with mock.patch.object(irregular, "_fused_tmrgsort", form):
        fused = warm_outcome(text, regs, bytes(gm), False, gm_size=GM, depth=4)
    assert fused == warm_outcome(text, regs, bytes(gm), True, gm_size=GM, depth=4)
    if spoil > 3 and min(n0, n1) > 1:  # the lean form merges every clean pair of streams
        assert not declined
