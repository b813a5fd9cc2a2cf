"""The Shared TLSU forms: TSTORE of a Shared register (Function 1 on all PEs,
``TSTORE.SPART`` on any subset), TMOV Local -> Shared (insert, insert and publish) and
Shared -> Local (broadcast, extract).

The expected results come from a numpy statement of the ASL semantics written here
(``asl/tile/model/memory/shared-movement.asl``): element ``e`` of a Rows x Col RowMajor
register of capacity ``C`` lies in quarter ``(e * bits // 8) * 4 // C``; PE ``q`` writes
and stores quarter ``q``; a quarter no write initialized reads as the register number
XOR the element index. Every rule is checked with a full-machine snapshot: a rejected
bundle leaves no trace.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptoc.backend.isa import DataType as D
from ptoc.backend.isa import info
from ptoc.backend.isa.fields import Hand
from ptoc.backend.program import TileRef
from ptoc.runtime import (
    BundleControlFault,
    DataPageFault,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
    UnsupportedOperation,
)

from ._progs import Rig, block, const_lines, dim_lines, std
from .cube_rig import shared_load

MASKS = ("1000", "0100", "0010", "0001", "1100", "1110", "1111")
OUT = 0x20000  # a GM window every PE addresses alike (below the per-PE copies)


# --------------------------------------------------------------------------- the model


def quarter_of(rows: int, cols: int, bits: int, cap: int) -> np.ndarray:
    """``SharedTileElementRegion`` of every element, (Rows, Col)."""
    e = np.arange(rows * cols).reshape(rows, cols)
    return (e * bits // 8) * 4 // cap


def undefined_word(tid: int, rows: int, cols: int, bits: int) -> np.ndarray:
    """``UndefinedSharedTileWord`` truncated to the element width, (Rows, Col)."""
    e = np.arange(rows * cols, dtype=np.uint64).reshape(rows, cols)
    return (e ^ np.uint64(tid)) & np.uint64((1 << bits) - 1)


def pes_of(mask: str) -> list[int]:
    return [q for q in range(4) if mask[q] == "1"]


def register_model(
    copies: np.ndarray, rows: int, cols: int, bits: int, cap: int, load_mask: str, tid: int
) -> np.ndarray:
    """The raw word every element of a Shared TLOAD of per-PE ``copies`` (P, VR, VC)
    reads as afterwards: its owner's copy in a loaded quarter, else undefined."""
    q = quarter_of(rows, cols, bits, cap)
    out = undefined_word(tid, rows, cols, bits)
    _, vr, vc = copies.shape
    for pe in pes_of(load_mask):
        own = np.zeros((rows, cols), bool)
        own[:vr, :vc] = q[:vr, :vc] == pe
        out[own] = copies[pe][own[:vr, :vc]]
    return out


