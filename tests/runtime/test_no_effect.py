"""No effect on rejection: for every fault kind, a full-machine snapshot taken before the
faulting bundle equals the one after it (GM, every PE's GPRs, the four queues with every
tile's descriptor, payload and definedness, per-PE capacity use, per-PE status).

The machine is deliberately busy before each fault: tiles in several hands with mixed
masks and padding kinds, nonzero sticky status, distinct per-PE GPRs and GM contents.
``test_atomicity.py`` already checks one program per fault class on a quiet machine;
here every class gets several programs across operation families, the ADR 0083
data-dependent rejections are covered one by one, and the earlier bundles of a program
stay committed while the faulting one leaves nothing behind.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.backend.asm import parse
from ptoc.backend.encoding import encode
from ptoc.runtime import (
    BundleControlFault,
    DataAlignmentFault,
    DataPageFault,
    IllegalInstructionFault,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
    UnsupportedOperation,
)

from . import _progs as P
from ._progs import D, Rig, block, dim_lines, iot


def f32(*xs: float) -> list[int]:
    return [int(v) for v in np.array(xs, np.float32).view(np.uint32)]


def busy(**cfg: int) -> Rig:
    """A machine with state everywhere: T#1 S32 2x4 (T#2 its FP32 sibling), U#1 a
    Max-padded TADD result on mask 1100, M#1 a predicate, per-PE GPRs and status."""
    rig = Rig(**cfg)
    rig.run(rig.load(np.arange(8, dtype=np.uint64).reshape(2, 4) + 1, D.FP32, hand="T"))
    rig.run(rig.load(np.arange(8, dtype=np.uint64).reshape(2, 4) + 100, D.S32, hand="T"))
    rig.run(rig.load(np.array([f32(1, 2, 3, 4)] * 2, np.uint64), D.FP32, hand="N"))
    rig.run(rig.load(np.array([f32(5, 6, 7, 8)] * 2, np.uint64), D.FP32, hand="N"))
    rig.run(
        block(
            "TADD",
            "FP32",
            "B.DATR Max",
            dim_lines(4, 2),
            iot("N#2", "N#1", dst="U", size=1, mask="1100"),
        )
    )
    rig.run(
        block("TCMP", "S32", "B.DATR LT", dim_lines(4, 2), iot("T#1", "T#1", dst="M", size=1))
    )
    for pe in range(4):
        rig.m.set_gpr("a0", 0x100 * (pe + 1), pe=pe)
        rig.m.set_gpr("a1", 16, pe=pe)
        rig.m.set_gpr("s0", pe * 7 + 3, pe=pe)
    rig.m.state.status[:] = [1, 0, 16, 6]
    rig.m.load_gm(0x8000, bytes(range(256)))
    return rig


TADD = block("TADD", "S32", dim_lines(4, 2), iot("T#1", "T#1", dst="U", size=1))

