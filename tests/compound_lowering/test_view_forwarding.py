"""``tile.view`` of loaded tiles: a view whose sources are loads of a tensor nothing
writes, lying back to back in it, reads that tensor instead of storing an image into the
scratch area (``passes.legalize.view.forwarded``). Either way the executed bytes equal
the reference semantics bit for bit; the program with forwarding has fewer TSTOREs
exactly when the sources qualify (decided here from the kernel, independently)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

import ptoc
import ptoc.lang as pt
from ptoc.backend.asm import format_program
from ptoc.backend.isa import DataType, info
from ptoc.dialects.compound_ops import ViewOp
from ptoc.dialects.reference import run_reference
from ptoc.dialects.tile_types import TileType
from ptoc.passes.execute import compare
from ptoc.passes.legalize import view as view_rule
from ptoc.testing import KernelBuilder

from .harness import run_lowered

TENSOR_TYPES = ["U8", "S16", "FP16", "BF16", "FP32", "S32"]
#: view result DataTypes by element bytes (a bit copy: integers and floats alike)
BY_WIDTH = {1: ["U8", "S8"], 2: ["U16", "FP16", "BF16"], 4: ["U32", "FP32", "S32"]}


def _bytes(name: str) -> int:
    return info(DataType[name]).bits // 8


#: how a kernel departs from a forwardable view (each one alone breaks the rule)
KINDS = ["aim", "aim", "aim", "gap", "padded", "wider", "step", "overwrite", "pe", "two", "any"]


@st.composite
def view_kernels(draw):
    """(kernel description, inputs): 1-3 loads of one tensor and a view of them, either
    forwardable (``aim``: back to back whole rows, or back to back pieces of one row) or
    with one departure from the rule (a gap or the reverse order, a padded tensor, a
    wider result, rows two apart, an overwrite of the tensor between the loads and the
    view, different per-PE offsets, the last window read from another tensor), or
    windows anywhere."""
    kind = draw(st.sampled_from(KINDS))
    tdt = draw(st.sampled_from(TENSOR_TYPES if kind != "wider" else ["U8", "S16", "FP16"]))
    eb = _bytes(tdt)
    pes = draw(st.integers(2 if kind == "pe" else 1, 4))
    pr = draw(st.integers(0, 2)) if pes > 1 else 0
    cols = draw(st.integers(1, 24))
    stride = cols + (draw(st.sampled_from([1, 3])) if kind == "padded" else 0)
    several = kind in ("gap", "pe", "two")
    k = 1 if kind in ("padded", "step") else draw(st.integers(2 if several else 1, 3))
    mode = "rows" if several else draw(st.sampled_from(["rows", "row"]))
    if kind == "any":
        mode = "any"
    step = 2 if kind == "step" else 1
    if mode == "rows":
        r = draw(st.integers(0, 2))
        windows = []
        for _ in range(k):
            n = draw(st.integers(2 if kind in ("step", "padded") else 1, 3))
            windows.append(((r, 0), (n, cols)))
            r += (n - 1) * step + 1 + (kind == "gap" and draw(st.booleans()))
        if kind == "gap" and r == windows[-1][0][0] + windows[-1][1][0]:
            windows.reverse()  # no gap drawn: the reverse order instead
        rows = r + (pes - 1) * (pr + 1) + draw(st.integers(0, 1))
    elif mode == "row":
        r, c = draw(st.integers(0, 2)), draw(st.integers(0, cols - 1))
        windows = []
        for _ in range(k):
            if c >= cols:
                break
            w = draw(st.integers(1, cols - c))
            windows.append(((r, c), (1, w)))
            c += w
        rows = r + 1 + (pes - 1) * pr
    else:
        rows = draw(st.integers(1, 6)) + (pes - 1) * pr
        windows = []
        for _ in range(k):
            r0 = draw(st.integers(0, rows - 1 - (pes - 1) * pr))
            c0 = draw(st.integers(0, cols - 1))
            h = draw(st.integers(1, rows - r0 - (pes - 1) * pr))
            windows.append(((r0, c0), (h, draw(st.integers(1, cols - c0)))))
    # per-source PE row offsets: the same, but for kind "pe" (the others one more)
    pe_rows = [pr] + [pr + (kind == "pe")] * (len(windows) - 1)
    total = sum(h * w for _, (h, w) in windows) * eb
    widths = [w for w in BY_WIDTH if w <= total and (w <= eb or kind == "any")]
    if kind == "wider":
        widths = [w for w in BY_WIDTH if eb < w <= total] or widths
    width = draw(st.sampled_from(widths))
    rdt = draw(st.sampled_from(BY_WIDTH[width]))
    offset = draw(st.integers(0, total // width - 1)) * width
    rcols = draw(st.integers(1, (total - offset) // width))
    rstride = draw(st.one_of(st.none(), st.integers(0, 4).map(lambda s: s * width)))
    row_bytes = rcols * width if rstride is None else rstride
    room = total - offset - rcols * width
    rrows = draw(st.integers(1, 1 + (room // row_bytes if row_bytes else 3)))
    overwrite = kind == "overwrite" or (kind == "any" and draw(st.booleans()))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    carrier = info(DataType[tdt]).carrier
    data = rng.integers(0, 256, rows * stride * eb, dtype=np.uint8).view(carrier)
    other = rng.integers(0, 256, rows * stride * eb, dtype=np.uint8).view(carrier)
    inputs = {
        "t": data.reshape(rows, stride)[:, :cols].copy(),
        "u": other.reshape(rows, stride)[:, :cols].copy(),
        # (rows of 64-byte multiples, as lower-compound sizes its scratch: every PE's
        # image starts aligned)
        "scratch": np.zeros((pes, (total + 63) // 64 * 64), np.uint8),
    }
    desc = {
        "tdt": tdt, "pes": pes, "pe_rows": pe_rows, "cols": cols, "stride": stride,
        "step": step, "windows": windows, "other": kind == "two", "rdt": rdt,
        "offset": offset, "rstride": rstride, "rshape": (rrows, rcols),
        "overwrite": overwrite,
    }  # fmt: skip
    return desc, inputs


def _module(d: dict, inputs: dict):
    kb = KernelBuilder("view", pes=d["pes"])
    rows = inputs["t"].shape[0]
    t = kb.tensor("t", d["tdt"], (rows, d["cols"]), d["stride"])
    u = kb.tensor("u", d["tdt"], (rows, d["cols"]), d["stride"])
    scratch = kb.tensor("scratch", "U8", inputs["scratch"].shape)
    srcs = [kb.load(t, shp, at, step=d["step"] if shp[0] > 1 else 1, pe=(pr, 0))
            for (at, shp), pr in zip(d["windows"], d["pe_rows"], strict=True)]  # fmt: skip
    if d["other"]:  # the last window from the other tensor, where t's would be
        at, shp = d["windows"][-1]
        srcs[-1] = kb.load(u, shp, at, pe=(d["pe_rows"][-1], 0))
    if d["overwrite"]:  # between the loads and the view: the view must not see it
        kb.store(t, kb.load(u, (rows, d["cols"])))
    rt = TileType(d["rdt"], d["rshape"])
    v = kb.emit(ViewOp(srcs, scratch, rt, d["offset"], d["rstride"])).results[0]
    kb.store(kb.tensor("out", d["rdt"], d["rshape"]), v)
    return kb.finish()


def _qualifies(d: dict) -> bool:
    """The forwarding rule, from the kernel description: no write of the tensor, every
    window dense in it (one row, or whole rows at step 1 of an unpadded tensor), the
    windows back to back in one tensor with the same per-PE offsets, and result elements
    no wider than the tensor's."""
    eb = _bytes(d["tdt"])
    if d["overwrite"] or d["other"] or _bytes(d["rdt"]) > eb or len(set(d["pe_rows"])) > 1:
        return False
    end = None
    for (r0, c0), (h, w) in d["windows"]:
        if h > 1 and (w != d["stride"] or d["step"] != 1):
            return False
        at = (r0 * d["stride"] + c0) * eb
        if end is not None and at != end:
            return False
        end = at + h * w * eb
    return True


