"""Shared tiles (B.IOS, S0..S255) and the CUBE's Shared matrix operands.

A TLOAD with a destination B.IOS writes a Shared register quarter by quarter (PE ``q``
loads the elements of quarter ``q`` from its own base); a matrix bundle reads a Shared
register only when it is cooperatively ready (allocated and initialized on all four PEs,
published), in complete operand groups (B and its scale, or both groups), with M, N, K
powers of two, TransA/TransB reading a transposed stored primary. Every rule is checked
with a full-machine snapshot: a rejected bundle leaves no trace.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend.isa import DataType as D
from ptoc.backend.isa import info
from ptoc.backend.isa import shared as isa_shared
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.runtime import (
    BundleControlFault,
    DataPageFault,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
    UnsupportedOperation,
)
from ptoc.runtime.machine import MachineError

from ._progs import Rig, block, dim_lines, iot
from .cube_rig import cube_load, cube_size, matrix, shared_load, shared_size
from .test_cube import raw_values, ubits, view

M16, M32, N8 = CubeLayout.M16, CubeLayout.M32, CubeLayout.N8


def shared_vals(rig: Rig, tid: int) -> np.ndarray:
    rec = rig.m.shared(tid)
    assert rec is not None
    return rec.payload[: rec.valid_rows, : rec.valid_cols]


def last_fault(rig: Rig, text: str, cls: type[MachineFault]) -> MachineFault:
    """Run the setup blocks of ``text``, then its last bundle expecting ``cls`` without
    effect."""
    i = text.rindex("BSTART.")
    rig.run(text[:i])
    return rig.fault(text[i:], cls)


# --------------------------------------------------------------------------- the register


@pytest.mark.parametrize(
    "dt, shape, col", [(D.FP16, (16, 32), 32), (D.FP32, (1, 32), 32), (D.S8, (3, 5), 8),
                       (D.E4M3, (2, 64), 64), (D.S4X2, (8, 16), 16)],
)  # fmt: skip
def test_shared_tload_each_pe_loads_its_own_quarter(dt, shape, col) -> None:  # type: ignore[no-untyped-def]
    """Every PE holds a different copy of the matrix; element (r, c) of the Shared tile
    comes from the copy of the PE owning its quarter (byte offset * 4 // capacity), and
    the register is allocated, initialized and published on 1111 with ``C`` bytes
    charged to every PE."""
    rng = np.random.default_rng(3)
    rig = Rig()
    P = rig.pes
    v = raw_values(rng, dt, (P, *shape), "raw")
    rig.run(shared_load(rig, v, dt, 9, col=col))
    rec = rig.m.shared(9)
    assert rec is not None
    cap = 1 << (shared_size(dt, shape[0], col) + 6)
    assert (rec.capacity, rec.rows, rec.cols) == (cap, cap * 8 // (col * info(dt).bits), col)
    assert (rec.alloc_mask, rec.init_mask, rec.published, rec.matrix_ready) == (
        15,
        15,
        True,
        True,
    )
    q = isa_shared.quarters(rec.rows, rec.cols, info(dt).bits, cap)[: shape[0], : shape[1]]
    want = np.take_along_axis(v, q[None].astype(np.intp), axis=0)[0]
    width = np.uint64((1 << info(dt).bits) - 1)
    assert np.array_equal(ubits(shared_vals(rig, 9)).astype(np.uint64) & width, want)
    assert rig.m.state.used == [cap] * P
    assert rig.m.shared(10) is None


def test_partial_load_allocates_its_mask_only_and_is_never_matrix_ready() -> None:
    """A first write with mask 1100 fixes the allocation mask (PE0, PE1 only): the record
    is complete and published for those PEs but not cooperatively ready, a later write
    outside the allocation is rejected, and a matrix bundle refuses it."""
    rng = np.random.default_rng(5)
    rig = Rig()
    b = raw_values(rng, D.FP16, (32, 16), "normal")
    rig.run(shared_load(rig, b, D.FP16, 4, mask="1100"))
    rec = rig.m.shared(4)
    assert rec is not None
    assert (rec.alloc_mask, rec.init_mask, rec.published, rec.matrix_ready) == (
        12,
        12,
        True,
        False,
    )
    assert rig.m.state.used == [1024, 1024, 0, 0]
    f = last_fault(rig, shared_load(rig, b, D.FP16, 4, mask="1111"), TileLegalityFault)
    assert "allocation mask" in f.rule
    rig.run(cube_load(rig, raw_values(rng, D.FP16, (16, 32), "normal"), D.FP16, M16,
                      mask="1100"))  # fmt: skip
    mm = matrix("TMATMUL", D.FP16, (16, 16, 32), ["T#1"], [("U", 5)], shared=(4,), mask="1100")
    f = rig.fault(mm, TileLegalityFault)
    assert "cooperatively ready" in f.rule


def test_compatible_rewrite_updates_and_incompatible_rewrite_faults() -> None:
    """An allocated register accepts a write of the same descriptor (new values, same
    capacity charge) and rejects another shape without effect; it keeps its
    allocation until reset."""
    rng = np.random.default_rng(6)
    rig = Rig()
    a1 = raw_values(rng, D.FP32, (8, 16), "normal")
    a2 = raw_values(rng, D.FP32, (8, 16), "normal")
    rig.run(shared_load(rig, a1, D.FP32, 0))
    used = list(rig.m.state.used)
    rig.run(shared_load(rig, a2, D.FP32, 0))
    assert np.array_equal(ubits(shared_vals(rig, 0)).astype(np.uint64), a2)
    assert rig.m.state.used == used
    f = last_fault(rig, shared_load(rig, a1[:4], D.FP32, 0), TileLegalityFault)
    assert "keeps its descriptor" in f.rule
    f = last_fault(rig, shared_load(rig, a1, D.FP16, 0), TileLegalityFault)
    assert "SharedTileUpdateCompatible" in f.rule


def test_shared_capacity_is_charged_in_the_local_budget() -> None:
    """A Shared allocation occupies its TSize on every PE of its mask, in the same per-PE
    budget as Local tiles (D2): it makes a Local allocation fail, and a Shared one fails
    when Local tiles hold the capacity."""
    rng = np.random.default_rng(7)
    rig = Rig(capacity=4096)
    rig.run(shared_load(rig, raw_values(rng, D.FP32, (32, 16), "normal"), D.FP32, 1,
                        size=5))  # 2 KiB  # fmt: skip
    rig.run(rig.load(np.ones((8, 64), np.uint64), D.FP32, size=5))  # 2 KiB Local: full
    last_fault(rig, rig.load(np.ones((1, 32), np.uint64), D.FP32, size=1), TileAllocationFault)
    f = last_fault(rig, shared_load(rig, raw_values(rng, D.FP32, (1, 32), "normal"), D.FP32, 2),
                  TileLegalityFault)  # fmt: skip
    assert "capacity" in f.rule


def test_zero_mask_shared_bindings_are_strict_noops() -> None:
    """PE_MASK 0000 on the only B.IOS of a TLOAD, or on every binding of a matrix bundle:
    no effect and no check (the matrix bundle here lacks even its B.FPATR)."""
    rig = Rig()
    rig.noop(block("TLOAD", "FP16", dim_lines(32, 16), "B.IOR a0, a1",
                   "B.IOS mask=0000, ->S7<1KB>"))  # fmt: skip
    rig.noop("BSTART.TMATMUL FP16\nB.IOS S3, mask=0000\nB.IOS S4, mask=0000\n"
             "B.IOT mask=0000, last, ->U<128B>\nBSTOP\n")  # fmt: skip
    assert rig.m.shared(7) is None


def test_shared_register_numbers_are_checked() -> None:
    rig = Rig()
    with pytest.raises(MachineError):
        rig.m.shared(256)


def test_shared_tload_probes_only_the_selected_quarters() -> None:
    """PE0's quarter (rows 0..3 of a 16-row tile) lies in memory; the other PEs' bases
    point past the end of GM: with mask 1000 only PE0 accesses memory and the load
    succeeds, with 1111 it faults (DataPage) without effect."""
    rng = np.random.default_rng(8)
    rig = Rig()
    v = raw_values(rng, D.FP16, (16, 32), "normal")
    text = shared_load(rig, v, D.FP16, 5, mask="1000")
    for pe in (1, 2, 3):
        rig.m.set_gpr("s8", rig.m.config.gm_size, pe=pe)  # the other PEs' windows: no GM
    rig.run(text)
    rec = rig.m.shared(5)
    assert rec is not None and rec.alloc_mask == 0b1000
    assert bool(rec.written[:4].all()) and not bool(rec.written[4:].any())
    last_fault(rig, shared_load(rig, v, D.FP16, 6), DataPageFault)


# --------------------------------------------------------------------------- matrix operands

FLOAT = [(D.FP16, D.FP16), (D.BF16, D.BF16), (D.FP32, D.FP32), (D.E4M3, D.E5M2)]
INT = [(D.S8, D.S8), (D.U8, D.U8), (D.S16, D.S8)]


@st.composite
def shared_case(draw):  # type: ignore[no-untyped-def]
    a_t, b_t = draw(st.sampled_from(FLOAT + INT))
    m = draw(st.sampled_from([1, 2, 8, 16, 32]))
    n = draw(st.sampled_from([1, 4, 8, 16]))
    k = draw(st.sampled_from([1, 2, 16, 32, 64]))
    form = draw(st.sampled_from(["", "_ACC", "_BIAS"]))
    groups = draw(st.sampled_from(["right", "both"]))
    trans_a = groups == "both" and draw(st.booleans())
    trans_b = draw(st.booleans())
    mask = draw(st.sampled_from(["1111", "1110", "0001"]))
    style = draw(st.sampled_from(["raw", "normal", "mixed"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return a_t, b_t, m, n, k, form, groups, trans_a, trans_b, mask, style, seed


@examples(30)
@given(case=shared_case())
def test_shared_operands_give_the_local_bits(case) -> None:  # type: ignore[no-untyped-def]
    """The same matrices as Local CUBE operands and as Shared operands (only B, or A and
    B; stored transposed under TransA/TransB) give the same D bits, definedness and
    status on every participating PE, and the D11 reference's."""
    a_t, b_t, m, n, k, form, groups, trans_a, trans_b, mask, style, seed = case
    rng = np.random.default_rng(seed)
    acc_t = sm.accumulator_type(a_t, b_t)
    layout = M16 if m <= 16 else M32
    a = raw_values(rng, a_t, (m, k), style)
    b = raw_values(rng, b_t, (k, n), style)
    c = raw_values(rng, acc_t, (m, n), style)
    bias = raw_values(rng, acc_t, (1, n), style)
    d_size = cube_size(acc_t, layout, m, n)
    datr = f"B.DATR {b_t.name}" if b_t != a_t else ""
    fp = f"B.FPATR 0, 0, 0, 0, 0, 0, 0, {int(trans_a)}, {int(trans_b)}"
    results = []
    for shared in (False, True):
        rig = Rig()
        text = ""
        local: list[str] = []
        if form == "_ACC":
            text += cube_load(rig, c, acc_t, layout, hand="U", size=d_size, mask=mask)
            local.append("U#1")
        ids: tuple[int, ...] = ()
        if shared and groups == "both":
            text += shared_load(rig, a.T if trans_a else a, a_t, 10)
            ids += (10,)
        else:
            text += cube_load(rig, a, a_t, layout, mask=mask)
            local.append("T#1")
        if shared:
            text += shared_load(rig, b.T if trans_b else b, b_t, 11)
            ids += (11,)
        else:
            text += cube_load(rig, b, b_t, N8, hand="N", mask=mask)
            local.append("N#1")
        if form == "_BIAS":
            text += rig.load(bias, acc_t, hand="M", mask=mask)
            local.append("M#1")
        f = fp if shared else "B.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 0"
        text += matrix(f"TMATMUL{form}", a_t, (m, n, k), local, [("U", d_size)], datr=datr,
                       mask=mask, fpatr=f, shared=ids)  # fmt: skip
        rig.run(text)
        results.append((view(rig, "U#1"), rig.m.status.copy()))
        if not shared:  # the operands' carrier values, for the D11 reference
            pe0 = mask.index("1")
            av, bv = view(rig, "T#1").values[pe0], view(rig, "N#1").values[pe0]
            extra = {}
            if form == "_ACC":
                extra["acc"] = view(rig, "U#2").values[pe0]
            if form == "_BIAS":
                extra["bias"] = view(rig, "M#1").values[pe0]
    (loc, st_loc), (sh, st_sh) = results
    pes = [i for i, ch in enumerate(mask) if ch == "1"]
    assert sh.layout is loc.layout and sh.mask == loc.mask
    assert np.array_equal(ubits(sh.values[pes]), ubits(loc.values[pes]))
    assert np.array_equal(sh.defined, loc.defined)
    assert st_sh.tolist() == st_loc.tolist()
    ref = sm.matmul(av, a_t, bv, b_t, **extra)
    for pe in pes:
        assert np.array_equal(ubits(sh.values[pe]), ubits(ref.d))


def test_mx_both_groups_shared_with_scales() -> None:
    """TMATMUL_MX with E4M3 x E5M2: four B.IOS (A, A scale, B, B scale) give the Local
    bundle's bits; with only the right group (B, B scale) Shared as well."""
    rng = np.random.default_rng(12)
    m, n, k = 2, 8, 64
    blocks = sm.scale_blocks(k)
    a = raw_values(rng, D.E4M3, (m, k), "normal")
    b = raw_values(rng, D.E5M2, (k, n), "normal")
    sa = rng.integers(110, 140, (m, blocks), dtype=np.uint64)
    sb = rng.integers(110, 140, (blocks, n), dtype=np.uint64)
    size = cube_size(D.FP32, M16, m, n)
    out = []
    for variant in ("local", "right", "both"):
        rig = Rig()
        text, srcs, ids = "", [], []
        if variant == "both":
            text += shared_load(rig, a, D.E4M3, 1) + shared_load(rig, sa, D.E8M0, 2)
            ids += [1, 2]
        else:
            text += cube_load(rig, a, D.E4M3, M16) + rig.load(sa, D.E8M0, hand="M")
            srcs += ["T#1", "M#1"]
        if variant == "local":
            text += cube_load(rig, b, D.E5M2, N8, hand="N") + rig.load(sb, D.E8M0, hand="U")
            srcs += ["N#1", "U#1"]
        else:
            text += shared_load(rig, b, D.E5M2, 3) + shared_load(rig, sb, D.E8M0, 4)
            ids += [3, 4]
        text += matrix("TMATMUL_MX", D.E4M3, (m, n, k), srcs, [("U", size)],
                       datr="B.DATR E5M2", shared=tuple(ids))  # fmt: skip
        rig.run(text)
        out.append(ubits(view(rig, "U#1").values))
        if variant == "local":
            ops = [view(rig, h).values[0] for h in ("T#1", "M#1", "N#1", "U#2")]
    ref = sm.matmul(ops[0], D.E4M3, ops[2], D.E5M2, mx=True, a_scale=ops[1], b_scale=ops[3])
    for got in out:
        assert np.array_equal(got, np.broadcast_to(ubits(ref.d), got.shape))


def test_d_layout_follows_the_accumulator_or_m_when_a_is_shared() -> None:
    """With A Shared, D takes C's layout (ACC) or the smallest M layout holding M
    (BundleMatrixCooperativeMLayout): M = 16 gives CUBE_M16, M = 32 CUBE_M32, and a
    CUBE_M32 C keeps M = 16 in CUBE_M32."""
    rng = np.random.default_rng(13)
    for m, c_layout, want in ((16, None, "CUBE_M16"), (32, None, "CUBE_M32"),
                              (16, M32, "CUBE_M32")):  # fmt: skip
        rig = Rig()
        text = shared_load(rig, raw_values(rng, D.FP16, (m, 16), "normal"), D.FP16, 0)
        text += shared_load(rig, raw_values(rng, D.FP16, (16, 8), "normal"), D.FP16, 1)
        op, srcs = "TMATMUL", []
        size = cube_size(D.FP32, c_layout or (M16 if m <= 16 else M32), m, 8)
        if c_layout is not None:
            text += cube_load(rig, raw_values(rng, D.FP32, (m, 8), "normal"), D.FP32,
                              c_layout, hand="U", size=size)  # fmt: skip
            op, srcs = "TMATMUL_ACC", ["U#1"]
        rig.run(text + matrix(op, D.FP16, (m, 8, 16), srcs, [("U", size)], shared=(0, 1)))
        assert view(rig, "U#1").layout.value == want


# --------------------------------------------------------------------------- faults


def _setup() -> Rig:
    """Ready Shared registers S0 = FP16 16x32 (A), S1 = FP16 32x16 (B), S2 = FP16 16x32
    (B^T), S3 = FP32 8x16, S5 = FP16 32x16 on mask 1100 only; Local T#1 = A (CUBE_M16),
    N#1 = B (CUBE_N8), U#1 = C FP32 16x16 CUBE_M16 (2 KiB), M#1 = bias FP32 1x16."""
    rng = np.random.default_rng(1)
    rig = Rig()
    a = raw_values(rng, D.FP16, (16, 32), "normal")
    b = raw_values(rng, D.FP16, (32, 16), "normal")
    text = shared_load(rig, a, D.FP16, 0) + shared_load(rig, b, D.FP16, 1)
    text += shared_load(rig, b.T, D.FP16, 2)
    text += shared_load(rig, raw_values(rng, D.FP32, (8, 16), "normal"), D.FP32, 3)
    text += shared_load(rig, b, D.FP16, 5, mask="1100")
    text += cube_load(rig, a, D.FP16, M16) + cube_load(rig, b, D.FP16, N8, hand="N")
    text += rig.load(raw_values(rng, D.FP32, (1, 16), "normal"), D.FP32, hand="M")
    text += matrix("TMATMUL", D.FP16, (16, 16, 32), ["T#1", "N#1"], [("U", 5)])
    rig.run(text)
    for pe in range(rig.pes):
        rig.m.set_gpr("a0", 0x40000, pe=pe)
        rig.m.set_gpr("a1", 64, pe=pe)
    return rig


def mm(srcs: list[str], shared: tuple[int, ...], op: str = "TMATMUL",
       dims: tuple[int | None, int | None, int | None] = (16, 16, 32), **kw) -> str:  # type: ignore[no-untyped-def]  # fmt: skip
    return matrix(op, D.FP16, dims, srcs, [("U", 5)], shared=shared, **kw)


def _tload(ios: str, dims: str = dim_lines(32, 16, 32), extra: str = "") -> str:
    return block("TLOAD", "FP16", extra, dims, "B.IOR a0, a1", ios)


TRANS_B = "B.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 1"
TRANS_A = "B.FPATR 0, 0, 0, 0, 0, 0, 0, 1, 0"

#: (fault, program, message fragment): one row per Shared rule
FAULTS: list[tuple[type[MachineFault], str, str]] = [
    # header: BindBundleSharedIO
    (TileLegalityFault, mm(["T#1"], (1,)).replace("B.IOS S1, mask=1111",
                                                  "B.IOS S1, mask=1100"), "one PE_MASK"),
    (TileLegalityFault, mm([], (0, 1)).replace("B.IOS S1, mask=1111",
                                               "B.IOS S1, mask=1100"), "one PE_MASK"),
    (BundleControlFault, mm([], (1, 1)), "twice"),
    (BundleControlFault, matrix("TMATMUL_MX", D.E4M3, (16, 16, 32), [], [("U", 5)],
                                shared=(0, 1, 2, 3, 5)), "at most 4"),
    # the matrix preflight
    (TileLegalityFault, mm(["T#1", "N#1"], (1,)), "Local sources"),
    (TileLegalityFault, mm([], (1,)), "Local sources"),
    (TileLegalityFault, matrix("TMATMUL_MX", D.E4M3, (16, 16, 32), ["T#1"], [("U", 5)],
                               shared=(1,)), "complete groups"),
    (TileLegalityFault, matrix("TGEMV", D.FP16, (1, 16, 32), ["T#1"], [("U", 5)],
                               shared=(1,)), "Local-only"),
    (TileLegalityFault, mm(["T#1"], (1,)).replace("B.IOS S1, mask=1111",
                                                  "B.IOS mask=1111, ->S1<1KB>"), "source"),
    (TileLegalityFault, mm(["T#1"], (1,), dims=(16, 12, 32)), "powers of two"),
    (TileLegalityFault, mm(["T#1"], (1,), dims=(15, 16, 32)), "powers of two"),
    (TileLegalityFault, mm(["T#1"], (1,), fpatr=TRANS_A), "only B is Shared"),
    (TileLegalityFault, mm(["T#1"], ()).replace(
        "B.IOT T#1, mask=1111, last", "B.IOS S1, mask=1100\nB.IOT T#1, mask=1111, last"),
     "one PE_MASK"),
    # readiness and the read schema (run time)
    (TileLegalityFault, mm(["T#1"], (7,)), "unallocated"),
    (TileLegalityFault, mm(["T#1"], (5,)), "cooperatively ready"),
    (TileLegalityFault, mm(["T#1"], (0,)), "SharedTileReadSchemaLegal"),  # 16x32 as 32x16
    (TileLegalityFault, mm(["T#1"], (2,)), "SharedTileReadSchemaLegal"),  # B^T without TransB
    (TileLegalityFault, mm(["T#1"], (1,), fpatr=TRANS_B), "stored transposed"),
    (TileLegalityFault, mm(["T#1"], (3,), dims=(16, 16, 8)), "SharedTileReadSchemaLegal"),
    (TileLegalityFault, mm([], (0, 1), dims=(16, 16, 64)), "SharedTileReadSchemaLegal"),
    (TileLegalityFault, mm(["N#1"], (1,)), "CUBE_M16 or CUBE_M32"),
    (TileLegalityFault, mm([], (0, 1), dims=(32, 16, 32)), "SharedTileReadSchemaLegal"),
    (TileLegalityFault, mm(["T#1"], (0, 1)), "Local sources"),
    (TileLegalityFault, mm(["N#1"], (0, 1), op="TMATMUL_ACC"), "accumulator C"),
    (TileLegalityFault, mm(["U#1", "M#1"], (0, 1), op="TMATMUL_BIAS"), "Local sources"),
    # Shared TLOAD: ExecuteBundleSharedTLSUOperation / TLOADShared
    (TileLegalityFault, _tload("B.IOS S9, mask=1111"), "destination B.IOS"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<1KB>\nB.IOS mask=1111, ->S8<1KB>"),
     "exactly one B.IOS"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<1KB>\n" + iot(dst="T", size=4)),
     "no B.IOT"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<1KB>", dim_lines(32, 16)), "LB2"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<1KB>", dim_lines(32, 16, 16)),
     "ValidCol <= Col"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<512B>"), "TileDescriptorShapeLegal"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<1KB>", dim_lines(24, 16, 48)),
     "TileDescriptorShapeLegal"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<1KB>", extra="B.DATR Max"), "PadValue"),
    (BundleControlFault, block("TLOAD", "FP16", dim_lines(32, 16, 32),
                               "B.IOR a0, a1, zero, ->a2", "B.IOS mask=1111, ->S9<1KB>"),
     "BundleOperationScalarBindingSchemaLegal"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S9<256KB>"), "more than its capacity"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S1<2KB>", dim_lines(32, 32, 32)),
     "keeps its descriptor"),
    (TileLegalityFault, _tload("B.IOS mask=1111, ->S5<1KB>"), "allocation mask"),
    (UnsupportedOperation, _tload("B.IOS mask=1111, ->S9<1KB>", extra="B.DATR Layout=ND2DN"),
     "layout"),
    (UnsupportedOperation,
     block("TSTORE", "FP16", "B.DATR Layout=ND2DN", "B.IOS S200, mask=1111"),
     "Shared tile read in layout"),
]  # fmt: skip