#: (fault class, program) pairs; each runs on a fresh busy machine
CASES: list[tuple[type[MachineFault], str]] = [
    # ---------------------------------------------------------------- TileLegality
    (TileLegalityFault, TADD.replace("T#1, T#1", "T#1, T#9")),  # empty queue position
    (TileLegalityFault, TADD.replace("T#1, T#1", "U#1, U#1")),  # mask 1100 does not cover
    (TileLegalityFault, TADD.replace("T#1, T#1", "T#1, T#2")),  # S32 vs FP32
    (TileLegalityFault, TADD.replace("TADD, S32", "TADD, HiF8")),  # unsupported DataType
    (TileLegalityFault, TADD.replace("B.DIM zero, 4, ->LB0\n", "")),  # missing LB0
    (TileLegalityFault, TADD.replace("zero, 2, ->LB1", "zero, 0, ->LB1")),  # explicit zero
    (TileLegalityFault, TADD.replace("BSTOP", "B.IOR a0\nBSTOP")),
    (TileLegalityFault, TADD.replace("BSTOP", "B.IOS S0, mask=1111\nBSTOP")),
    (
        TileLegalityFault,
        TADD.replace("BSTOP", "B.DATR {NORM, FP64, Zero, LT, Default, 0, 0}\nBSTOP"),
    ),
    (TileLegalityFault, TADD.replace("mask=1111, last", "mask=1111\nB.IOT mask=1000, last")),
    (TileLegalityFault, TADD.replace("T#1, T#1", "M#1, M#1")),  # predicate as numeric
    (
        TileLegalityFault,
        block("TDIV", "S32", dim_lines(4, 2), iot("T#1", "M#1", dst="U", size=1)),
    ),  # predicate divisor
    (
        TileLegalityFault,
        block("TSHL", "FP32", dim_lines(4, 2), iot("T#2", "T#2", dst="U", size=1)),
    ),
    (
        TileLegalityFault,
        block(
            "TSEL",
            "S32",
            dim_lines(4, 2),
            iot("T#1", "T#1", last=False),
            iot("T#1", dst="U", size=1),
        ),
    ),
    (
        TileLegalityFault,
        block(
            "TCVT",
            "S32",
            "B.DATR {NORM, FP32, Zero, EQ, Default, 0, 1}",
            dim_lines(4, 2),
            iot("T#1", dst="U", size=2),
        ),
    ),
    (TileLegalityFault, block("TROWSUM", "S32", dim_lines(4, 1), iot("T#1", dst="U", size=1))),
    (
        TileLegalityFault,
        block(
            "TLOAD", "S32", "B.DATR Max", dim_lines(4, 2), "B.IOR a0, a1", iot(dst="U", size=1)
        ),
    ),
    (TileLegalityFault, block("TSTORE", "S32", dim_lines(8, 2), "B.IOR a0, a1", iot("T#1"))),
    (
        TileLegalityFault,
        block("TEXPANDS", "TF32", dim_lines(4), "B.IOR s0", iot(dst="U", size=1)),
    ),  # invalid TF32 scalar encoding
    # ---------------------------------------------------------------- TileAllocation
    (
        TileAllocationFault,
        block("TEXPANDS", "S32", dim_lines(64, 4), "B.IOR s0", iot(dst="U", size=1)),
    ),
    (
        TileAllocationFault,
        block("TEXPANDS", "S32", dim_lines(4, 1, 3), "B.IOR s0", iot(dst="U", size=1)),
    ),  # Col 3: no legal Rows
    # ---------------------------------------------------------------- BundleControl
    (BundleControlFault, TADD.replace("BSTOP", "B.DATR Max\nB.DATR Max\nBSTOP")),
    (BundleControlFault, TADD.replace("BSTOP", "B.DIM zero, 4, ->LB0\nBSTOP")),
    (BundleControlFault, TADD.replace("BSTOP", "C.B.DIMI 2, ->LB1\nBSTOP")),
    (BundleControlFault, TADD.replace("BSTOP", "B.IOT T#1, mask=1111\nBSTOP")),
    (
        BundleControlFault,
        block("TEXPANDS", "S32", dim_lines(4), "B.IOR s0", "B.IOR s0", iot(dst="U", size=1)),
    ),
    (BundleControlFault, TADD.replace("mask=1111, last", "mask=1111")),  # never closed
    (BundleControlFault, TADD.replace("BSTOP", "addi zero, 1, ->a0\nBSTOP")),
    (
        BundleControlFault,
        block("TDIVS", "S32", dim_lines(4, 2), iot("T#1", dst="U", size=1), "B.IOR zero"),
    ),  # integer zero scalar divisor
    (BundleControlFault, "B.DIM zero, 4, ->LB0\n"),  # a header command outside any block
    (BundleControlFault, P.std("B.IOR a0")),
    # ---------------------------------------------------------------- unsupported
    (TileLegalityFault, block("TIMG2COL", "S32", dim_lines(4), iot("T#1", dst="U", size=1))),
    (
        UnsupportedOperation,
        block("MGATHER", "S32", dim_lines(4), "B.IOR a0", iot("T#1", dst="U", size=1)),
    ),
    (TileLegalityFault, block("TPREFETCH", "S32", dim_lines(4), "B.IOR a0", iot("T#1"))),
    (
        BundleControlFault,
        "BSTART.TMATMUL FP16\nB.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n",
    ),  # no B.FPATR
    # ---------------------------------------------------------------- the CUBE preflight
    (
        TileLegalityFault,
        "BSTART.TMATMUL FP16\nB.FPATR 0, 0, 0, 0, 0, 1, 0, 0, 0\n"
        "B.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n",
    ),  # RowMaxInit without RowMaxEn
    (
        TileLegalityFault,
        "BSTART.TMATMUL FP16\nB.FPATR 0, 0, 0, 0, 0, 0, 0, 1, 0\n"
        "B.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n",
    ),  # TransA of a Local primary
    (
        TileLegalityFault,
        "BSTART.TGEMV FP16\nB.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 0\n"
        "B.DIM zero, 2, ->LB0\nB.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n",
    ),  # M != 1
    (
        TileLegalityFault,
        "BSTART.TMATMUL FP16\nB.FPATR 0, 0, 0, 0, 0, 0, 0, 0, 0\n"
        "B.IOT T#1, T#2, mask=1111, last, ->U<128B>\nBSTOP\n",
    ),  # T#1 is not a CUBE tile
    (
        TileLegalityFault,
        block(
            "TLOAD",
            "S32",
            "B.DATR Layout=ND2M16, DataType=DTYPE_NONE",
            dim_lines(4, 2, 4),
            "B.IOR a0, a1",
            iot(dst="U", size=1),
        ),
    ),
    (
        TileAllocationFault,
        block(
            "TLOAD",
            "S32",
            "B.DATR Layout=ND2N8, DataType=DTYPE_NONE",
            dim_lines(64, 64),
            "B.IOR a0, a1",
            iot(dst="U", size=1),
        ),
    ),
    # ---------------------------------------------------------------- Shared tiles
    (
        TileLegalityFault,
        block("TLOAD", "S32", dim_lines(4), "B.IOR a0, a1", "B.IOS mask=1111, ->S3<1>"),
    ),  # a Shared TLOAD names LB1 and LB2
    (
        TileLegalityFault,
        block("TLOAD", "S32", dim_lines(4, 2, 4), "B.IOR a0, a1", "B.IOS S3, mask=1111"),
    ),  # a source B.IOS
    (
        BundleControlFault,
        block(
            "TLOAD",
            "S32",
            dim_lines(4, 2, 4),
            "B.IOR a0, a1",
            "B.IOS mask=1111, ->S3<1>",
            "B.IOS mask=1111, ->S3<1>",
        ),
    ),  # one register twice
    (
        DataPageFault,
        block(
            "TLOAD", "S32", dim_lines(4, 32, 4), "B.IOR a2, a1", "B.IOS mask=1111, ->S3<1KB>"
        ).replace("BSTART.TLOAD", P.std(*P.const_lines("a2", P.GM_SIZE - 64)) + "BSTART.TLOAD"),
    ),  # every PE's quarter is probed before the register changes
    (
        UnsupportedOperation,
        block("TSTORE", "S32", "B.DATR Layout=ND2DN", "B.IOS S3, mask=1111"),
    ),  # Shared registers are RowMajor: a ColumnMajor read of S3 is not modelled
    (
        TileLegalityFault,
        block("TSTORE", "S32", "B.IOR a0, a1", "B.IOS S3, mask=1100"),
    ),  # Function 1 stores all four PEs (SharedStorePEMaskLegal)
    (
        TileLegalityFault,
        "BSTART.TSTORE.SPART S32\nB.IOR a0, a1\nB.IOS S3, mask=1100\nB.IOT T#1, mask=1100, "
        "last\nBSTOP\n",
    ),  # a Shared TSTORE binds no B.IOT
    (
        DataPageFault,
        P.std(*P.const_lines("a2", P.GM_SIZE - 4))
        + "BSTART.TSTORE.SPART S32\nB.DIM zero, 4, ->LB0\nB.IOR a2, a1\n"
        "B.IOS S3, mask=1000\nBSTOP\n",
    ),  # PE0's quarter of the undefined-register words reaches past GM
    (
        TileLegalityFault,
        "BSTART.TMOV.L2S.PUBLISH S32\nB.IOS mask=1111, ->S3<64KB>\nB.IOT T#1, mask=1111, "
        "last\nBSTOP\n",
    ),  # the B.IOS capacity is the Local source's
    (
        BundleControlFault,
        "BSTART.TMOV.L2S.INSERT S32\nB.IOR a0, zero\nB.IOS mask=1111, ->S3<128B>\n"
        "B.IOT T#1, mask=1111, last\nBSTOP\n",
    ),  # TMOV consumes no GPR (BundleOperationScalarBindingSchemaLegal)
    (
        TileLegalityFault,
        "BSTART.TMOV.S2L.BROADCAST S32\nB.IOS S3, mask=1111\nB.IOT mask=1111, last, "
        "->U<128B>\nBSTOP\n",
    ),  # a broadcast needs a published register
    # ---------------------------------------------------------------- memory
    (
        DataPageFault,
        block("TSTORE", "S32", "B.IOR a2, a1", iot("T#1")).replace(
            "BSTART.TSTORE", P.std(*P.const_lines("a2", P.GM_SIZE - 16)) + "BSTART.TSTORE"
        ),
    ),
    (
        DataPageFault,
        block("TLOAD", "S32", dim_lines(4, 2), "B.IOR a2, a1", iot(dst="U", size=1)).replace(
            "BSTART.TLOAD", P.std("lui 0x7ffff, ->a2") + "BSTART.TLOAD"
        ),
    ),
    (
        DataAlignmentFault,
        block("TSTORE", "S32", "B.IOR a2, a1", iot("T#1")).replace(
            "BSTART.TSTORE", P.std(*P.const_lines("a2", 0x9002)) + "BSTART.TSTORE"
        ),
    ),
    (
        DataAlignmentFault,
        block("TLOAD", "FP64", dim_lines(2, 2), "B.IOR a2, a1", iot(dst="U", size=1)).replace(
            "BSTART.TLOAD", P.std(*P.const_lines("a2", 0x9004)) + "BSTART.TLOAD"
        ),
    ),
]