def _stores(ck) -> int:
    return sum(
        line.startswith("BSTART.TSTORE") for line in format_program(ck.program).splitlines()
    )


@examples(200)
@given(view_kernels())
def test_view_of_loads_reads_the_tensor(case) -> None:
    d, inputs = case
    module = _module(d, inputs)
    want = run_reference(module, inputs)
    got, ck = run_lowered(module, inputs)
    compare(got, want)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(view_rule, "forwarded", lambda ctx, op: None)
        got_stored, ck_stored = run_lowered(module, inputs)
    compare(got_stored, want)
    if _qualifies(d):
        assert _stores(ck) < _stores(ck_stored)
    else:
        assert _stores(ck) == _stores(ck_stored)


@ptoc.kernel
def _records_at(
    x: ptoc.Tensor[ptoc.fp32, 4, 8],
    p: ptoc.Tensor[ptoc.u32, 4, 8],
    out: ptoc.Tensor[ptoc.u32, 4, 16],
    rows: ptoc.Scalar[ptoc.s32],
):
    for r in pt.range(0, rows):  # a window that moves at run time
        packed = pt.pack_records(pt.load(x, rows=(r, 1)), pt.load(p, rows=(r, 1)))
        pt.store(out, packed, rows=(r, 1))


def test_a_moving_window_is_not_forwarded() -> None:
    """A load at a run-time row index is not a window the view can address statically:
    pack_records' views of it go through the scratch area, and every row is right."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, (4, 8), dtype=np.uint32).view(np.float32)
    p = rng.integers(0, 2**32, (4, 8), dtype=np.uint32)
    got = ptoc.verify(_records_at, x=x, p=p, rows=4)
    assert not np.array_equal(got["out"][1], got["out"][0])
