"""TPREFETCH: a binding-free TLSU bundle that probes every PE's TLOAD footprint.

Source: ``asl/block/execution/BSTART.TPREFETCH.asl`` (contract), ``ExecuteBundleTPREFETCH
Operation`` and ``BundleTPREFETCHDimensionsLegal`` (``tlsu-prefetch.asl``), and
``TPREFETCHCore`` (``gather-scatter.asl``): the row stride is in *elements*
(``TileMemoryStridedIndex`` then ``TileMemoryIndexedAddress``), omitted B.IOR supplies base
zero and stride Col, every LB is optional (LB0 and LB1 default to one, LB2 to ValidCol),
participation is implicit (every PE) and any B.IOT or B.IOS is illegal.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.runtime import DataPageFault, MachineFault, TileLegalityFault

from .util import machine, prog, rejected_without_effect


def prefetch(
    dt: str = "FP32",
    vc: int | None = None,
    vr: int | None = None,
    col: int | None = None,
    ior: str | None = None,
    extra: str = "",
) -> str:
    text = f"BSTART.TPREFETCH {dt}\n"
    for lb, v in enumerate((vc, vr, col)):
        if v is not None:
            text += f"B.DIM zero, {v}, ->LB{lb}\n"
    if ior is not None:
        text += f"B.IOR {ior}\n"
    return text + extra + "BSTOP\n"


def run_ok(m, text: str) -> None:  # type: ignore[no-untyped-def]
    """A successful prefetch changes no architectural state at all."""
    before = m.snapshot()
    m.run(prog(text))
    after = m.snapshot()
    assert after == before, after.differences(before)


def fault(m, text: str, cls: type[MachineFault]) -> MachineFault:  # type: ignore[no-untyped-def]
    """A rejected prefetch raises ``cls`` and leaves no trace."""
    return rejected_without_effect(m, text, cls)  # type: ignore[return-value]


def test_every_lb_and_the_ior_may_be_omitted() -> None:
    # one FP32 element at address 0 on every PE: the whole footprint of the defaults
    run_ok(machine(gm_size=4), prefetch())
    fault(machine(gm_size=3), prefetch(), DataPageFault)


def test_omitted_ior_strides_rows_by_col_elements() -> None:
    # Col 2, ValidCol 1, two rows: elements 0 and 2, i.e. bytes [0, 4) and [8, 12)
    text = prefetch(vc=1, vr=2, col=2)
    run_ok(machine(gm_size=12), text)
    err = fault(machine(gm_size=11), text, DataPageFault)
    assert "0x8" in str(err)


def test_an_explicit_zero_stride_aliases_every_row() -> None:
    text = prefetch(vc=1, vr=100, ior="zero, zero")
    run_ok(machine(gm_size=4), text)
    fault(machine(gm_size=4), prefetch(vc=1, vr=100), DataPageFault)  # stride Col = 1


def test_the_row_stride_counts_elements_not_bytes() -> None:
    gm = 1 << 12
    m = machine(gm_size=gm)
    m.set_gpr("a0", gm - 16)
    m.set_gpr("a1", 3)  # three FP32 elements: row 1 at gm - 4 (a byte stride would misalign)
    run_ok(m, prefetch(vc=1, vr=2, ior="a0, a1"))
    m.set_gpr("a1", 4)  # row 1 at gm, one element past the end
    err = fault(m, prefetch(vc=1, vr=2, ior="a0, a1"), DataPageFault)
    assert f"0x{gm:x}" in str(err)


def test_a_packed_four_bit_row_starts_at_its_linear_element() -> None:
    # S4X2, odd stride 3: element (r, 0) is linear element 3r, in byte 3r // 2
    gm = 1 << 12
    m = machine(gm_size=gm)
    m.set_gpr("a0", gm - 3)
    m.set_gpr("a1", 3)
    run_ok(m, prefetch("S4X2", vc=1, vr=2, ior="a0, a1"))  # bytes gm-3 and gm-2
    run_ok(m, prefetch("S4X2", vc=2, vr=2, ior="a0, a1"))  # element 4 is byte gm-1
    err = fault(m, prefetch("S4X2", vc=1, vr=3, ior="a0, a1"), DataPageFault)
    assert f"0x{gm:x}" in str(err)  # element 6: byte gm - 3 + 3


def test_every_pe_participates_and_a_fault_on_any_pe_rejects_the_whole_bundle() -> None:
    gm = 1 << 12
    m = machine(gm_size=gm)
    for pe in range(4):
        m.set_gpr("a0", 64 * pe, pe=pe)
    run_ok(m, prefetch(vc=4, vr=2, ior="a0, zero"))
    m.set_gpr("a0", gm - 8, pe=2)
    err = fault(m, prefetch(vc=4, vr=1, ior="a0, zero"), DataPageFault)
    assert "PE2" in str(err)


def test_a_machine_with_fewer_pes_probes_each_of_them() -> None:
    m = machine(gm_size=1 << 12, pes=2)
    m.set_gpr("a0", 1 << 12, pe=1)
    err = fault(m, prefetch(ior="a0, zero"), DataPageFault)
    assert "PE1" in str(err)


@pytest.mark.parametrize(
    "binding",
    [
        "B.IOT mask=1111, last, ->T<128B>\n",
        "B.IOT mask=0000, last, ->T<128B>\n",
        "B.IOS mask=1111, ->S3<1>\n",
    ],
)
def test_any_tile_binding_is_illegal(binding: str) -> None:
    fault(machine(), prefetch(extra=binding), TileLegalityFault)


@pytest.mark.parametrize(
    "lbs",
    [
        {"vc": 0},
        {"vr": 0},
        {"col": 0},
        {"vc": 3, "col": 3},  # Col is not a power of two
        {"vc": 5, "col": 4},  # ValidCol exceeds Col
        {"vc": 256, "vr": 129, "col": 256},  # 33024 elements: more than one tile's worth
    ],
)
def test_dimension_rules(lbs: dict[str, int]) -> None:
    fault(machine(), prefetch(**lbs), TileLegalityFault)


def test_the_largest_footprint_is_legal() -> None:
    run_ok(machine(gm_size=1 << 20), prefetch("U8", vc=256, vr=128, col=256))


@given(
    vc=st.integers(1, 16),
    vr=st.integers(1, 8),
    stride=st.integers(0, 40),
    dt=st.sampled_from(["FP32", "FP16", "U8", "S4X2"]),
    base=st.integers(0, 64),
)
def test_the_footprint_fits_exactly_when_its_last_element_does(
    vc, vr, stride, dt, base
) -> None:  # type: ignore[no-untyped-def]
    """Every element is probed: the bundle faults exactly when the byte holding its last
    (largest) linear element lies beyond the memory (an independent address formula)."""
    bits = {"FP32": 32, "FP16": 16, "U8": 8, "S4X2": 4}[dt]
    last = (vr - 1) * stride + (vc - 1)
    if bits == 4:
        end = base + last // 2 + 1
    else:
        end = base + (last + 1) * bits // 8
        # an FP32/FP16 footprint must also be aligned: keep the base aligned
        base -= base % (bits // 8)
        end = base + (last + 1) * bits // 8
    col = 1 << (vc - 1).bit_length()
    text = prefetch(dt, vc=vc, vr=vr, col=col, ior="a0, a1")
    for gm_size, fits in ((end, True), (end - 1, False)):
        if gm_size < 1:
            continue
        m = machine(gm_size=gm_size)
        m.set_gpr("a0", base)
        m.set_gpr("a1", stride)
        if fits:
            run_ok(m, text)
        else:
            fault(m, text, DataPageFault)