def _split_prefix(text: str) -> tuple[str, str]:
    """(leading scalar blocks, the last block): the prefix commits, the last must fault."""
    i = text.rfind("BSTART.STD FALL")
    if i < 0 or text.find("BSTART.", i + 5) < 0:
        return "", text
    j = text.find("BSTOP\n", i) + len("BSTOP\n")
    return text[:j], text[j:]


@pytest.mark.parametrize(
    "cls, text", CASES, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(CASES)]
)
def test_no_effect_for_every_fault_kind(cls: type[MachineFault], text: str) -> None:
    rig = busy()
    prefix, last = _split_prefix(text)
    if prefix:
        rig.run(prefix)
    f = rig.fault(last, cls)
    assert f.bundle is not None and f.rule


def test_every_fault_kind_is_represented() -> None:
    kinds = {c for c, _ in CASES}
    assert kinds >= {
        TileLegalityFault,
        TileAllocationFault,
        BundleControlFault,
        UnsupportedOperation,
        DataPageFault,
        DataAlignmentFault,
    }


@pytest.mark.parametrize("mutate", ["dtype", "lb", "selector", "size", "gpr"])
def test_illegal_instruction_encodings_have_no_effect(mutate: str) -> None:
    """Reserved field encodings in a binary: BSTART DataType, C.B.DIMI LoopNest 3, a
    reserved TEPL selector, B.IOT SizeCode 11..15, a GPR selector >= 24, PEMode none."""
    rig = busy()
    text = TADD.replace("B.DIM zero, 2, ->LB1", "C.B.DIMI 2, ->LB1")
    data = bytearray(encode(parse(text)))
    words = []
    pos = 0
    while pos < len(data):
        low = data[pos] | data[pos + 1] << 8
        n = 4 if low & 1 else 2
        words.append((pos, n))
        pos += n
    (bst, _), (dim, _), (cdimi, _), (iot_, _), _ = words
    w32 = lambda off: int.from_bytes(data[off : off + 4], "little")  # noqa: E731

    def put(off: int, value: int, n: int = 4) -> None:
        data[off : off + n] = value.to_bytes(n, "little")

    if mutate == "dtype":
        put(bst, (w32(bst) & 0x07FFFFFF) | (21 << 27))
    elif mutate == "lb":
        put(cdimi, (int.from_bytes(data[cdimi : cdimi + 2], "little") | 0xC000), 2)
    elif mutate == "selector":
        put(bst, (w32(bst) & ~(0x7F << 20)) | (0x05 << 20))  # TEPL 0/5 is reserved
    elif mutate == "size":
        put(iot_, (w32(iot_) & ~(0xF << 15)) | (12 << 15))
    else:
        put(dim, (w32(dim) & ~(0x1F << 15)) | (27 << 15))  # B.DIM RegSrc 27
    before = rig.m.snapshot()
    with pytest.raises((IllegalInstructionFault, UnsupportedOperation)):
        rig.m.run(bytes(data))
    assert rig.m.snapshot() == before