@pytest.mark.parametrize("cls, text, fragment", FAULTS, ids=[f[2] for f in FAULTS])
def test_every_shared_rule_faults_without_effect(cls, text, fragment) -> None:  # type: ignore[no-untyped-def]
    rig = _setup()
    f = rig.fault(text, cls)
    assert fragment in f.rule, f.rule


def test_setup_bundles_are_legal() -> None:
    """The fault table's base programs run: S1 as B beside a Local A, S0 and S1, S2 with
    TransB, and TransA over a stored A^T."""
    rig = _setup()
    rig.run(mm(["T#1"], (1,)))
    rig.run(mm([], (0, 1)))
    rig.run(mm(["T#1"], (2,), fpatr=TRANS_B))
    rig.run(mm(["U#1"], (0, 1), op="TMATMUL_ACC"))
    rig.run(mm(["M#1"], (0, 1), op="TMATMUL_BIAS"))
    d = [view(rig, f"U#{i}") for i in range(1, 6)]
    for t in d:
        assert t.layout.value == "CUBE_M16"
    # U#5: T#1 x S1, U#4: S0 x S1, U#3: T#1 x S2^T -- one product
    assert np.array_equal(ubits(d[3].values), ubits(d[4].values))
    assert np.array_equal(ubits(d[2].values), ubits(d[4].values))
