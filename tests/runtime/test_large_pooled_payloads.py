"""Payloads up to ``engine.POOLED_BYTES`` come from pools, the large ones (blocks taken
first-free) too: through :func:`engine.build_tile`, each equals the payload built afresh
(poison on the PEs left out, the fill in the padding, NaN payloads and every other bit
pattern of the values kept), with the same descriptor and definedness, a payload still
held is never written again, and the pool is what build_tile takes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NULL, mask_pes
from ptoc.runtime import Machine, MachineConfig, engine
from ptoc.runtime.alloc import Slot
from ptoc.runtime.tiles import Layout

from .test_pooled_payloads import FILLS, MASKS, _fresh

TYPES = [DataType.FP32, DataType.FP16, DataType.U8, DataType.FP64, None]


@given(data=st.data())
def test_large_pooled_tiles_equal_fresh_ones(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(TYPES))
    carrier = np.dtype(bool) if dt is None else np.dtype(info(dt).carrier)
    cols = data.draw(st.sampled_from([8, 16, 64]))
    # payloads from 64 KiB (the first-free blocks) to the largest pooled one
    least = (1 << 16) // (4 * cols * carrier.itemsize)
    most = engine.POOLED_BYTES // (4 * cols * carrier.itemsize) - 1
    rows = data.draw(st.sampled_from(sorted({least, (least + most) // 2, most})))
    vr, vc = data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols))
    mask = data.draw(st.sampled_from(MASKS))
    pes = mask_pes(mask)
    # (one descriptor published with different fills: each has its own blocks)
    fills = FILLS if dt is not None else [0, 1]  # a predicate pads with zeros or ones
    if (vr, vc) == (rows, cols) and len(pes) == 4:
        vc = cols - 1  # (a whole every-PE result is published as it is, not pooled)
        if vc == 0:
            return
    slot = Slot(0, 0, dt, rows, cols, vr, vc, Layout.ROW_MAJOR, mask, 1 << 20, carrier)
    state = Machine(MachineConfig(gm_size=1 << 12)).state
    pidx = slice(None) if len(pes) == 4 else list(pes)
    held: list[tuple[np.ndarray, bytes]] = []
    for _ in range(data.draw(st.integers(1, 4))):
        fill = data.draw(st.sampled_from(fills))
        raw = data.draw(st.binary(min_size=carrier.itemsize, max_size=carrier.itemsize))
        values = np.frombuffer(raw * (len(pes) * vr * vc), carrier).reshape(len(pes), vr, vc)
        if dt is None:
            values = values.astype(bool)
        tile = engine.build_tile(state, "T", slot, values, fill, pes, pidx, numbered=False)
        want = _fresh(slot, values, fill, pes)
        assert tile.payload.tobytes() == want.tobytes()
        assert not tile.payload.flags.writeable
        assert tile.address == tile.payload.ctypes.data  # (a pool's block: its address)
        assert (tile.rows, tile.cols, tile.valid_rows, tile.valid_cols) == (rows, cols, vr, vc)
        assert tile.defined is None and tile.pad_defined == (fill != PAD_NULL)
        if data.draw(st.booleans()):
            held.append((tile.payload, want.tobytes()))
    for payload, before in held:  # nothing held was handed out again
        assert payload.tobytes() == before
