"""Payloads of small tiles come from pools (``engine.pooled_payload``): a block already holding
the poison of the PEs a bundle leaves out and the padding of the PEs it writes, of
which only the valid region is written. Each payload equals the one built afresh, a
payload still held is never written again, and a published payload is immutable (the
semantics may remember facts about it)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NULL, mask_pes
from ptoc.backend.isa.semantics import fastpath
from ptoc.runtime import engine
from ptoc.runtime.alloc import Slot, fresh
from ptoc.runtime.tiles import Layout

TYPES = [DataType.FP32, DataType.FP16, DataType.BF16, DataType.U8, DataType.S32, None]
MASKS = [0b1000, 0b0100, 0b0010, 0b0001, 0b1100, 0b1110, 0b1111]
FILLS = [PAD_NULL, 0, 1, 2]


def _fresh(slot: Slot, values: np.ndarray, fill: int, pes: tuple[int, ...]) -> np.ndarray:
    """The payload built afresh, as before pools."""
    npes = 4
    if len(pes) < npes:
        return engine._subset_payload(slot, values, fill, pes, npes)
    out = fresh(slot.dtype, (npes, slot.rows, slot.cols), fill)
    out[:, : values.shape[1], : values.shape[2]] = values
    return out


@given(data=st.data())
def test_pooled_payloads_equal_fresh_ones_and_never_change(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    carrier = np.dtype(bool) if dt is None else np.dtype(info(dt).carrier)
    rows, cols = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    vr, vc = data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols))
    mask = data.draw(st.sampled_from(MASKS))
    pes = mask_pes(mask)
    fill = data.draw(st.sampled_from(FILLS))
    if dt is None:
        fill = data.draw(st.sampled_from([0, 1]))  # a predicate pads with zeros or ones
    slot = Slot(0, 0, dt, rows, cols, vr, vc, Layout.ROW_MAJOR, mask, 1024, carrier)
    held: list[tuple[np.ndarray, bytes]] = []
    for _ in range(data.draw(st.integers(1, 70))):
        raw = data.draw(st.binary(min_size=carrier.itemsize, max_size=carrier.itemsize))
        values = np.frombuffer(raw * (len(pes) * vr * vc), carrier).reshape(len(pes), vr, vc)
        if dt is None:
            values = values.astype(bool)
        got, address = engine.pooled_payload(slot, values, fill, pes, 4)
        want = _fresh(slot, values, fill, pes)
        assert got.tobytes() == want.tobytes()
        assert not got.flags.writeable
        # the address the pool reports is the payload's own (compiled kernels read it)
        assert address == got.ctypes.data and got.flags.c_contiguous
        if data.draw(st.booleans()):
            held.append((got, want.tobytes()))
    for payload, before in held:  # nothing held was handed out again
        assert payload.tobytes() == before


def test_a_pooled_payload_is_immutable_for_the_semantics() -> None:
    slot = Slot(0, 0, DataType.FP32, 4, 8, 2, 8, Layout.ROW_MAJOR, 0b1000, 1024,
                np.dtype(np.float32))  # fmt: skip
    values = np.ones((1, 2, 8), np.float32)
    payload, _ = engine.pooled_payload(slot, values, PAD_NULL, (0,), 4)
    view = payload[0:1, :2, :8]
    assert fastpath._immutable(payload) and fastpath._immutable(view)
    fastpath.remember_finite(view)
    assert fastpath.known_finite(view)


@given(data=st.data())
def test_a_destination_pools_blocks_hold_the_padding_and_poison_of_a_fresh_payload(
    data: st.DataObject,
) -> None:
    """``engine.destination_pool`` (the lean fused forms write into its blocks): a
    block taken from a pool no one made before holds what a payload built afresh holds
    outside its valid region, whichever of the pools of one thread is asked first."""
    dt = data.draw(st.sampled_from([t for t in TYPES if t is not None]))
    carrier = np.dtype(info(dt).carrier)
    rows, cols = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    vr, vc = data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols))
    mask = data.draw(st.sampled_from(MASKS))
    pes = mask_pes(mask)
    fill = data.draw(st.sampled_from(FILLS))
    slot = Slot(0, 0, dt, rows, cols, vr, vc, Layout.ROW_MAJOR, mask, 1024, carrier)
    engine._POOLS.pools = {}  # (no pool made by an earlier example or test)
    values = np.frombuffer(
        data.draw(st.binary(min_size=carrier.itemsize, max_size=carrier.itemsize))
        * (len(pes) * vr * vc),
        carrier,
    ).reshape(len(pes), vr, vc)
    payload, storage, address = engine.destination_pool(4, slot, fill, pes).take_writable()
    storage[pes[0] : pes[-1] + 1, :vr, :vc] = values
    assert payload.tobytes() == _fresh(slot, values, fill, pes).tobytes()
    assert address == payload.ctypes.data and not payload.flags.writeable
