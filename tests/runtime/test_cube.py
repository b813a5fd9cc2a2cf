"""The CUBE engine in the executor: transport conversions, the twelve matrix operations,
their preflight (one fault test per rule, each with a no-effect snapshot) and the D11
results per PE.

Operands reach the CUBE the way a kernel moves them: raw bits in GM, TLOAD through the
ND2M16/ND2M32/ND2N8 conversions, results read back from the published tile or stored
through M162ND/M322ND. Results are compared bit for bit, with definedness and per-PE
status, against :func:`ptoc.backend.isa.semantics.matmul.matmul` (the D11 reference,
tested against an exact Fraction oracle in ``tests/isa/test_semantics_matmul.py``) on the
operand tiles' logical values.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics.floatfmt import RNE, RTZ
from ptoc.runtime import (
    BundleControlFault,
    Layout,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
)

from ._progs import PE_SPAN, Rig, block, dim_lines, iot
from .cube_rig import ZERO_FPATR, cube_load, cube_size, cube_store, matrix

D = DataType
M16, M32, N8 = CubeLayout.M16, CubeLayout.M32, CubeLayout.N8

#: raw-bit masks that must be zero for a valid encoding
_ZERO_BITS = {D.TF32: 0x1FFF, D.HF32: 0x0FFF, D.E3M2: 0xC0, D.E2M3: 0xC0}
#: raw specials of the wide float types (Inf, qNaN payloads, sNaN, largest, subnormals)
_SPECIALS = {
    D.FP32: [0x7F800000, 0x7FC00001, 0x7F800001, 0x7F7FFFFF, 0x00000001, 0x00800000],
    D.TF32: [0x7F800000, 0x7FC02000, 0x7F802000, 0x7F7FE000, 0x00002000, 0x00800000],
    D.HF32: [0x7F800000, 0x7FC01000, 0x7F801000, 0x7F7FF000, 0x00001000, 0x00800000],
    D.FP16: [0x7C00, 0x7E01, 0x7C01, 0x7BFF, 0x0001, 0x0400],
    D.BF16: [0x7F80, 0x7FC1, 0x7F81, 0x7F7F, 0x0001, 0x0080],
}


def raw_values(rng: np.random.Generator, dt: DataType, shape: tuple[int, ...], style: str):
    """Raw bits of ``dt``: uniform over every encoding ("raw": every binade, NaN payloads,
    +-0, Inf), moderate values ("normal") or a mix with the type's specials and zeros."""
    bits = info(dt).bits
    raw = rng.integers(0, 1 << bits, shape, dtype=np.uint64)
    if style == "normal" and info(dt).is_float and bits >= 16:
        fl = rng.uniform(-4, 4, shape)
        carrier = {D.FP16: np.float16}.get(dt, np.float32)
        v = np.ascontiguousarray(fl.astype(carrier))
        raw = v.view(np.uint16 if carrier == np.float16 else np.uint32).astype(np.uint64)
        if dt == D.BF16:
            raw >>= np.uint64(16)
    if style == "mixed":
        sign = np.uint64(1 << (bits - 1))
        pool = np.array([0, int(sign), *_SPECIALS.get(dt, [])], np.uint64)
        pool = np.concatenate([pool, pool | sign]) & np.uint64((1 << bits) - 1)
        pick = rng.random(shape) < 0.3
        raw = np.where(pick, rng.choice(pool, shape), raw)
    z = _ZERO_BITS.get(dt)
    if z is not None:
        raw &= ~np.uint64(z)
    return raw


def view(rig: Rig, name: str):  # type: ignore[no-untyped-def]
    return rig.m.tile(name)


def storage_defined(rig: Rig, hand: int, index: int = 1) -> np.ndarray:
    """The (pes, Rows, Col) definedness of the whole storage of queue entry ``index``."""
    return rig.m.state.queues[hand][index - 1].definedness()


def ubits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def pes_of(mask: str) -> list[int]:
    return [i for i, ch in enumerate(mask) if ch == "1"]