def test_fault_midway_keeps_earlier_bundles_and_skips_later_ones() -> None:
    rig = busy()
    good = block("TEXPANDS", "S32", dim_lines(4), "B.IOR s0", iot(dst="N", size=1))
    bad = TADD.replace("T#1, T#1", "T#1, T#9")
    after = good.replace("->N", "->M")
    before_n = len(rig.m.state.queues[3])
    with pytest.raises(TileLegalityFault) as info:
        rig.run(good + bad + after)
    assert info.value.bundle.index == 1
    assert len(rig.m.state.queues[3]) == before_n + 1  # the first bundle committed
    assert rig.m.tile("M#1").predicate  # the third never ran: M#1 is still the predicate
    snap = rig.m.snapshot()
    with pytest.raises(TileLegalityFault):
        rig.run(bad)
    assert rig.m.snapshot() == snap


def test_scalar_block_fault_publishes_no_gpr() -> None:
    """A scalar block that fails part-way (a temporary-queue source never pushed, after
    two good instructions and a push) leaves every GPR and the queues unchanged."""
    rig = busy()
    rig.fault(
        P.std("addi zero, 5, ->a3", "addi a3, 1, ->a4", "lui 1, ->r30", "add r25, a3, ->a5"),
        IllegalInstructionFault,
    )


