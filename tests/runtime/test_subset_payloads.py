"""Tiles written on a subset of the PEs: storage, padding and definedness, element by
element, against a reference built here from the rules alone.

A bundle whose PE_MASK leaves PEs out publishes a tile whose storage still spans every
PE of the machine: the valid region of each participating PE holds the results, its
padding the PadValue (Null: poison, undefined), and every other PE is poison and
undefined. Every mask a bundle can encode selects consecutive PEs (1000, 0100, 1100,
1110, ...): the bundle reads its sources as views of their payloads, and must compute
the same cold and with warm plans (the fused runners).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.fields import PAD_NULL, Hand
from ptoc.backend.isa.fields import mask_pes as pes_of
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.engine import geometry, region
from ptoc.runtime.tiles import pad_bits, poison_bits

from .util import bits, prog, size_for

PADS = {"": PAD_NULL, "B.DATR Null\n": PAD_NULL, "B.DATR Zero\n": 0, "B.DATR Max\n": 1,
        "B.DATR Min\n": 2}  # fmt: skip
#: every non-zero PE_MASK a bundle can encode (PEMode)
MASKS = [0b1000, 0b0100, 0b0010, 0b0001, 0b1100, 0b1110, 0b1111]
#: FP32 operands whose sums numpy computes exactly as IEEE does: signed zeros,
#: subnormals, ordinary values, the largest finite value
VALUES = [0.0, -0.0, 1.5, -3.25, 1e-40, -2.5e-44, 7.0e3, float(np.finfo(np.float32).max)]


def _expands(dt: DataType, raw: int, vr: int, vc: int, col: int, mask: int, datr: str) -> str:
    size = size_for(dt, vr, col)
    return (
        f"BSTART.STD FALL\naddi zero, {raw}, ->a4\nBSTOP\n"
        f"BSTART.VEC TEXPANDS, {dt.name}\n{datr}B.DIM zero, {vc}, ->LB0\n"
        f"B.DIM zero, {vr}, ->LB1\nB.DIM zero, {col}, ->LB2\nB.IOR a4\n"
        f"B.IOT mask={mask:04b}, last, ->T<{size}>\nBSTOP\n"
    )


def _want(
    dt: DataType, shape: tuple[int, int, int], vr: int, vc: int, mask: int, pad: int,
    valid: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(raw payload bits, definedness) of a tile written on the PEs of ``mask``."""
    width = {8: np.uint8, 16: np.uint16, 32: np.uint32}[info(dt).carrier.itemsize * 8]
    raw = np.full(shape, poison_bits(dt), width)
    defined = np.zeros(shape, bool)
    for pe in pes_of(mask):
        if pad != PAD_NULL:
            raw[pe] = pad_bits(dt, pad)
            defined[pe] = True
        raw[pe, :vr, :vc] = valid
        defined[pe, :vr, :vc] = True
    return raw, defined


def _check(m: Machine, name: str, dt: DataType, vr: int, vc: int, mask: int, pad: int,
           valid: np.ndarray) -> None:  # fmt: skip
    hand, index = name.split("#")
    t = m.state.queues[int(Hand[hand])][int(index) - 1]
    raw, defined = _want(dt, t.payload.shape, vr, vc, mask, pad, valid)
    assert t.mask == mask and (t.valid_rows, t.valid_cols) == (vr, vc)
    assert np.array_equal(bits(t.payload), raw)
    assert np.array_equal(t.definedness(), defined)


@given(
    st.sampled_from([DataType.FP32, DataType.FP16, DataType.BF16, DataType.S16, DataType.U8]),
    st.sampled_from(MASKS),
    st.sampled_from(sorted(PADS)),
    st.integers(1, 3),
    st.sampled_from([(1, 2), (3, 4), (5, 8), (8, 8)]),
    st.integers(0, 0x7FF),
)
def test_a_subset_tile_is_poison_outside_its_pes_and_padded_inside(
    dt: DataType, mask: int, datr: str, vr: int, cols: tuple[int, int], raw: int
) -> None:
    vc, col = cols
    raw &= (1 << info(dt).bits) - 1
    m = Machine(MachineConfig(gm_size=4096, depth=8))
    m.run(prog(_expands(dt, raw, vr, vc, col, mask, datr)))
    _check(m, "T#1", dt, vr, vc, mask, PADS[datr], np.array(raw))


