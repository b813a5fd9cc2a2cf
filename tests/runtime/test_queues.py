"""Relative generation queues with eviction (D1), per-PE capacity (D2), masks (D3)."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.runtime import TileAllocationFault, TileLegalityFault

from .util import machine, prog


def expands(
    value: int | None,
    *,
    hand: str = "T",
    size: str = "128B",
    mask: str = "1111",
    dt: str = "S32",
    cols: int = 8,
) -> str:
    """TEXPANDS of a small constant (c.movi, -16..15; None: keep a4) into a new tile."""
    text = "" if value is None else f"BSTART.STD FALL\nc.movi {value}, ->a4\nBSTOP\n"
    return text + (
        f"BSTART.VEC TEXPANDS, {dt}\nB.DIM zero, {cols}, ->LB0\nB.IOR a4\n"
        f"B.IOT mask={mask}, last, ->{hand}<{size}>\nBSTOP\n"
    )


def first(m, name: str) -> int:  # type: ignore[no-untyped-def]
    return int(m.tile(name).values[0, 0, 0])


def test_new_destination_becomes_1_and_older_shift() -> None:
    m = machine()
    m.run(prog(expands(1) + expands(2) + expands(3)))
    assert [first(m, f"T#{k}") for k in (1, 2, 3)] == [3, 2, 1]


def test_eviction_releases_the_oldest() -> None:
    m = machine(depth=4)
    m.run(prog("".join(expands(v) for v in range(1, 7))))
    assert [first(m, f"T#{k}") for k in (1, 2, 3, 4)] == [6, 5, 4, 3]
    assert m.state.used == [4 * 128] * 4  # released entries returned their capacity
    with pytest.raises(TileLegalityFault, match="beyond the queue depth"):
        m.run(
            prog(
                "BSTART.VEC TADD, S32\nB.DIM zero, 8, ->LB0\n"
                "B.IOT T#1, T#5, mask=1111, last, ->U<128B>\nBSTOP\n"
            )
        )


def test_hands_are_independent() -> None:
    m = machine(depth=2)
    m.run(prog(expands(1, hand="U") + expands(2) + expands(3) + expands(4)))
    assert first(m, "U#1") == 1
    assert [first(m, "T#1"), first(m, "T#2")] == [4, 3]


def test_sources_resolve_before_commit() -> None:
    m = machine()
    m.run(prog(expands(1) + expands(2)))
    # T#1 = 2, T#2 = 1; the result becomes T#1 only after the sources were read
    m.run(
        prog(
            "BSTART.VEC TSUB, S32\nB.DIM zero, 8, ->LB0\n"
            "B.IOT T#1, T#2, mask=1111, last, ->T<128B>\nBSTOP\n"
        )
    )
    assert [first(m, "T#1"), first(m, "T#2"), first(m, "T#3")] == [1, 2, 1]


def test_two_destinations_push_in_binding_order() -> None:
    m = machine()
    m.run(prog(expands(5, dt="FP32", cols=4)))
    m.run(
        prog(
            "BSTART.SFU TSORT, FP32\nB.IOT T#1, mask=1111, ->T<128B>\n"
            "B.IOT mask=1111, last, ->T<128B>\nBSTOP\n"
        )
    )
    assert m.tile("T#1").dtype.name == "U32"  # the second destination ends up as #1
    assert m.tile("T#2").dtype.name == "FP32"
    assert m.tile("T#3").values.view(np.uint32)[0, 0, 0] == 5  # the source moved down by 2


def test_empty_queue_position_faults() -> None:
    m = machine()
    m.run(prog(expands(1)))
    before = m.snapshot()
    with pytest.raises(TileLegalityFault, match="empty queue position"):
        m.run(
            prog(
                "BSTART.VEC TADD, S32\nB.DIM zero, 8, ->LB0\n"
                "B.IOT T#1, T#2, mask=1111, last, ->T<128B>\nBSTOP\n"
            )
        )
    assert m.snapshot() == before


def test_capacity_fault_has_no_effect() -> None:
    m = machine(capacity=1024)
    m.run(prog(expands(1, size="512B") + expands(2, size="256B")))
    before = m.snapshot()
    with pytest.raises(TileAllocationFault, match="capacity"):
        m.run(prog(expands(None, size="512B")))
    assert m.snapshot() == before


def test_capacity_counts_evicted_entries_as_released() -> None:
    m = machine(capacity=512, depth=2)
    m.run(prog(expands(1, size="256B") + expands(2, size="256B")))
    m.run(prog(expands(3, size="256B")))  # evicts the first: 512 bytes still fit
    assert first(m, "T#1") == 3 and m.state.used == [512] * 4


def test_capacity_is_per_pe() -> None:
    m = machine(capacity=256)
    m.run(prog(expands(1, size="256B", mask="1000") + expands(2, size="256B", mask="0100")))
    assert m.state.used == [256, 256, 0, 0]
    with pytest.raises(TileAllocationFault):
        m.run(prog(expands(3, size="128B", mask="1100")))


def test_reading_outside_the_allocation_mask_faults() -> None:
    m = machine()
    m.run(prog(expands(1, mask="1100") + expands(2, mask="1100")))
    ok = (
        "BSTART.VEC TADD, S32\nB.DIM zero, 8, ->LB0\n"
        "B.IOT T#1, T#2, mask=1000, last, ->U<128B>\nBSTOP\n"
    )
    m.run(prog(ok))  # 1000 is covered by 1100
    assert m.tile("U#1").mask == 0b1000
    bad = ok.replace("mask=1000", "mask=1110")
    before = m.snapshot()
    with pytest.raises(TileLegalityFault, match="does not cover"):
        m.run(prog(bad))
    assert m.snapshot() == before


def test_pe_outside_mask_is_undefined_and_zero_in_view() -> None:
    m = machine()
    m.run(prog(expands(7, mask="0100")))
    v = m.tile("T#1")
    assert v.values[1].tolist() == [[7] * 8]
    assert np.all(v.values[[0, 2, 3]] == 0)
    assert v.defined[1].all() and not v.defined[[0, 2, 3]].any()


def test_destination_hand_missing_on_small_machine() -> None:
    m = machine(hands=2)
    with pytest.raises(TileAllocationFault, match="hand M"):
        m.run(prog(expands(1, hand="M")))


def test_derived_rows_must_hold_valid_rows() -> None:
    m = machine()
    text = (
        "BSTART.STD FALL\nc.movi 1, ->a4\nBSTOP\nBSTART.VEC TEXPANDS, FP32\n"
        "B.DIM zero, 64, ->LB0\nB.DIM zero, 2, ->LB1\nB.IOR a4\n"
        "B.IOT mask=1111, last, ->T<256B>\nBSTOP\n"
    )
    with pytest.raises(TileAllocationFault, match="does not fit"):
        m.run(prog(text))  # 256 B holds one row of 64 FP32
    with pytest.raises(TileAllocationFault, match="whole"):
        m.run(prog(text.replace("64, ->LB0", "16, ->LB0\nB.DIM zero, 48, ->LB2")))