# =========================================================================== ADR 0083


def _adr_rejections() -> list[str]:
    return [
        "tmrgsort-unsorted",
        "tgather-index",
        "tgather-negative",
        "tscatter-duplicate",
        "tscatter-range",
        "tquant-zp",
        "tquant-mult",
        "tdequant-mult",
        "tsort-width",
        "tsort-flag",
        "tpart-coverage",
        "ttrans-dims",
        "tquant-capacity",
        "tsort-second-destination",
    ]


def _adr_program(kind: str, rig: Rig) -> str:
    u = lambda rows: np.array(rows, np.uint64)  # noqa: E731
    if kind == "tmrgsort-unsorted":
        rig.run(rig.load(u([f32(3, 1)]), D.FP32) + rig.load(u([f32(2)]), D.FP32))
        return block("TMRGSORT", "FP32", iot("T#2", "T#1", dst="U", size=1))
    if kind in ("tgather-index", "tgather-negative"):
        bad = 3 if kind == "tgather-index" else 0xFFFFFFFF
        rig.run(rig.load(u([[1, 2], [3, 4], [5, 6]]), D.S32) + rig.load(u([[0, bad]]), D.S32))
        return block("TGATHER", "S32", dim_lines(2), iot("T#2", "T#1", dst="U", size=1))
    if kind in ("tscatter-duplicate", "tscatter-range"):
        idx = [[0, 1], [0, 0]] if kind == "tscatter-duplicate" else [[0, 1], [2, 0]]
        rig.run(rig.load(u([[1, 2], [3, 4]]), D.S32) + rig.load(u(idx), D.S32))
        return block("TSCATTER", "S32", dim_lines(2, 2), iot("T#2", "T#1", dst="U", size=1))
    if kind.startswith("tquant"):
        rig.run(rig.load(u([f32(1, float("nan"))]), D.FP32))
        rig.m.set_gpr("a4", 0x3F800000)
        rig.m.set_gpr("a5", 300 if kind == "tquant-zp" else 0)
        if kind == "tquant-mult":
            rig.m.set_gpr("a4", 0xBF800000, pe=3)
        size = 10 if kind == "tquant-capacity" else 1
        return block(
            "TQUANT",
            "FP32",
            "B.DATR S8",
            dim_lines(2),
            "B.IOR a4, a5",
            iot("T#1", dst="U", size=size),
        )
    if kind == "tdequant-mult":
        rig.run(rig.load(u([[1, 2]]), D.S8))
        rig.m.set_gpr("a4", 0x7F800000)
        return block(
            "TDEQUANT",
            "S8",
            "B.DATR FP32",
            dim_lines(2),
            "B.IOR a4",
            iot("T#1", dst="U", size=1),
        )
    if kind.startswith("tsort"):
        rig.run(rig.load(u([[0x7F800001, *f32(1)]]), D.FP32))
        width = "B.DIM zero, 65, ->LB0" if kind == "tsort-width" else "B.DIM zero, 2, ->LB0"
        rig.m.set_gpr("a4", 2 if kind == "tsort-flag" else 0)
        size2 = 10 if kind == "tsort-second-destination" else 1
        return block(
            "TSORT",
            "FP32",
            width,
            "B.IOR a4",
            iot("T#1", dst="U", size=1, last=False),
            iot(dst="M", size=size2),
        )
    if kind == "tpart-coverage":
        rig.run(rig.load(u([f32(1, 2)]), D.FP32) + rig.load(u([f32(1), f32(2)]), D.FP32))
        return block("TPARTADD", "FP32", dim_lines(2, 2), iot("T#2", "T#1", dst="U", size=1))
    if kind == "ttrans-dims":
        rig.run(rig.load(u([[1, 2, 3]]), D.S32))
        return block("TTRANS", "S32", dim_lines(3), iot("T#1", dst="U", size=1))
    raise KeyError(kind)