def check_result(rig: Rig, name: str, want: list[np.ndarray], pes: list[int]) -> None:
    """The tile ``name`` holds ``want[i]`` on PE ``pes[i]`` bit for bit, fully defined."""
    t = view(rig, name)
    for w, pe in zip(want, pes, strict=True):
        assert t.values[pe].shape == w.shape
        assert np.array_equal(ubits(t.values[pe]), ubits(np.asarray(w))), (pe, name)
        assert t.defined[pe].all()


# --------------------------------------------------------------------------- geometry


@pytest.mark.parametrize("dt", [D.FP32, D.FP16, D.S8, D.E2M1X2])
@pytest.mark.parametrize("layout", list(CubeLayout))
def test_cell_geometry_is_128_bytes_and_payload_index_a_bijection(dt, layout) -> None:  # type: ignore[no-untyped-def]
    """``TileCubeCellRows``/``Columns`` give 128-byte cells (the note's table), and
    ``TileCubePayloadIndex`` maps the storage rectangle one to one onto its cells."""
    cr, cc = isa_cube.cell_shape(layout, dt)
    assert cr * cc * info(dt).bits == 128 * 8
    expected = {
        (M16, 32): (16, 2), (M16, 16): (16, 4), (M16, 8): (16, 8), (M16, 4): (16, 16),
        (M32, 32): (32, 1), (M32, 16): (32, 2), (M32, 8): (32, 4), (M32, 4): (32, 8),
        (N8, 32): (4, 8), (N8, 16): (8, 8), (N8, 8): (16, 8), (N8, 4): (32, 8),
    }  # fmt: skip
    assert (cr, cc) == expected[(layout, info(dt).bits)]
    vr = 11 if layout is not N8 else 37
    vc = 21
    g = isa_cube.geometry(layout, dt, vr, vc)
    idx = {
        isa_cube.payload_index(layout, dt, vr, vc, r, c)
        for r in range(g.rows)
        for c in range(g.cols)
    }
    assert idx == set(range(g.cells * cr * cc))
    assert g.bytes == g.cells * 128


def test_geometry_limits() -> None:
    assert isa_cube.shape_rule(65536, M16, D.FP32, 17, 4) is not None  # M16 holds 16 rows
    assert isa_cube.shape_rule(65536, M32, D.FP32, 32, 512) is None  # 128*N bytes
    assert isa_cube.shape_rule(32768, M32, D.FP32, 32, 512) is not None
    assert isa_cube.shape_rule(65536, N8, D.S8, 256, 128) is None  # 32768 elements
    assert isa_cube.shape_rule(65536, N8, D.S8, 257, 128) is not None  # elements cap
    assert isa_cube.shape_rule(65536, N8, D.FP64, 8, 8) is not None  # 64-bit unsupported
    assert isa_cube.shape_rule(65536, N8, D.HiF4X2, 8, 8) is not None


# --------------------------------------------------------------------------- transport


@pytest.mark.parametrize(
    "dt, layout, shape",
    [(D.FP16, N8, (13, 19)), (D.FP32, M16, (16, 5)), (D.S8, M32, (20, 33)),
     (D.E2M1X2, M16, (3, 17)), (D.U4X2, N8, (40, 9)), (D.E8M0, N8, (8, 8))],
)  # fmt: skip
def test_cube_load_and_store_round_trip(dt, layout, shape) -> None:  # type: ignore[no-untyped-def]
    """TLOAD ND2* reads the strided GM rectangle by logical coordinates into a Matrix
    tile of the derived storage shape; TSTORE *2ND writes the same bytes back."""
    rig = Rig()
    rng = np.random.default_rng(5)
    vals = raw_values(rng, dt, (rig.pes, *shape), "raw")
    rig.run(cube_load(rig, vals, dt, layout))
    plain = Rig()
    plain.run(plain.load(vals, dt))  # the ordinary TLOAD of the same GM data
    t = view(rig, "T#1")
    g = isa_cube.geometry(layout, dt, *shape)
    assert t.layout is Layout(layout.value)
    assert (t.rows, t.cols, t.valid_rows, t.valid_cols) == (g.rows, g.cols, *shape)
    assert t.capacity == 1 << (cube_size(dt, layout, *shape) + 6)
    ref = view(plain, "T#1")
    for pe in range(rig.pes):
        assert np.array_equal(ubits(t.values[pe]), ubits(ref.values[pe]))
        assert t.defined[pe].all()
    assert storage_defined(rig, 0).all()  # B.DATR PadValue 0 is Zero: padding defined
    pad = np.ones(t.payload.shape[1:], bool)
    pad[: shape[0], : shape[1]] = False
    assert not ubits(t.payload[0])[pad].any()
    null = Rig()
    null.run(cube_load(null, vals, dt, layout, pad="Null"))
    full = storage_defined(null, 0)
    assert full[:, : shape[0], : shape[1]].all() and not full[:, pad].any()
    stride = (shape[1] * info(dt).bits + 7) // 8
    for pe in range(rig.pes):
        rig.m.set_gpr("a0", 0x40000 + pe * 0x1000, pe=pe)
        rig.m.set_gpr("a1", stride, pe=pe)
    rig.run(cube_store(dt, layout, "T#1", *shape))
    for pe in range(rig.pes):
        got = rig.m.read_gm(0x40000 + pe * 0x1000, np.uint8, stride * shape[0])
        src = plain.m.read_gm(0x100 + pe * PE_SPAN, np.uint8, stride * shape[0])
        if info(dt).bits == 4 and shape[1] % 2:  # the high nibble of each row's last byte
            keep = np.ones(stride * shape[0], bool)
            keep[stride - 1 :: stride] = False
            got, src = got[keep], src[keep]
        assert np.array_equal(got, src), pe