def gm_bits(rig: Rig, addr: int, dt: D, vr: int, vc: int, stride: int) -> np.ndarray:
    """The raw elements of a vr x vc strided region of GM (4-bit: nibbles)."""
    raw = np.frombuffer(bytes(rig.m.state.gm[addr : addr + stride * vr + 8]), np.uint8)
    out = np.zeros((vr, vc), np.uint64)
    bits = info(dt).bits
    eb = max(1, bits // 8)
    for r in range(vr):
        for c in range(vc):
            if bits == 4:
                b = int(raw[r * stride + c // 2])
                out[r, c] = (b >> 4) if c & 1 else b & 0xF
            else:
                a = r * stride + c * eb
                out[r, c] = int.from_bytes(raw[a : a + eb].tobytes(), "little")
    return out


def tile_bits(rig: Rig, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(raw words, definedness) of a Local tile's whole storage, (P, Rows, Col)."""
    t = rig.m.state.lookup(TileRef(Hand[name[0]], int(name[2:])))
    assert t.dtype is not None
    raw = np.ascontiguousarray(t.payload)
    u = raw.view(np.dtype(f"u{raw.dtype.itemsize}")).astype(np.uint64)
    if info(t.dtype).bits == 4:
        u &= np.uint64(0xF)
    return u, t.definedness()


def store_text(
    tid: int, mask: str, dt: D, *, partial: bool, dims: str = "", stride: int | None = None
) -> str:
    """A Shared TSTORE to ``OUT`` (the same base on every PE)."""
    ior = ""
    pre = ""
    if stride is not None:
        pre = std(*const_lines("a4", OUT), *const_lines("a5", stride))
        ior = "B.IOR a4, a5\n"
    word = "BSTART.TSTORE.SPART" if partial else "BSTART.TSTORE"
    return pre + f"{word} {dt.name}\n{dims}{ior}B.IOS S{tid}, mask={mask}\nBSTOP\n"


def fault(rig: Rig, text: str, cls: type[MachineFault]) -> MachineFault:
    """Run the scalar prefix of ``text`` (it commits), then expect its tile bundle to
    fault with ``cls`` and leave the machine unchanged."""
    i = text.rfind("BSTART.STD FALL")
    if i >= 0:
        j = text.index("BSTOP\n", i) + len("BSTOP\n")
        rig.run(text[:j])
        text = text[j:]
    return rig.fault(text, cls)


def cap_code(cap: int) -> str:
    """The B.IOS/B.IOT size spelling of a capacity (``128B`` .. ``64KB``)."""
    return f"{cap}B" if cap < 1024 else f"{cap // 1024}KB"


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize(
    "dt, vr, vc, col",
    [(D.FP16, 16, 32, 32), (D.FP32, 3, 5, 8), (D.S8, 7, 64, 64), (D.U64, 2, 2, 2),
     (D.S4X2, 8, 16, 16), (D.E4M3, 2, 64, 64), (D.BF16, 1, 1, 1)],
)  # fmt: skip
def test_tload_then_tstore_gives_each_owner_s_bytes(dt: D, vr: int, vc: int, col: int) -> None:
    """Per-PE copies loaded into S9, stored back by Function 1 to one region every PE
    addresses alike: element (r, c) holds the copy of the PE owning its quarter."""
    rng = np.random.default_rng(11)
    rig = Rig()
    bits = info(dt).bits
    copies = rng.integers(0, 1 << min(bits, 32), (4, vr, vc)).astype(np.uint64)
    rig.run(shared_load(rig, copies, dt, 9, col=col))
    rec = rig.m.shared(9)
    assert rec is not None
    stride = (col * bits + 7) // 8
    rig.run(store_text(9, "1111", dt, partial=False, stride=stride))
    model = register_model(copies, rec.rows, col, bits, rec.capacity, "1111", 9)
    assert (gm_bits(rig, OUT, dt, vr, vc, stride) == model[:vr, :vc]).all()


def test_omitted_b_ior_stores_at_zero_with_the_dense_stride() -> None:
    rig = Rig()
    copies = np.arange(4 * 2 * 2, dtype=np.uint64).reshape(4, 2, 2) + 1
    rig.run(shared_load(rig, copies, D.U64, 7, col=2))
    rig.run(store_text(7, "1111", D.U64, partial=False))
    rec = rig.m.shared(7)
    assert rec is not None
    model = register_model(copies, rec.rows, 2, 64, rec.capacity, "1111", 7)
    assert (gm_bits(rig, 0, D.U64, 2, 2, 16) == model[:2, :2]).all()


def test_tmov_local_to_shared_to_local_assembles_the_quarters() -> None:
    """Insert-and-publish takes quarter q from PE q's Local copy; a broadcast gives every
    PE the assembled tile, an extract of 1100 only quarters 0 and 1."""
    rng = np.random.default_rng(5)
    rig = Rig()
    copies = rng.integers(0, 1 << 16, (4, 16, 32)).astype(np.uint64)
    rig.run(rig.load(copies, D.FP16, hand="T"))
    cap = rig.m.tile("T#1").capacity
    rig.run(f"BSTART.TMOV.L2S.PUBLISH FP16\nB.IOS mask=1111, ->S3<{cap_code(cap)}>\n"
            "B.IOT T#1, mask=1111, last\nBSTOP\n")  # fmt: skip
    rec = rig.m.shared(3)
    assert rec is not None and rec.published and rec.alloc_mask == rec.init_mask == 15
    model = register_model(copies, rec.rows, 32, 16, cap, "1111", 3)
    rig.run(f"BSTART.TMOV.S2L.BROADCAST FP16\nB.IOS S3, mask=1111\n"
            f"B.IOT mask=1111, last, ->U<{cap_code(cap)}>\nBSTOP\n")  # fmt: skip
    words, defined = tile_bits(rig, "U#1")
    assert (words[:, :16, :32] == model[None, :16, :32]).all()
    assert defined[:, :16, :32].all()
    rig.run(f"BSTART.TMOV.S2L.EXTRACT FP16\nB.IOS S3, mask=1100\n"
            f"B.IOT mask=1100, last, ->N<{cap_code(cap)}>\nBSTOP\n")  # fmt: skip
    words, defined = tile_bits(rig, "N#1")
    q = quarter_of(rec.rows, 32, 16, cap)
    sel = q < 2
    for pe in (0, 1):
        assert (words[pe][sel] == model[sel]).all()
        assert (defined[pe] == sel).all()
    assert not defined[2:].any()  # PEs outside the mask hold nothing


# --------------------------------------------------------------------------- partial masks


def test_partial_masks_store_and_read_only_their_quarters() -> None:
    rng = np.random.default_rng(2)
    rig = Rig()
    copies = rng.integers(0, 1 << 8, (4, 8, 64)).astype(np.uint64)
    rig.run(shared_load(rig, copies, D.U8, 4, col=64, mask="1100"))
    rec = rig.m.shared(4)
    assert rec is not None and (rec.alloc_mask, rec.init_mask) == (0b1100, 0b1100)
    model = register_model(copies, rec.rows, 64, 8, rec.capacity, "1100", 4)
    q = quarter_of(rec.rows, 64, 8, rec.capacity)[:8, :64]
    rig.m.load_gm(OUT, bytes([0x5A]) * 512)
    # Function 1 refuses a partial mask; TSTORE.SPART stores exactly quarters 0 and 1
    fault(rig, store_text(4, "1100", D.U8, partial=False, stride=64), TileLegalityFault)
    rig.run(store_text(4, "1100", D.U8, partial=True, stride=64))
    got = gm_bits(rig, OUT, D.U8, 8, 64, 64)
    assert (got[q < 2] == model[:8, :64][q < 2]).all()
    assert (got[q >= 2] == 0x5A).all()
    # a store of an unallocated quarter writes the undefined-register word
    rig.run(store_text(4, "1110", D.U8, partial=True, stride=64))
    got = gm_bits(rig, OUT, D.U8, 8, 64, 64)
    assert (got[q == 2] == undefined_word(4, rec.rows, 64, 8)[:8, :64][q == 2]).all()
    assert (got[q == 3] == 0x5A).all()
    # an insert beyond the allocation mask is rejected without effect
    rig.run(rig.load(copies, D.U8, hand="T", col=64))
    size = cap_code(rec.capacity)
    f = rig.fault(f"BSTART.TMOV.L2S.INSERT U8\nB.IOS mask=1110, ->S4<{size}>\n"
                  "B.IOT T#1, mask=1110, last\nBSTOP\n", TileLegalityFault)  # fmt: skip
    assert "allocation mask" in f.rule


def test_an_extract_of_an_unallocated_register_reads_undefined_words() -> None:
    rig = Rig()
    rig.run("BSTART.TMOV.S2L.EXTRACT U16\nB.DIM zero, 64, ->LB0\nB.DIM zero, 64, ->LB2\n"
            "B.IOS S77, mask=1000\nB.IOT mask=1000, last, ->T<128B>\nBSTOP\n")  # fmt: skip
    assert rig.m.shared(77) is None  # a read never allocates
    words, defined = tile_bits(rig, "T#1")
    q = quarter_of(1, 64, 16, 128)
    assert (words[0][q == 0] == undefined_word(77, 1, 64, 16)[q == 0]).all()
    assert (defined[0] == (q == 0)).all() and not defined[1:].any()
    # columns 16..63 of the valid row are undefined: a consumer of them faults (D6)
    copy = block("TMOV", "U16", dim_lines(64, 1, 64), "B.IOT T#1, mask=1000, last, ->U<128B>")
    rig.fault(copy, TileLegalityFault)


# --------------------------------------------------------------------------- publication


def test_publish_rules() -> None:
    """An insert leaves a new register unpublished, so a broadcast is refused; an insert
    and publish of a subset completes it; a broadcast also needs mask 1111 and an all-PE
    allocation (an extract does not)."""
    rig = Rig()
    copies = np.arange(4 * 4 * 32, dtype=np.uint64).reshape(4, 4, 32) % 251
    rig.run(rig.load(copies, D.S8, hand="T", col=32))
    cap = cap_code(rig.m.tile("T#1").capacity)
    bcast = (f"BSTART.TMOV.S2L.BROADCAST S8\nB.IOS S{{t}}, mask={{m}}\n"
             f"B.IOT mask={{m}}, last, ->U<{cap}>\nBSTOP\n")  # fmt: skip
    rig.run(f"BSTART.TMOV.L2S.INSERT S8\nB.IOS mask=1111, ->S1<{cap}>\n"
            "B.IOT T#1, mask=1111, last\nBSTOP\n")  # fmt: skip
    rec = rig.m.shared(1)
    assert rec is not None and rec.fully_initialized and not rec.published
    assert "published" in rig.fault(bcast.format(t=1, m="1111"), TileLegalityFault).rule
    rig.run(f"BSTART.TMOV.L2S.PUBLISH S8\nB.IOS mask=1000, ->S1<{cap}>\n"
            "B.IOT T#1, mask=1000, last\nBSTOP\n")  # fmt: skip
    rec = rig.m.shared(1)
    assert rec is not None and rec.published
    rig.run(bcast.format(t=1, m="1111"))
    # a published register allocated on 1100 is extracted, never broadcast
    rig.run(f"BSTART.TMOV.L2S.PUBLISH S8\nB.IOS mask=1100, ->S2<{cap}>\n"
            "B.IOT T#1, mask=1100, last\nBSTOP\n")  # fmt: skip
    rig.fault(bcast.format(t=2, m="1100"), TileLegalityFault)
    rig.fault(bcast.format(t=2, m="1111"), TileLegalityFault)
    rig.run(bcast.format(t=2, m="1100").replace("BROADCAST", "EXTRACT"))


def test_zero_masks_are_strict_noops() -> None:
    rig = Rig()
    rig.noop("BSTART.TSTORE.SPART U8\nB.IOS S3, mask=0000\nBSTOP\n")
    rig.noop("BSTART.TMOV.L2S.PUBLISH U8\nB.IOS mask=0000, ->S3<128B>\n"
             "B.IOT T#1, mask=0000, last\nBSTOP\n")  # fmt: skip
    rig.noop("BSTART.TMOV.S2L.EXTRACT U8\nB.IOS S3, mask=0000\n"
             "B.IOT mask=0000, last, ->T<128B>\nBSTOP\n")  # fmt: skip


# --------------------------------------------------------------------------- every rule


def _setup() -> Rig:
    """S1: U8 8x64 on 1111 (published, 512 B); S2: U8 8x64 on 1100; T#2: U8 8x64 Local
    (512 B); T#1: an extract of S1 on 1100 (rows 4..7 undefined); N#1: U8 16x32 (512 B)."""
    rig = Rig()
    v = np.arange(8 * 64, dtype=np.uint64).reshape(8, 64) % 200
    rig.run(shared_load(rig, v, D.U8, 1, col=64))
    rig.run(shared_load(rig, v, D.U8, 2, col=64, mask="1100"))
    rig.run(rig.load(v, D.U8, hand="T", col=64))
    rig.run(rig.load(v.reshape(16, 32), D.U8, hand="N", col=32))
    rig.run("BSTART.TMOV.S2L.EXTRACT U8\nB.IOS S1, mask=1100\n"
            "B.IOT mask=1100, last, ->T<512B>\nBSTOP\n")  # fmt: skip
    return rig


ST = "BSTART.TSTORE U8\n{}B.IOS S1, mask=1111\nBSTOP\n"
SP = "BSTART.TSTORE.SPART U8\n{}B.IOS S1, mask=1000\nBSTOP\n"
INS = (
    "BSTART.TMOV.L2S.INSERT U8\n{}B.IOS mask=1111, ->S9<512B>\nB.IOT T#2, mask=1111, last\n"
    "BSTOP\n"
)
EXT = (
    "BSTART.TMOV.S2L.EXTRACT U8\n{}B.IOS S1, mask=1111\nB.IOT mask=1111, last, ->U<512B>\n"
    "BSTOP\n"
)

#: (fault, program, message fragment): one row per Shared TLSU rule
FAULTS = [
    # prelude (ExecuteBundleSharedTLSUOperation)
    (TileLegalityFault, "BSTART.TSTORE.SPART U8\nB.DIM zero, 1, ->LB0\nBSTOP\n",
     "exactly one effective B.IOS"),
    (TileLegalityFault, SP.format("B.IOS S2, mask=1000\n"), "exactly one effective B.IOS"),
    (TileLegalityFault, "BSTART.TMOV.L2S.PUBLISH U8\nB.IOT T#2, mask=1111, last\nBSTOP\n",
     "exactly one effective B.IOS"),
    (TileLegalityFault, EXT.replace("U8", "DTYPE_NONE").format(""), "DTYPE_NONE"),
    (BundleControlFault, ST.format("B.IOR a0, a1, zero, ->a2\n"),
     "BundleOperationScalarBindingSchemaLegal"),
    (BundleControlFault, INS.format("B.IOR a0\n"), "BundleOperationScalarBindingSchemaLegal"),
    (TileLegalityFault, ST.format("B.DATR Max\n"), "PadValue"),
    (TileLegalityFault, "BSTART.TMOV U8\nB.IOS S1, mask=1111\nB.IOT mask=1111, last, "
     "->U<512B>\nBSTOP\n", "no Shared form"),
    # TSTORE
    (TileLegalityFault, ST.replace("mask=1111", "mask=1100").format(""),
     "SharedStorePEMaskLegal"),
    (TileLegalityFault, "BSTART.TSTORE U8\nB.IOS mask=1111, ->S1<512B>\nBSTOP\n",
     "one source B.IOS"),
    (TileLegalityFault, SP.format("B.IOT T#1, mask=1000, last\n"), "no B.IOT"),
    (TileLegalityFault, ST.format(dim_lines(64, 8, 32) + "\n"), "ValidCol <= Col"),
    (TileLegalityFault, ST.replace("U8", "S8").format(""), "SharedTileReadSchemaLegal"),
    (TileLegalityFault, ST.format(dim_lines(64, 9) + "\n"), "valid region"),
    (TileLegalityFault, ST.format(dim_lines(64, 8, 128) + "\n"), "SharedTileReadSchemaLegal"),
    (TileLegalityFault, SP.replace("S1", "S99").format(dim_lines(4096, 1024, 4096) + "\n"),
     "MinimumTileCapacityBytesForShape"),
    (DataPageFault, std(*const_lines("a4", (1 << 20) - 32)) + SP.format("B.IOR a4\n"),
     "beyond"),
    (UnsupportedOperation, SP.replace("S1", "S99").format("B.DATR Layout=ND2DN\n"),
     "Shared tile read in layout"),
    # TMOV Local -> Shared
    (TileLegalityFault, INS.replace("T#2", "T#1").replace("1111", "1100").format(""),
     "undefined valid element"),
    (TileLegalityFault, INS.replace("512B", "1KB").format(""), "one capacity"),
    (TileLegalityFault, INS.replace("S9", "S2").format(""), "allocation mask"),
    (TileLegalityFault, INS.replace("T#2", "N#1").replace("S9", "S1").format(""),
     "keeps its descriptor"),
    (TileLegalityFault, INS.replace("mask=1111, ->S9<512B>", "S9, mask=1111").format(""),
     "BundleSharedTMOVLocalSchemaLegal"),
    (TileLegalityFault, INS.replace(", last", "").format(""),
     "BundleSharedTMOVLocalSchemaLegal"),
    (TileLegalityFault, INS.replace("B.IOT T#2, mask=1111, last",
                                    "B.IOT T#2, mask=1111, last, ->U<512B>").format(""),
     "source-only B.IOT"),
    # TMOV Shared -> Local
    (TileLegalityFault, EXT.replace("U8", "S8").format(""),
     "SharedTileReadSchemaLegalAtCapacity"),
    (TileLegalityFault, EXT.replace("->U<512B>", "->U<1KB>").format(""),
     "SharedTileReadSchemaLegalAtCapacity"),
    (TileLegalityFault, EXT.format(dim_lines(64, 9) + "\n"), "valid region"),
    (TileLegalityFault, EXT.format(dim_lines(64, 1, 32) + "\n"), "exceeds Col"),
    (TileLegalityFault, EXT.replace("B.IOS S1, mask=1111", "B.IOS mask=1111, ->S1<512B>")
     .format(""), "BundleSharedTMOVDestinationSchemaLegal"),
    (TileLegalityFault, EXT.replace("B.IOT mask=1111", "B.IOT T#1, mask=1111").format(""),
     "BundleSharedTMOVDestinationSchemaLegal"),
    (TileLegalityFault, EXT.replace("S1", "S2").replace("EXTRACT", "BROADCAST")
     .replace("1111", "1100").format(""), "BROADCAST"),
    (UnsupportedOperation, EXT.replace("S1", "S99").format("B.DATR Layout=ND2DN\n"),
     "Shared tile read in layout"),
]  # fmt: skip


@pytest.mark.parametrize("cls, text, fragment", FAULTS, ids=[f[2] for f in FAULTS])
def test_every_shared_tlsu_rule_faults_without_effect(
    cls: type[MachineFault], text: str, fragment: str
) -> None:
    f = fault(_setup(), text, cls)
    assert fragment in f.rule, f.rule


def test_a_first_write_beyond_a_pe_s_capacity_is_rejected() -> None:
    """D2: a Shared allocation is charged per PE in the Local budget; the first write that
    would exceed a PE's capacity is refused, a Local allocation beyond it as well."""
    rig = Rig(capacity=1024)
    v = np.arange(8 * 64, dtype=np.uint64).reshape(8, 64) % 200
    rig.run(rig.load(v, D.U8, hand="T", col=64))  # 512 B on every PE
    rig.run("BSTART.TMOV.L2S.INSERT U8\nB.IOS mask=1000, ->S1<512B>\n"
            "B.IOT T#1, mask=1000, last\nBSTOP\n")  # fmt: skip
    f = rig.fault("BSTART.TMOV.L2S.INSERT U8\nB.IOS mask=1100, ->S2<512B>\n"
                  "B.IOT T#1, mask=1100, last\nBSTOP\n", TileLegalityFault)  # fmt: skip
    assert "PE0 holding 1536 bytes" in f.rule
    rig.fault("BSTART.TMOV.S2L.EXTRACT U8\nB.IOS S1, mask=1000\n"
              "B.IOT mask=1000, last, ->U<512B>\nBSTOP\n", TileAllocationFault)  # fmt: skip


# --------------------------------------------------------------------------- property


DTYPES = [D.U8, D.S16, D.FP32, D.U64, D.S4X2, D.E4M3, D.BF16]


@st.composite
def cases(draw: st.DrawFn) -> tuple[D, int, int, int, str, str, str]:
    dt = draw(st.sampled_from(DTYPES))
    bits = info(dt).bits
    col = 1 << draw(st.integers(0, 6))
    cap_rows = max(1, 128 * 8 // (col * bits))
    vr = draw(st.integers(1, max(1, min(cap_rows, 8))))
    vc = draw(st.integers(1, col))
    masks = st.sampled_from(MASKS)
    return dt, vr, vc, col, draw(masks), draw(masks), draw(masks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), seed=st.integers(0, 2**31))
def test_shared_tlsu_matches_the_model(
    case: tuple[D, int, int, int, str, str, str], seed: int
) -> None:
    """A Shared TLOAD of mask m1 from per-PE copies, a TSTORE.SPART of mask m2 into a
    pre-filled window and a TMOV.S2L.EXTRACT of mask m3 agree with the numpy model:
    stored elements are the owner's copy or the undefined word, unstored bytes keep
    the fill, the Local tile holds the selected quarters on the selected PEs."""
    dt, vr, vc, col, m1, m2, m3 = case
    bits = info(dt).bits
    rng = np.random.default_rng(seed)
    rig = Rig()
    copies = rng.integers(0, 1 << min(bits, 63), (4, vr, vc), dtype=np.uint64)
    rig.run(shared_load(rig, copies, dt, 12, col=col, mask=m1))
    rec = rig.m.shared(12)
    assert rec is not None
    rows, cap = rec.rows, rec.capacity
    model = register_model(copies, rows, col, bits, cap, m1, 12)
    q = quarter_of(rows, col, bits, cap)
    stride = (col * bits + 7) // 8
    fill = 0xC3
    rig.m.load_gm(OUT, bytes([fill]) * (stride * vr + 8))
    before = gm_bits(rig, OUT, dt, vr, vc, stride)
    rig.run(store_text(12, m2, dt, partial=True, stride=stride))
    got = gm_bits(rig, OUT, dt, vr, vc, stride)
    stored = np.isin(q[:vr, :vc], pes_of(m2))
    want = model[:vr, :vc]
    assert (got[stored] == want[stored]).all()
    assert (got[~stored] == before[~stored]).all()  # a nibble store keeps its sibling
    rig.run(f"BSTART.TMOV.S2L.EXTRACT {dt.name}\nB.IOS S12, mask={m3}\n"
            f"B.IOT mask={m3}, last, ->U<{cap_code(cap)}>\nBSTOP\n")  # fmt: skip
    words, defined = tile_bits(rig, "U#1")
    sel = np.isin(q, pes_of(m3))
    written = np.zeros((rows, col), bool)
    written[:vr, :vc] = True
    loaded = np.isin(q, pes_of(m1))
    expect_defined = sel & (written | ~loaded)  # loaded padding stays undefined (D6)
    for pe in range(4):
        if pe in pes_of(m3):
            assert (defined[pe] == expect_defined).all()
            assert (words[pe][expect_defined] == model[expect_defined]).all()
        else:
            assert not defined[pe].any()