@pytest.mark.parametrize("kind", _adr_rejections())
def test_no_effect_for_every_adr_rejection(kind: str) -> None:
    """Each data-dependent or allocation rejection of decisions 133-143 (several of these
    sources would also raise NV) leaves the busy machine bit-for-bit unchanged."""
    rig = busy(capacity=8192)
    text = _adr_program(kind, rig)
    cls = (
        TileAllocationFault
        if kind in ("tquant-capacity", "tsort-second-destination")
        else TileLegalityFault
    )
    rig.fault(text, cls)


@pytest.mark.parametrize("hands, depth, cap", [(2, 16, 262144), (4, 2, 1024), (4, 16, 640)])
def test_allocation_faults_have_no_effect(hands: int, depth: int, cap: int) -> None:
    """Missing destination hand, capacity exhausted after eviction, TSize too small for
    the derived shape: Fault_TileAllocation with nothing published."""
    rig = Rig(hands=hands, depth=depth, capacity=cap)
    rig.run(rig.load(np.ones((2, 4), np.uint64), D.S32))
    rig.m.state.status[:] = [1, 2, 4, 8]
    rig.m.set_gpr("a4", 3)

    def expands(hand: str, size: int, vr: int = 1) -> str:
        return block("TEXPANDS", "S32", dim_lines(4, vr), "B.IOR a4", iot(dst=hand, size=size))

    if hands == 2:
        f = rig.fault(expands("M", 1), TileAllocationFault)
        assert "hand M" in f.rule
        return
    if depth == 2:
        rig.run(expands("U", 3))  # 128 + 512 bytes used per PE
        rig.fault(expands("U", 3), TileAllocationFault)  # no eviction yet: 1152 > 1024
        rig.run(expands("T", 1))  # T#2 (the load) stays: depth 2, nothing released
        return
    rig.fault(expands("U", 4), TileAllocationFault)  # 128 + 1024 > 640
    rig.fault(expands("U", 1, vr=64), TileAllocationFault)  # 64 rows of 4 in 128 bytes


COMPUTE = [
    block("TADD", "S32", dim_lines(4, 2), iot("T#1", "T#1", dst="U", size=1)),
    block("TROWEXPANDMIN", "FP32", dim_lines(4, 2), iot("T#2", "N#9", dst="U", size=1)),
    block("TTRANS", "S32", dim_lines(2, 4), iot("T#1", dst="U", size=1)),
    block("TROWSUM", "FP32", dim_lines(4, 2), iot("T#2", dst="U", size=1)),
    block("TCVT", "S32", "B.DATR U32", dim_lines(4, 2), iot("T#1", dst="U", size=1)),
    block(
        "TSORT",
        "FP32",
        "B.DIM zero, 4, ->LB0",
        iot("T#2", dst="U", size=1, last=False),
        iot(dst="U", size=1),
    ),
]


@pytest.mark.parametrize("text", COMPUTE)
def test_compute_bundles_have_no_gm_effect(text: str) -> None:
    """Compute operations (memory_effects: none) change neither GM nor GPRs."""
    rig = busy()
    if "N#9" in text:
        rig.run(rig.load(np.array([f32(1), f32(2)], np.uint64), D.FP32, col=1, hand="N"))
        text = text.replace("N#9", "N#1")
    gm, gpr = rig.m.state.gm.copy(), rig.m.state.gpr.copy()
    rig.run(text)
    assert np.array_equal(rig.m.state.gm, gm) and np.array_equal(rig.m.state.gpr, gpr)