def test_cube_load_padvalue_defines_the_storage_padding() -> None:
    rig = Rig()
    vals = np.arange(3 * 5, dtype=np.uint64).reshape(3, 5) + 1
    rig.run(cube_load(rig, vals, D.S32, M16, pad="Max"))
    t = view(rig, "T#1")
    assert (t.rows, t.cols) == (16, 6)  # 16 x 2 cells, 5 columns round up to 6
    assert storage_defined(rig, 0).all()
    assert (t.payload[0, 3:, :] == np.iinfo(np.int32).max).all()
    assert (t.payload[0, :, 5] == np.iinfo(np.int32).max).all()


# --------------------------------------------------------------------------- results

FLOAT_PAIRS = [
    (D.FP16, D.FP16), (D.BF16, D.BF16), (D.FP32, D.FP32), (D.TF32, D.HF32),
    (D.FP16, D.E4M3), (D.E5M2, D.E4M3), (D.HiF8, D.BF16), (D.E3M2, D.E2M3),
    (D.E2M1X2, D.E1M2X2), (D.FP32, D.E2M1X2),
]  # fmt: skip
INT_PAIRS = [(D.S8, D.S8), (D.S16, D.S8), (D.S4X2, D.S16), (D.U8, D.U8), (D.U16, D.U4X2)]