@given(
    st.sampled_from(MASKS),
    st.sampled_from(sorted(PADS)),
    st.integers(1, 3),
    st.sampled_from([(1, 2), (3, 4), (8, 8)]),
    st.sampled_from(VALUES),
    st.sampled_from(VALUES),
)
def test_subset_sums_cold_and_warm_match_the_reference(
    mask: int, datr: str, vr: int, cols: tuple[int, int], x: float, y: float
) -> None:
    """Two scalar-filled sources on the PEs of ``mask``, their sum and the sum of that
    sum and a source (the fused runners read the sources through :func:`region`), on a
    fresh machine, then again with warm plans."""
    vc, col = cols
    dt = DataType.FP32
    size = size_for(dt, vr, col)
    rx, ry = (int(np.float32(v).view(np.uint32)) for v in (x, y))
    setup = (
        "BSTART.STD FALL\n"
        f"lui {rx >> 12}, ->a4\naddi a4, {rx & 0xFFF}, ->a4\n"
        f"lui {ry >> 12}, ->a5\naddi a5, {ry & 0xFFF}, ->a5\nBSTOP\n"
    )
    head = f"BSTART.VEC {{op}}, FP32\n{datr}B.DIM zero, {vc}, ->LB0\nB.DIM zero, {vr}, ->LB1\n"
    head += f"B.DIM zero, {col}, ->LB2\n"
    m_ = f"mask={mask:04b}, last"
    text = (
        setup
        + head.format(op="TEXPANDS") + f"B.IOR a4\nB.IOT {m_}, ->T<{size}>\nBSTOP\n"
        + head.format(op="TEXPANDS") + f"B.IOR a5\nB.IOT {m_}, ->T<{size}>\nBSTOP\n"
        + head.format(op="TADD") + f"B.IOT T#2, T#1, {m_}, ->U<{size}>\nBSTOP\n"
        + head.format(op="TADD") + f"B.IOT U#1, T#1, {m_}, ->U<{size}>\nBSTOP\n"
    )  # fmt: skip
    program = prog(text)
    with np.errstate(over="ignore"):  # the largest value twice: +Inf, as in IEEE
        s1 = np.float32(x) + np.float32(y)
        s2 = s1 + np.float32(y)
    for _ in range(2):  # cold plans, then warm ones
        m = Machine(MachineConfig(gm_size=4096, depth=8))
        m.run(program)
        pad = PADS[datr]
        _check(m, "U#2", dt, vr, vc, mask, pad, np.array(s1).view(np.uint32))
        _check(m, "U#1", dt, vr, vc, mask, pad, np.array(s2).view(np.uint32))


def test_a_run_of_consecutive_pes_reads_a_view_and_other_masks_a_copy() -> None:
    """The region a bundle on PEs 1 and 2 reads is a read-only view of the payload; on
    PEs 0 and 2 a read-only copy; both hold exactly the payload's valid elements."""
    m = Machine(MachineConfig(gm_size=4096, depth=8))
    values = np.arange(4 * 2 * 3, dtype=np.float32).reshape(4, 2, 3)
    m.push_tile("T", values, DataType.FP32)
    tile = m.state.queues[0][0]
    for mask, shared in ((0b0110, True), (0b1010, False), (0b1000, True)):
        pes, _, pidx, pkey = geometry(mask, 4)
        v = region(tile, pidx, pkey)
        assert np.array_equal(v, values[list(pes)])
        assert not v.flags.writeable
        assert np.shares_memory(v, tile.payload) is shared
        assert region(tile, pidx, pkey) is v  # remembered with the tile
