"""The fused TEXPANDS (``ops/tile_scalar.py``) against the generic runner: the same
tiles, queues, status and faults for every DataType, raw 64-bit scalars (invalid
encodings, high bits set) and the omitted B.IOR, every pad value, every PE mask, and
queues filled past their depth."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info, op

from ._progs import p2, size_name, smallest_size
from .util import MASKS, pe_scalars, warm_outcome

GM = 1 << 12
TYPES = sorted(
    (dt for dt in op("TEXPANDS").dtypes if info(dt).bits in (8, 16, 32, 64)),
    key=lambda d: d.name,
)
PADS = ["", "B.DATR Zero\n", "B.DATR Max\n", "B.DATR Min\n", "B.DATR Null\n"]


def _bundle(dt: DataType, vr: int, vc: int, mask: str, pad: str, scalar: bool) -> str:
    col = p2(max(vc, 32 // (info(dt).bits // 8)))
    ior = "B.IOR a1\n" if scalar else ""
    return f"""\
        BSTART.VEC TEXPANDS, {dt.name}
        {pad}C.B.DIMI {vc}, ->LB0
        C.B.DIMI {vr}, ->LB1
        C.B.DIMI {col}, ->LB2
        {ior}B.IOT mask={mask}, last, ->T<{size_name(smallest_size(dt, vr, col))}>
        BSTOP
        """


@given(data=st.data())
def test_fused_texpands_equals_the_generic_runner(data: st.DataObject) -> None:
    bundles = []
    for _ in range(data.draw(st.integers(1, 6))):  # past the depth: full queues release
        dt = data.draw(st.sampled_from(TYPES))
        vr, vc = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 24))
        mask = data.draw(st.sampled_from(MASKS))
        pad = data.draw(st.sampled_from(PADS))
        bundles.append(_bundle(dt, vr, vc, mask, pad, data.draw(st.booleans())))
    scalars = pe_scalars(data)
    text = "".join(bundles)
    depth = data.draw(st.sampled_from([2, 4]))
    gm = bytes(GM)
    regs = {"a1": scalars}
    assert warm_outcome(text, regs, gm, False, gm_size=GM, depth=depth) == warm_outcome(
        text, regs, gm, True, gm_size=GM, depth=depth
    )