@st.composite
def matrix_case(draw):  # type: ignore[no-untyped-def]
    a_t, b_t = draw(st.sampled_from(FLOAT_PAIRS + INT_PAIRS))
    m = draw(st.sampled_from([1, 2, 7, 16, 17, 32]))
    layout = M16 if m <= 16 and draw(st.booleans()) else M32
    n = draw(st.sampled_from([1, 3, 8, 13, 24]))
    k = draw(st.sampled_from([1, 2, 5, 16, 33, 64]))
    form = draw(st.sampled_from(["", "_ACC", "_BIAS"]))
    mask = draw(st.sampled_from(["1111", "1100", "0100"]))
    style = draw(st.sampled_from(["raw", "normal", "mixed"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return a_t, b_t, m, layout, n, k, form, mask, style, seed


@settings(max_examples=40)
@given(case=matrix_case())
def test_matrix_result_is_the_d11_reference_per_pe(case) -> None:  # type: ignore[no-untyped-def]
    """TMATMUL[_ACC|_BIAS] over random shapes (M, N, K incl. 1 and non-multiples of the
    cells), legal type pairs and values across every binade: D, definedness and status
    per participating PE are the D11 reference's; other PEs keep their status."""
    a_t, b_t, m, layout, n, k, form, mask, style, seed = case
    rng = np.random.default_rng(seed)
    rig = Rig()
    P = rig.pes
    acc_t = sm.accumulator_type(a_t, b_t)
    text = cube_load(rig, raw_values(rng, a_t, (P, m, k), style), a_t, layout, mask=mask)
    text += cube_load(rig, raw_values(rng, b_t, (P, k, n), style), b_t, N8, hand="N", mask=mask)
    d_size = cube_size(acc_t, layout, m, n)
    srcs = ["T#1", "N#1"]
    if form == "_ACC":
        c = raw_values(rng, acc_t, (P, m, n), style)
        text += cube_load(rig, c, acc_t, layout, hand="U", size=d_size, mask=mask)
        srcs = ["U#1", *srcs]
    if form == "_BIAS":
        text += rig.load(raw_values(rng, acc_t, (P, 1, n), style), acc_t, hand="M", mask=mask)
        srcs = [*srcs, "M#1"]
    datr = f"B.DATR {b_t.name}" if b_t != a_t else ""
    text += matrix(f"TMATMUL{form}", a_t, (m, n, k), srcs, [("U", d_size)], datr=datr,
                   mask=mask)  # fmt: skip
    rig.run(text)
    pes = pes_of(mask)
    a = view(rig, "T#1").values
    b = view(rig, "N#1").values
    want, status = [], []
    for pe in pes:
        kw = {}
        if form == "_ACC":
            kw["acc"] = view(rig, "U#2").values[pe]
        if form == "_BIAS":
            kw["bias"] = view(rig, "M#1").values[pe]
        r = sm.matmul(a[pe], a_t, b[pe], b_t, **kw)
        want.append(r.d)
        status.append(r.status)
    check_result(rig, "U#1", want, pes)
    expect = np.zeros(P, np.uint8)
    expect[pes] = status
    assert rig.m.status.tolist() == expect.tolist()


@pytest.mark.parametrize(
    "a_t, chunks",
    [(D.FP16, [16, 16, 16, 16]), (D.FP32, [5, 32, 1, 26]), (D.BF16, [33, 31]), (D.S8, [7, 9])],
)
def test_k_split_chain_equals_one_fold(a_t, chunks) -> None:  # type: ignore[no-untyped-def]
    """TMATMUL then TMATMUL_ACC over K chunks (C = the previous D) publishes exactly the
    bits, status included, of one TMATMUL over all of K and of one D11 fold."""
    rng = np.random.default_rng(11)
    m, n, k = 16, 12, sum(chunks)
    rig, whole = Rig(), Rig()
    P = rig.pes
    a = raw_values(rng, a_t, (P, m, k), "mixed")
    b = raw_values(rng, a_t, (P, k, n), "mixed")
    acc_t = sm.accumulator_type(a_t, a_t)
    size = cube_size(acc_t, M16, m, n)
    k0 = 0
    for i, kc in enumerate(chunks):
        text = cube_load(rig, a[:, :, k0 : k0 + kc], a_t, M16)
        text += cube_load(rig, b[:, k0 : k0 + kc, :], a_t, N8, hand="N")
        if i == 0:
            text += matrix("TMATMUL", a_t, (m, n, kc), ["T#1", "N#1"], [("U", size)])
        else:
            text += matrix("TMATMUL_ACC", a_t, (m, n, kc), ["U#1", "T#1", "N#1"], [("U", size)])
        rig.run(text)
        k0 += kc
    text = cube_load(whole, a, a_t, M16) + cube_load(whole, b, a_t, N8, hand="N")
    whole.run(text + matrix("TMATMUL", a_t, (m, n, k), ["T#1", "N#1"], [("U", size)]))
    got, one = view(rig, "U#1"), view(whole, "U#1")
    av, bv = view(whole, "T#1").values, view(whole, "N#1").values
    for pe in range(P):
        assert np.array_equal(ubits(got.values[pe]), ubits(one.values[pe]))
        ref, st_ = sm.fold(av[pe], a_t, bv[pe], a_t)
        assert np.array_equal(ubits(got.values[pe]), ubits(ref))
        assert int(rig.m.status[pe]) == int(whole.m.status[pe]) == st_


def test_mx_and_gemv_results() -> None:
    """TMATMUL_MX_BIAS and TGEMV_MX with an E4M3 A (an E8M0 scale) and an FP16 B (none):
    the source stream carries exactly the scales the types need."""
    rng = np.random.default_rng(4)
    rig = Rig()
    P = rig.pes
    k, n = 70, 9
    blocks = sm.scale_blocks(k)
    a = raw_values(rng, D.E4M3, (P, 1, k), "mixed")
    sa = rng.integers(100, 150, (P, 1, blocks), dtype=np.uint64)
    b = raw_values(rng, D.FP16, (P, k, n), "normal")
    bias = raw_values(rng, D.FP32, (P, 1, n), "normal")
    text = cube_load(rig, a, D.E4M3, M16) + rig.load(sa, D.E8M0, hand="M")
    text += cube_load(rig, b, D.FP16, N8, hand="N") + rig.load(bias, D.FP32, hand="M")
    size = cube_size(D.FP32, M16, 1, n)
    text += matrix("TMATMUL_MX_BIAS", D.E4M3, (1, n, k), ["T#1", "M#2", "N#1", "M#1"],
                   [("U", size)], datr="B.DATR FP16")  # fmt: skip
    text += matrix("TGEMV_MX", D.E4M3, (None, n, k), ["T#1", "M#2", "N#1"], [("U", size)],
                   datr="B.DATR FP16")  # fmt: skip
    rig.run(text)
    av, sav = view(rig, "T#1").values, view(rig, "M#2").values
    bv, biasv = view(rig, "N#1").values, view(rig, "M#1").values
    want_bias, want_gemv, st_ = [], [], []
    for pe in range(P):
        r1 = sm.matmul(av[pe], D.E4M3, bv[pe], D.FP16, mx=True, a_scale=sav[pe], bias=biasv[pe])
        r2 = sm.matmul(av[pe], D.E4M3, bv[pe], D.FP16, mx=True, a_scale=sav[pe])
        want_bias.append(r1.d)
        want_gemv.append(r2.d)
        st_.append(r1.status | r2.status)
    check_result(rig, "U#2", want_bias, list(range(P)))
    check_result(rig, "U#1", want_gemv, list(range(P)))
    assert rig.m.status.tolist() == st_


def test_fpatr_quantization_and_reductions_publish_one_group() -> None:
    """PreQuantMode 32 (FP16 D, scalar FP19 scale in B.IOR) with ReLU, RowMaxEn and
    GroupMaxEn (GroupN 8, MaxAbsEn): D, RowMaxOut and GroupMaxOut together, per PE."""
    rng = np.random.default_rng(8)
    rig = Rig()
    P = rig.pes
    m, n, k = 5, 16, 20
    a = raw_values(rng, D.FP16, (P, m, k), "normal")
    b = raw_values(rng, D.FP16, (P, k, n), "normal")
    text = cube_load(rig, a, D.FP16, M16) + cube_load(rig, b, D.FP16, N8, hand="N")
    words = [sf.quant_param((127 << 10) + pe * 7) for pe in range(P)]  # FP19 ~1.0
    for pe, w in enumerate(words):
        rig.m.set_gpr("a4", w, pe=pe)
    f = sf.Fpatr(pre_quant_mode=32, relu_mode=1, group_n_code=1, row_max=True,
                 group_max=True, max_abs=True)  # fmt: skip
    fp = "B.FPATR 32, 1, 1, 1, 1, 0, 1, 0, 0"
    text += matrix("TMATMUL", D.FP16, (m, n, k), ["T#1", "N#1"],
                   [("U", cube_size(D.FP16, M16, m, n)), ("M", 1), ("M", 1)],
                   fpatr=fp, ior="B.IOR a4")  # fmt: skip
    rig.run(text)
    av, bv = view(rig, "T#1").values, view(rig, "N#1").values
    res = [sm.matmul(av[pe], D.FP16, bv[pe], D.FP16, fpatr=f, quant=words[pe])
           for pe in range(P)]  # fmt: skip
    check_result(rig, "U#1", [r.d for r in res], list(range(P)))
    check_result(rig, "M#2", [r.row_max for r in res], list(range(P)))
    check_result(rig, "M#1", [r.group_max for r in res], list(range(P)))
    assert view(rig, "U#1").dtype == D.FP16 and view(rig, "M#1").layout is Layout.ROW_MAJOR
    assert rig.m.status.tolist() == [r.status for r in res]


@pytest.mark.parametrize("a_t", [D.FP16, D.FP32, D.S8])
def test_datr_rmode_and_sat_are_the_fold_controls_under_prequant_mode_0(a_t) -> None:
    """The matrix dispatch does not apply ``BundleFPATRDATRFieldsLegal`` (the ASL's own
    PTO-AVS-BLOCK-TMATMUL-EXEC-001 executes PreQuantMode 0 with RMode 1 and Sat set):
    RMode rounds every fold step (D11), Sat leaves a mode-0 result unconverted, and an
    integer fold stays exact and wrapping."""
    rng = np.random.default_rng(7)
    m, n, k = 4, 8, 24
    acc_t = sm.accumulator_type(a_t, a_t)
    # moderate values, so that sums round; integers over every encoding (they wrap)
    a = raw_values(rng, a_t, (m, k), "normal")
    b = raw_values(rng, a_t, (k, n), "normal")
    size = cube_size(acc_t, M16, m, n)
    results = {}
    for rmode, sat in ((0, 0), (RTZ, 0), (RTZ, 1), (RNE, 1)):
        rig = Rig()
        text = cube_load(rig, a, a_t, M16) + cube_load(rig, b, a_t, N8, hand="N")
        rname = {0: "", RTZ: ", RTZ", RNE: ", RNE"}[rmode]
        datr = f"B.DATR {a_t.name}{rname}{', Sat=1' if sat else ''}"
        rig.run(text + matrix("TMATMUL", a_t, (m, n, k), ["T#1", "N#1"], [("U", size)],
                              datr=datr))  # fmt: skip
        av, bv = view(rig, "T#1").values[0], view(rig, "N#1").values[0]
        want = sm.matmul(av, a_t, bv, a_t, rmode=rmode, sat=bool(sat))
        check_result(rig, "U#1", [want.d] * rig.pes, list(range(rig.pes)))
        results[(rmode, sat)] = ubits(view(rig, "U#1").values[0])
    assert np.array_equal(results[(RTZ, 0)], results[(RTZ, 1)])
    if info(a_t).is_float:
        # RTZ really reaches the fold: some of these sums round differently
        assert not np.array_equal(results[(0, 0)], results[(RTZ, 0)])
    else:
        assert np.array_equal(results[(0, 0)], results[(RTZ, 1)])


def test_zero_mask_matrix_bundle_is_a_strict_noop() -> None:
    """PE_MASK 0000: no effect and no check, not even the mandatory B.FPATR."""
    rig = Rig()
    before = rig.m.snapshot()
    rig.run("BSTART.TMATMUL FP16\nB.IOT T#9, N#16, mask=0000, last, ->U<128B>\nBSTOP\n")
    assert rig.m.snapshot() == before


# --------------------------------------------------------------------------- faults


def _setup() -> tuple[Rig, str]:
    """T#1 = A FP16 16x32 M16, N#1 = B FP16 32x16 N8, U#1 = C FP32 16x16 M16 (2 KiB),
    M#1 = bias FP32 1x16, M#2 = an S8 1x16 RowMajor tile."""
    rng = np.random.default_rng(1)
    rig = Rig()
    text = cube_load(rig, raw_values(rng, D.FP16, (16, 32), "normal"), D.FP16, M16)
    text += cube_load(rig, raw_values(rng, D.FP16, (32, 16), "normal"), D.FP16, N8, hand="N")
    text += rig.load(np.ones((1, 16), np.uint64), D.S8, hand="M")
    text += rig.load(raw_values(rng, D.FP32, (1, 16), "normal"), D.FP32, hand="M")
    text += matrix("TMATMUL", D.FP16, (16, 16, 32), ["T#1", "N#1"], [("U", 5)])
    rig.run(text)
    return rig, ""


MM = matrix("TMATMUL", D.FP16, (16, 16, 32), ["T#1", "N#1"], [("U", 5)])
ACC = matrix("TMATMUL_ACC", D.FP16, (16, 16, 32), ["U#1", "T#1", "N#1"], [("U", 5)])

#: (fault, program, message fragment): one row per preflight rule, in the ASL's order
FAULTS: list[tuple[type[MachineFault], str, str]] = [
    (BundleControlFault, MM.replace(ZERO_FPATR + "\n", ""), "B.FPATR"),
    (TileLegalityFault, MM.replace("BSTART.TMATMUL FP16", "BSTART.TMATMUL FP16\nB.DATR S8"),
     "pair"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.FPATR 0, 0, 0, 0, 0, 1, 0, 0, 0"),
     "BundleFPATRFieldsLegal"),
    (TileLegalityFault, MM.replace("T#1, N#1", "T#1"), "Local sources"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.FPATR 0, 0, 0, 1, 0, 0, 0, 0, 0"),
     "destination"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, ZERO_FPATR + "\nB.IOR a0"), "B.IOR"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.FPATR 32, 0, 0, 0, 0, 0, 0, 0, 0"),
     "B.IOR must"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.FPATR 32, 0, 0, 0, 0, 0, 0, 0, 0\nB.IOR s7"),
     "parameter word"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.DATR FP16, Max\n" + ZERO_FPATR),
     "BundleTMATMULDataAttributesLegal"),
    (TileLegalityFault, MM.replace("zero, 32, ->LB2", "zero, 0, ->LB2"), "nonzero"),
    (TileLegalityFault, matrix("TGEMV", D.FP16, (2, 16, 32), ["T#1", "N#1"], [("U", 5)]),
     "M (LB0) must be 1"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.FPATR 0, 0, 0, 0, 0, 0, 0, 1, 0"),
     "Shared primary"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, "B.FPATR 3, 0, 0, 0, 0, 0, 0, 0, 0\nB.IOR s6"),
     "BundleFPATRAccumulatorTypeLegal"),
    (TileLegalityFault, MM.replace("T#1, N#1", "N#1, T#1"), "CUBE_M16 or CUBE_M32"),
    (TileLegalityFault, MM.replace("BSTART.TMATMUL FP16", "BSTART.TMATMUL BF16"), "BF16 16x32"),
    (TileLegalityFault, MM.replace("zero, 32, ->LB2", "zero, 16, ->LB2"), "16x16"),
    (TileLegalityFault, MM.replace("T#1, N#1", "T#1, U#1"), "CUBE_N8"),
    (TileLegalityFault, MM.replace("zero, 16, ->LB1", "zero, 8, ->LB1"), "32x8"),
    (TileLegalityFault, ACC.replace("->U<2KB>", "->U<4KB>"), "TSize"),
    (TileLegalityFault, ACC.replace("B.IOT U#1, T#1", "B.IOT T#1, T#1"), "accumulator C"),
    (TileLegalityFault,
     matrix("TMATMUL_BIAS", D.FP16, (16, 16, 32), ["T#1", "N#1", "M#2"], [("U", 5)]), "bias"),
    (TileAllocationFault, MM.replace("->U<2KB>", "->U<512B>"), "TileCubeRequiredBytes"),
    (TileLegalityFault,
     matrix("TMATMUL_MX", D.E4M3, (16, 16, 32), ["T#1", "N#1"], [("U", 5)]), "A scale"),
    (TileLegalityFault, MM.replace(ZERO_FPATR, ZERO_FPATR + "\nB.IOS S3, mask=1111"),
     "beside 1 Shared"),
    (TileLegalityFault,
     matrix("TGEMV", D.FP16, (1, 16, 32), ["T#1", "N#1"], [("U", 5)]).replace(
         ZERO_FPATR, ZERO_FPATR + "\nB.IOS S3, mask=1111"), "Local-only"),
    # a CUBE tile is readable only by matrix bundles and the CUBE store conversion
    (TileLegalityFault, block("TADD", "FP32", dim_lines(16, 16), iot("U#1", "U#1", dst="U",
                                                                    size=5)), "CUBE tile"),
    (TileLegalityFault, block("TSTORE", "FP32", "B.IOR a0, a1", iot("U#1")), "CUBE tile"),
    (TileLegalityFault, block("TMOV", "FP32", iot("U#1", dst="T", size=5)), "CUBE tile"),
    (TileLegalityFault, block("TMOV", "FP32", "B.DATR Layout=ND2M16, DataType=DTYPE_NONE",
                              dim_lines(16, 16), iot("U#1", dst="T", size=5)), "only TLOAD"),
    (TileLegalityFault, cube_store(D.FP32, CubeLayout.M32, "U#1", 16, 16), "CUBE_M32"),
    (TileLegalityFault, cube_store(D.FP32, M16, "U#1", 16, 8), "16x8"),
    (TileLegalityFault, cube_store(D.FP16, M16, "U#1", 16, 16), "FP16"),
    (TileLegalityFault, block("TLOAD", "FP16", "B.DATR Layout=ND2M16, DataType=DTYPE_NONE",
                              dim_lines(8, 8, 8), "B.IOR a0, a1", iot(dst="T", size=5)),
     "no LB2"),
    (TileLegalityFault, block("TLOAD", "FP16", "B.DATR Layout=ND2M16, DataType=FP16",
                              dim_lines(8, 8), "B.IOR a0, a1", iot(dst="T", size=5)),
     "DTYPE_NONE"),
    (TileLegalityFault, block("TLOAD", "FP64", "B.DATR Layout=ND2N8, DataType=DTYPE_NONE",
                              dim_lines(8, 8), "B.IOR a0, a1", iot(dst="T", size=5)),
     "TileCubeDataTypeSupported"),
    (TileLegalityFault, block("TLOAD", "FP16", "B.DATR Layout=M162ND, DataType=DTYPE_NONE",
                              dim_lines(8, 8), "B.IOR a0, a1", iot(dst="T", size=5)),
     "only TSTORE"),
    (TileAllocationFault, block("TLOAD", "FP16", "B.DATR Layout=ND2M16, DataType=DTYPE_NONE",
                                dim_lines(8, 17), "B.IOR a0, a1", iot(dst="T", size=5)),
     "16 valid rows"),
    (TileAllocationFault, block("TLOAD", "FP32", "B.DATR Layout=ND2N8, DataType=DTYPE_NONE",
                                dim_lines(64, 64), "B.IOR a0, a1", iot(dst="T", size=5)),
     "TileCubeRequiredBytes"),
]  # fmt: skip


@pytest.mark.parametrize("cls, text, fragment", FAULTS, ids=[f[2] for f in FAULTS])
def test_every_cube_rule_faults_without_effect(cls, text, fragment) -> None:  # type: ignore[no-untyped-def]
    rig, _ = _setup()
    for pe in range(rig.pes):
        rig.m.set_gpr("a0", 0x40000, pe=pe)
        rig.m.set_gpr("a1", 64, pe=pe)
        rig.m.set_gpr("s7", 0, pe=pe)  # FP19 scale 0 is not a positive normal
        rig.m.set_gpr("s6", sf.quant_param(127 << 10), pe=pe)  # scale 1.0: a legal word
    f = rig.fault(text, cls)
    assert fragment in f.rule, f.rule


def test_accumulator_selector_must_differ_from_the_destination_hand() -> None:
    """``BundleMatrixAccumulatorDestinationIndicesDistinct`` compares C's 6-bit selector
    with D's hand code: C = T#1 (selector 0) with D -> T (hand 0) is illegal, with D -> U
    legal."""
    rig, _ = _setup()
    rig.run(matrix("TMATMUL", D.FP16, (16, 16, 32), ["T#1", "N#1"], [("T", 5)]))  # C: T#1
    acc = matrix("TMATMUL_ACC", D.FP16, (16, 16, 32), ["T#1", "T#2", "N#1"], [("T", 5)])
    f = rig.fault(acc, TileLegalityFault)
    assert "BundleMatrixAccumulatorDestinationIndicesDistinct" in f.rule
    rig.run(acc.replace("->T<2KB>", "->U<2KB>"))


def test_undefined_accumulator_is_rejected_without_effect() -> None:
    rig, _ = _setup()
    t = rig.m.state.queues[1][0]  # U#1, the C of the ACC bundle
    d = t.definedness().copy()
    d[2, 3, 4] = False
    rig.m.state.queues[1][0] = type(t)(
        t.dtype, t.rows, t.cols, t.valid_rows, t.valid_cols, t.layout, t.mask, t.capacity,
        t.payload, d, False, t.serial,
    )  # fmt: skip
    f = rig.fault(ACC, TileLegalityFault)
    assert "undefined" in f.rule
